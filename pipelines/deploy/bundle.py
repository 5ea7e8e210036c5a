"""`lakehouse bundle`: the task graph (`conf/jobs.yaml`) exported as a Databricks Asset Bundle.

The graph is the one source of truth: the job's tasks are its task groups
(`pipelines.core.task_groups`), each running `lakehouse-task --group <key>` from the
project's wheel, their `depends_on` follow from the tasks' dependencies, a `notify` task after
them delivers the notifications (`lakehouse-task --notify`) and a last `maintenance` task
compacts the tables. Before the bronze groups, a collect task per collector
that conf/jobs.yaml lists pulls into landing (`pipelines.deploy.collect_tasks`). The wheel
carries the default configuration, the catalogs and the suites (`pipelines.core.defaults`), so
a task needs nothing else from the repository.

Three files, all generated and committed:
- `databricks.yml`: the variables (`catalog` has no default: the user names it once, at deploy;
  each collector's server URL defaults to empty, a collect task that pulls nothing),
  the wheel artifact (its version changes with every build: `dynamic_version`) and the targets
  (`TARGETS`): in development mode (names, schemas and volumes carry the deploying user's prefix,
  schedules paused) `dev` on a dedicated job cluster, `standard` on a standard access mode job
  cluster and `serverless`; in production mode (one copy under the deployer's home, run as a
  service principal, permissions, schedule on) `prod` on a dedicated job cluster and
  `prod_serverless`;
- `resources/<job>_job.yml`: the job without compute (its timeout, a run-duration health rule,
  queueing), then each target's compute: a job cluster (classic targets; the IP salt from
  a secret scope in `spark_env_vars`) or a serverless environment holding the wheel (each task's
  `environment_key`), and its alerts: the job's on a failed or overlong run, and each task's whose
  failure the run's result would not report (`pipelines.deploy.run_result`), mailed to the
  deployer in development, sent to a notification destination in production;
- `resources/<job>_storage.yml`: the schema holding the landing and warehouse volumes and the
  four layer schemas holding the tables, with the grants the production job's service principal
  needs, and in production the secret scope with its READ. `USE CATALOG` on the catalog is not
  the bundle's to grant: the catalog is an existing one the bundle does not own
  (`pipelines.core.unity_catalog`).

The tables are Unity Catalog managed tables `<catalog>.<schema_prefix><layer>.<table>`; the
schema prefix is the storage schema's name plus `_`, so each target's tables follow the name
its mode gives that schema (`dev_<user>_lakehouse_gold` in dev, `lakehouse_gold` in prod).
`pipelines.deploy.bundle_check` validates the files offline (`lakehouse bundle --check`).
"""

from __future__ import annotations

import copy
from pathlib import Path

import yaml

from pipelines.core.config import Config, ConfigError, load_config
from pipelines.core.graph import TaskGraph, load_graph
from pipelines.core.task_groups import task_groups
from pipelines.deploy import collect_tasks, run_result
from pipelines.deploy.collect_tasks import COLLECT_ENTRY_POINT, RETRY_INTERVAL_MILLIS
from pipelines.runtime.spark import REQUIRED_CONF

PACKAGE = "catalog-lakehouse"
TASK_ENTRY_POINT = "lakehouse-task"
WHEEL = "../dist/*.whl"  # relative to the job file in resources/, where the artifact builds it
CLUSTER_KEY = "lakehouse_cluster"
ENVIRONMENT_KEY = "lakehouse"
# Serverless environment 4: Python 3.12 and Databricks Connect 17 (Spark 4), what the wheel needs.
SERVERLESS_ENVIRONMENT_VERSION = "4"
MAINTENANCE_TASK = "maintenance"
NOTIFY_TASK = "notify"
STORAGE_SCHEMA = "lakehouse"  # resources.schemas key and name: the volumes' schema, the tables' prefix
SCHEMA_NAME = "${resources.schemas." + STORAGE_SCHEMA + ".name}"  # with the target mode's prefix
SECRET_SCOPE = "${var.secret_scope}"
IP_SALT_KEY = "ip_salt"  # the secret's key in the scope `var.secret_scope`
IP_SALT_SECRET = SECRET_SCOPE + "/" + IP_SALT_KEY
# Access modes as the Clusters API names them without `kind` (`DATA_SECURITY_MODE_*` names need
# `kind: CLASSIC_PREVIEW`): dedicated to the job's identity, or standard (shared, Spark Connect).
DEDICATED, STANDARD_ACCESS = "SINGLE_USER", "USER_ISOLATION"
# target -> its compute: a job cluster's access mode, or None for serverless
TARGETS = {
    "dev": DEDICATED,
    "standard": STANDARD_ACCESS,
    "serverless": None,
    "prod": DEDICATED,
    "prod_serverless": None,
}
PRODUCTION_TARGETS = ("prod", "prod_serverless")
# one copy per target under the deployer's home (the service principal's, deployed from CI):
# only its owner can replace the wheel the job runs
PRODUCTION_ROOT = (
    "/Workspace/Users/${workspace.current_user.userName}/.bundle/${bundle.name}/${bundle.target}"
)
USER = "${workspace.current_user.short_name}"
CLUSTER = {"spark_version": "${var.spark_version}", "node_type_id": "${var.node_type_id}", "num_workers": 1}
LAYERS = ("bronze", "silver", "gold", "ops")  # a schema each: <schema_prefix><layer>
# end-of-line comments written into the exported YAML, by key and value
COMMENTS = {
    ("data_security_mode", DEDICATED): "dedicated access mode: the cluster runs as the job's identity",
    ("data_security_mode", STANDARD_ACCESS): "standard access mode: Spark Connect, no JVM access",
    ("spark_env_vars", ""): "the IP salt, resolved by Databricks from the secret scope (never in the job)",
    ("dynamic_version", "true"): "a version of its own per build: a cluster never runs a cached wheel",
}
REQUIRED_VARIABLES = ("catalog",)  # no default: given at deploy and run (--var, BUNDLE_VAR_<name>)
VARIABLES = {
    "catalog": {
        "description": "Unity Catalog catalog of the tables and volumes (an existing one; no default: "
        "--var catalog=NAME or BUNDLE_VAR_catalog): <catalog>.<schema_prefix><layer>.<table>",
    },
    "schema_prefix": {
        "description": "Prefix of each layer's schema (<prefix>bronze, ...): the storage schema's name, "
        "which each target's mode prefixes, and _",
        "default": SCHEMA_NAME + "_",
    },
    "landing": {
        "description": "Landing folder the bronze tasks read: the bundle's landing volume, or any volume path",
        "default": f"/Volumes/${{var.catalog}}/{SCHEMA_NAME}/landing",
    },
    "warehouse": {
        "description": "Warehouse folder for the run's own files (validation documents, reports)",
        "default": f"/Volumes/${{var.catalog}}/{SCHEMA_NAME}/warehouse",
    },
    "conf": {
        "description": "YAML file merged over the wheel's conf/lakehouse.yaml (empty: none)",
        "default": "",
    },
    "node_type_id": {
        "description": "Node type of the job cluster: i3.xlarge (AWS), Standard_D4ds_v5 (Azure), "
        "n2-highmem-4 (GCP)",
        "default": "i3.xlarge",
    },
    "spark_version": {
        "description": "Databricks Runtime of the job cluster",
        "default": "17.3.x-scala2.13",
    },
    "secret_scope": {
        "description": f"Secret scope holding the IP salt under the key {IP_SALT_KEY}, and the tokens "
        "of the collect tasks: " + ", ".join(c.token_key for c in collect_tasks.COLLECTORS.values()),
        "default": "catalog_lakehouse",
    },
    "service_principal": {
        "description": "Application ID of the service principal the prod job runs as (prod looks it up by name)",
        "default": "",
    },
    "operators": {
        "description": "Group that manages the prod deployment",
        "default": "admins",
    },
    "notify": {
        "description": "Address the development targets mail when a run or a task fails, or a run runs past "
        "its duration warning (default: the deployer)",
        "default": "${workspace.current_user.userName}",
    },
    "alert_destination": {
        "description": "ID of the notification destination (mail, Slack, a webhook) the production targets "
        "alert when a run or a task fails, or a run runs past its duration warning (prod looks it up by name)",
        "default": "",
    },
}
SERVICE_PRINCIPAL_NAME = "catalog-lakehouse"  # the display name prod looks up
# the notification destination prod looks up by name: deployed from CI as the service principal,
# the deployer's user name is an application ID, not an address, so prod mails no deployer
ALERT_DESTINATION_NAME = "catalog-lakehouse-alerts"
SECRET_SCOPE_KEY = "lakehouse_secrets"  # resources.secret_scopes key (keys are unique across kinds)
HEADER = "# Generated by `lakehouse bundle` from conf/jobs.yaml: edit that file and re-export.\n"


def job_file(graph: TaskGraph) -> str:
    return f"resources/{graph.name}_job.yml"


def storage_file(graph: TaskGraph) -> str:
    return f"resources/{graph.name}_storage.yml"


TASK_OPTIONS = {
    "conf": "${var.conf}",
    "landing": "${var.landing}",
    "warehouse": "${var.warehouse}",
    "catalog": "${var.catalog}",
    "schema-prefix": "${var.schema_prefix}",
    "profile": "databricks",
    "engine": "delta-spark",
    "ip-salt-secret": IP_SALT_SECRET,
}


def task_parameters(first: str) -> list[str]:
    """`lakehouse-task`'s parameters: `first` (`--group=KEY` or `--maintenance`), then the options
    every task passes (`--option=value`: an empty value stays one parameter)."""
    return [first, *(f"--{option}={value}" for option, value in TASK_OPTIONS.items())]


def _wheel_task(first: str) -> dict:
    return {"package_name": PACKAGE, "entry_point": TASK_ENTRY_POINT, "parameters": task_parameters(first)}


def collect_task_documents(graph: TaskGraph) -> list[dict]:
    """A task per collector conf/jobs.yaml lists: one pull into the bronze tasks' landing, retried
    `collector_retries` times a minute apart, an attempt stopped after `collector_timeout_seconds`."""
    tasks = []
    for collector in collect_tasks.scheduled(graph):
        parameters = collect_tasks.parameters(
            collector, TASK_OPTIONS["landing"], TASK_OPTIONS["conf"], SECRET_SCOPE
        )
        task = {
            "task_key": collector.task_key,
            "python_wheel_task": {
                "package_name": PACKAGE,
                "entry_point": COLLECT_ENTRY_POINT,
                "parameters": parameters,
            },
            "max_retries": graph.collector_retries,
        }
        if graph.collector_retries:
            task["min_retry_interval_millis"] = RETRY_INTERVAL_MILLIS
        if graph.collector_timeout_seconds:
            task["timeout_seconds"] = graph.collector_timeout_seconds
        tasks.append(task)
    return tasks


def job_document(graph: TaskGraph) -> dict:
    """The job as every target shares it: the collect tasks, one task per task group (a bronze
    group after the collect tasks feeding it, whatever their outcome), then the notify and the
    maintenance tasks; no compute (each target adds its own)."""
    groups = task_groups(graph)
    fed = collect_tasks.fed_groups(graph)
    tasks = collect_task_documents(graph)
    for group in groups:
        if group.key in fed and group.depends_on:
            # ALL_DONE would run it after a failed upstream group too: only bronze groups are fed
            raise ConfigError(f"task group {group.key} reads landing and other tasks' tables at once")
        waits = [*fed.get(group.key, []), *group.depends_on]
        tasks.append(
            {
                "task_key": group.key,
                **({"depends_on": [{"task_key": d} for d in waits]} if waits else {}),
                # a failed pull must not hold up its lane: what else landed is ingested all the same
                **({"run_if": "ALL_DONE"} if group.key in fed else {}),
                "python_wheel_task": _wheel_task(f"--group={group.key}"),
                "max_retries": graph.retries,
            }
        )
    tasks.append(
        {
            "task_key": NOTIFY_TASK,
            "depends_on": [{"task_key": group.key} for group in groups],
            # a failed group's failed checks are news too; with notifications off it sends nothing
            "run_if": "ALL_DONE",
            "python_wheel_task": _wheel_task("--notify"),
            "max_retries": graph.retries,
        }
    )
    tasks.append(
        {
            "task_key": MAINTENANCE_TASK,
            "depends_on": [{"task_key": group.key} for group in groups],
            "run_if": "ALL_DONE",  # compaction is safe after a failed group, and due all the same
            "python_wheel_task": _wheel_task("--maintenance"),
            "max_retries": graph.retries,
        }
    )
    job = {"name": graph.name, "max_concurrent_runs": 1, "schedule": dict(graph.schedule)}
    if graph.timeout_seconds:
        job["timeout_seconds"] = graph.timeout_seconds
    if graph.duration_warning_seconds:
        job["health"] = {
            "rules": [
                {
                    "metric": "RUN_DURATION_SECONDS",
                    "op": "GREATER_THAN",
                    "value": graph.duration_warning_seconds,
                }
            ]
        }
    # a run that starts while one is running waits for it (the Jobs API's default depends on its
    # version): no scheduled or manual run is dropped, and runs stay one at a time
    job["queue"] = {"enabled": True}
    job["notification_settings"] = {"no_alert_for_skipped_runs": True}
    return {**job, "tasks": tasks}


def recipients(production: bool) -> tuple[str, list]:
    """Whom a target alerts, as the job's notification key and its list: the development targets
    mail `notify` (the deployer by default), the production targets a notification destination."""
    if production:
        return "webhook_notifications", [{"id": "${var.alert_destination}"}]
    return "email_notifications", ["${var.notify}"]


def alerts(graph: TaskGraph, production: bool) -> dict:
    """A target's failure notifications: the job's (a failed or overlong run), and each task's
    whose failure the run's result does not report (`pipelines.deploy.run_result`), on its last
    attempt only (a retried attempt is not news)."""
    key, to = recipients(production)
    job = {
        key: {
            "on_failure": to,
            **(
                {"on_duration_warning_threshold_exceeded": copy.deepcopy(to)}
                if graph.duration_warning_seconds
                else {}
            ),
        }
    }
    tasks = [
        {
            "task_key": task_key,
            key: {"on_failure": copy.deepcopy(to)},
            "notification_settings": {"alert_on_last_attempt": True},
        }
        for task_key in run_result.unreported(job_document(graph)["tasks"])
    ]
    if production:  # on the job, not the bundle's permissions: those also make the secret scope readable
        job["permissions"] = [{"level": "CAN_VIEW", "group_name": "users"}]
    return {**job, "tasks": tasks}


def classic_compute(graph: TaskGraph, config: Config, access_mode: str) -> dict:
    """A target's job cluster in `access_mode`, and each task on it with the wheel."""
    spark_conf = {**config.raw["profiles"]["databricks"].get("spark_conf", {}), **REQUIRED_CONF}
    salt_env = config.section("privacy")["ip_salt_env"]
    cluster = {
        **CLUSTER,
        "data_security_mode": access_mode,
        "spark_conf": {k: str(v) for k, v in sorted(spark_conf.items())},
        "spark_env_vars": {salt_env: "{{secrets/" + IP_SALT_SECRET + "}}"},
    }
    return {
        "job_clusters": [{"job_cluster_key": CLUSTER_KEY, "new_cluster": cluster}],
        "tasks": [
            {"task_key": key, "job_cluster_key": CLUSTER_KEY, "libraries": [{"whl": WHEEL}]}
            for key in _task_keys(graph)
        ],
    }


def serverless_compute(graph: TaskGraph) -> dict:
    """Serverless: an environment holding the wheel, named by every task."""
    environment = {
        "environment_key": ENVIRONMENT_KEY,
        "spec": {"environment_version": SERVERLESS_ENVIRONMENT_VERSION, "dependencies": [WHEEL]},
    }
    return {
        "environments": [environment],
        "tasks": [{"task_key": key, "environment_key": ENVIRONMENT_KEY} for key in _task_keys(graph)],
    }


def _task_keys(graph: TaskGraph) -> list[str]:
    collect = [collector.task_key for collector in collect_tasks.scheduled(graph)]
    return collect + [group.key for group in task_groups(graph)] + [NOTIFY_TASK, MAINTENANCE_TASK]


def targets() -> dict:
    """databricks.yml's targets (`TARGETS`)."""
    production = {
        "mode": "production",
        "workspace": {"root_path": PRODUCTION_ROOT},
        "variables": {
            "service_principal": {"lookup": {"service_principal": SERVICE_PRINCIPAL_NAME}},
            "alert_destination": {"lookup": {"notification_destination": ALERT_DESTINATION_NAME}},
        },
        "run_as": {"service_principal_name": "${var.service_principal}"},
        # every resource of the bundle, the secret scope included (MANAGE): the operators put its secrets
        "permissions": [{"level": "CAN_MANAGE", "group_name": "${var.operators}"}],
    }
    found = {}
    for name in TARGETS:
        if name in PRODUCTION_TARGETS:
            found[name] = copy.deepcopy(production)
        elif name == "dev":
            found[name] = {"mode": "development", "default": True}
        else:
            # its own prefix: one user's deployments to several targets write distinct schemas
            found[name] = {"mode": "development", "presets": {"name_prefix": f"[{name} {USER}] "}}
    return found


def storage_document() -> dict:
    """The schema holding the volumes; prod grants its service principal what the job needs and
    keeps a destroy from dropping them."""
    volumes = {
        name: {
            "catalog_name": "${var.catalog}",
            "schema_name": SCHEMA_NAME,
            "name": name,
            "volume_type": "MANAGED",
            "comment": comment,
        }
        for name, comment in (
            ("landing", "Landing files the bronze tasks ingest, one folder per source"),
            ("warehouse", "The run's own files: GX validation documents, the data-quality report"),
        )
    }
    schemas = {
        STORAGE_SCHEMA: {
            "catalog_name": "${var.catalog}",
            "name": STORAGE_SCHEMA,
            "comment": "catalog-lakehouse: the landing and warehouse volumes; the tables are in <this name>_<layer>",
        }
    }
    for layer in LAYERS:  # the names the tasks' schema prefix gives: <storage schema's name>_<layer>
        schemas[f"{STORAGE_SCHEMA}_{layer}"] = {
            "catalog_name": "${var.catalog}",
            "name": f"{STORAGE_SCHEMA}_{layer}",
            "comment": f"catalog-lakehouse: the {layer} tables",
        }
    principal = "${var.service_principal}"
    table_privileges = ["USE_SCHEMA", "CREATE_TABLE", "MODIFY", "SELECT"]
    prod = {
        "schemas": {
            key: {
                "grants": [
                    {
                        "principal": principal,
                        "privileges": ["USE_SCHEMA"] if key == STORAGE_SCHEMA else table_privileges,
                    }
                ],
                "lifecycle": {"prevent_destroy": True},
            }
            for key in schemas
        },
        "volumes": {
            name: {
                "grants": [{"principal": principal, "privileges": ["READ_VOLUME", "WRITE_VOLUME"]}],
                "lifecycle": {"prevent_destroy": True},
            }
            for name in volumes
        },
        # production only: development mode does not prefix a scope's name, so every developer's
        # deployment would claim the same scope
        "secret_scopes": {
            SECRET_SCOPE_KEY: {
                "name": SECRET_SCOPE,
                "permissions": [{"level": "READ", "service_principal_name": principal}],
                "lifecycle": {"prevent_destroy": True},
            }
        },
    }
    return {
        "resources": {"schemas": schemas, "volumes": volumes},
        "targets": {target: {"resources": copy.deepcopy(prod)} for target in PRODUCTION_TARGETS},
    }


def bundle_documents(graph: TaskGraph, config: Config) -> dict[str, dict]:
    """Relative path -> YAML document of every bundle file."""
    compute = {
        target: classic_compute(graph, config, mode) if mode else serverless_compute(graph)
        for target, mode in TARGETS.items()
    }
    for target, settings in compute.items():
        notifications = alerts(graph, target in PRODUCTION_TARGETS)
        by_key = {task["task_key"]: task for task in settings["tasks"]}
        for task in notifications.pop("tasks"):
            by_key[task["task_key"]].update({k: v for k, v in task.items() if k != "task_key"})
        compute[target] = {**notifications, **settings}
    job = {
        "resources": {"jobs": {graph.name: job_document(graph)}},
        "targets": {
            target: {"resources": {"jobs": {graph.name: settings}}} for target, settings in compute.items()
        },
    }
    root = {
        "bundle": {"name": graph.name},
        "include": ["resources/*.yml"],
        "variables": {**copy.deepcopy(VARIABLES), **collect_tasks.variables(graph)},
        "artifacts": {
            "lakehouse_wheel": {
                "type": "whl",
                "path": ".",
                "build": "python3 -m pip wheel --no-deps --wheel-dir dist .",
                "dynamic_version": True,
                "files": [{"source": "dist/*.whl"}],
            }
        },
        "targets": targets(),
    }
    return {"databricks.yml": root, job_file(graph): job, storage_file(graph): storage_document()}


def render(documents: dict[str, dict]) -> dict[str, str]:
    """Deterministic YAML text of each document (with the end-of-line `COMMENTS`)."""
    return {
        path: HEADER + _annotate(yaml.safe_dump(doc, sort_keys=False, default_flow_style=False, width=120))
        for path, doc in documents.items()
    }


def _annotate(text: str) -> str:
    lines = []
    for line in text.splitlines():
        key, _, value = line.strip().partition(":")
        comment = COMMENTS.get((key, value.strip())) if _ else None
        lines.append(f"{line}  # {comment}" if comment else line)
    return "\n".join(lines) + "\n"


def export(out: Path, graph: TaskGraph | None = None, config: Config | None = None) -> list[Path]:
    """Write the bundle files under `out`; returns their paths."""
    texts = render(bundle_documents(graph or load_graph(), config or load_config()))
    written = []
    for relative, text in texts.items():
        path = out / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written
