"""`lakehouse bundle --check`: the committed bundle validated offline, before a deploy.

First, the files must equal a fresh export of `conf/jobs.yaml`. Then every target is merged as
the Databricks CLI merges it (`pipelines.deploy.deployments`) and checked:
- against databricks-bundles' typed models: each job (and each of its tasks, job clusters and
  environments, so a problem is found where it is), the schemas and volumes, the targets'
  `run_as`. The models convert some wrong scalars quietly (`true` for an int becomes 1), so a
  document must also read back from its model unchanged;
- what the models do not know: every task's wheel exists or an artifact builds it; every
  `environment_key` names an environment of its job; every task has one kind of compute;
  `spark_version` has a runtime's shape (`17.3.x-scala2.13`); the task parameters are accepted
  by `lakehouse-task` or, for a collect task, `lakehouse-collect`, which must pull once (no
  `--every`) with a token from the secret scope into the landing the bronze tasks read, must not
  retry for ever, and must not hold up a task after it (`run_if: ALL_DONE`); the entry points
  are declared in pyproject.toml (read with `tomllib`);
  every `${...}` reference is known and every variable has a default or a lookup, but the
  required ones (`catalog`), which must be declared and name the tasks' catalog; the targets
  have what their mode requires (production: `run_as` and a `workspace.root_path` that only
  the deployer can write, not a shared folder; development: per-user names and paths, schedules
  left paused); a job cluster's access mode is one the Clusters API takes with its `kind`, and
  one Unity Catalog serves; every wheel artifact gets a version of its own per build; the
  schedule's cron and time zone are valid (`pipelines.deploy.quartz_cron`); the job's tasks and
  edges are the task groups' and the collect tasks' of conf/jobs.yaml;
- that failures alert: the job notifies on a failed run, and every task whose failure the run's
  result does not report (`pipelines.deploy.run_result`: the leaves after it run `ALL_DONE`)
  carries failure notifications of its own; a production target alerts no
  `${workspace.current_user.userName}` (deployed from CI, an application ID, not an address);
  queueing is set, not left to the Jobs API version; no deprecated `no_alert_for_skipped_runs`
  in `email_notifications` (`notification_settings` has it);
- that the production secret scope is the bundle's: the one the tasks read, READ for the job's
  principal, and not readable by the groups of the bundle-wide `permissions` (the CLI gives
  CAN_VIEW holders READ on every secret scope).
`databricks bundle validate` checks the rest against a workspace. The grant the bundle cannot
give (`USE CATALOG` on the catalog: `pipelines.core.unity_catalog`) is printed by
`grants_to_give` for a catalog admin.
"""

from __future__ import annotations

import contextlib
import copy
import fnmatch
import io
import posixpath
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from pipelines.core.config import PROJECT_ROOT, Config, load_config
from pipelines.core.graph import TaskGraph, load_graph
from pipelines.core.task_groups import task_groups
from pipelines.core.unity_catalog import use_catalog_grant
from pipelines.deploy import collect_tasks, run_result
from pipelines.deploy.bundle import (
    MAINTENANCE_TASK,
    NOTIFY_TASK,
    PACKAGE,
    REQUIRED_VARIABLES,
    TASK_ENTRY_POINT,
    bundle_documents,
    render,
)
from pipelines.deploy.collect_tasks import COLLECT_ENTRY_POINT
from pipelines.deploy.deployments import MAIN, REFERENCE, USER_NAME, Deployment, deployment, target_names
from pipelines.deploy.quartz_cron import cron_problems, timezone_problems
from pipelines.deploy.task_parameters import parse_collect_task, task_parser

MODES = ("development", "production")
SPARK_VERSION = re.compile(r"\d+\.\d+\.x(-[a-z0-9]+)*-scala\d+\.\d+")
REFERENCE_ROOTS = ("var", "resources", "bundle", "workspace")
PERMISSION_LEVELS = ("CAN_VIEW", "CAN_RUN", "CAN_MANAGE")
PRINCIPALS = ("user_name", "group_name", "service_principal_name")
USER_MARKERS = ("${workspace.current_user.short_name}", "${workspace.current_user.userName}", "~/")
SHARED_ROOTS = ("/Workspace/Shared", "/Shared")  # every workspace user may write there
# Access modes Unity Catalog serves: legacy names with any `kind`, the new ones only with
# `kind: CLASSIC_PREVIEW` (Clusters API)
ACCESS_MODES = ("SINGLE_USER", "USER_ISOLATION")
NEW_ACCESS_MODES = ("DATA_SECURITY_MODE_DEDICATED", "DATA_SECURITY_MODE_STANDARD", "DATA_SECURITY_MODE_AUTO")
NEW_KIND = "CLASSIC_PREVIEW"
RESOURCE_KINDS = ("jobs", "schemas", "volumes", "secret_scopes")


def check(
    root: Path = PROJECT_ROOT, graph: TaskGraph | None = None, config: Config | None = None
) -> list[str]:
    """Problems with the committed bundle under `root` (empty when it is current and valid)."""
    graph = graph or load_graph()
    expected = render(bundle_documents(graph, config or load_config()))
    problems = []
    documents = {}
    for relative, text in expected.items():
        path = root / relative
        if not path.is_file():
            problems.append(f"{relative} is missing: run `lakehouse bundle`")
            continue
        committed = path.read_text(encoding="utf-8")
        if committed != text:
            problems.append(
                f"{relative} differs from a fresh export of conf/jobs.yaml: run `lakehouse bundle`"
            )
        try:
            documents[relative] = yaml.safe_load(committed)
        except yaml.YAMLError as exc:
            problems.append(f"{relative}: not valid YAML ({exc.__class__.__name__})")
    if len(documents) == len(expected):
        problems += validate(documents, root, project_scripts(root / "pyproject.toml"))
        problems += graph_drift(graph, documents)
    return problems


def project_scripts(pyproject: Path) -> dict[str, str]:
    """[project.scripts] of pyproject.toml."""
    try:
        import tomllib
    except ImportError:  # Python 3.10
        import tomli as tomllib
    return tomllib.loads(pyproject.read_text(encoding="utf-8")).get("project", {}).get("scripts", {})


def validate(documents: dict[str, dict], root: Path, scripts: dict[str, str]) -> list[str]:
    """Offline checks of a bundle's documents (path -> YAML mapping) under `root`."""
    main = documents.get(MAIN)
    if not isinstance(main, dict):
        return [f"{MAIN}: top level must be a mapping"]
    problems = []
    if not (main.get("bundle") or {}).get("name"):
        problems.append(f"{MAIN}: bundle.name is required")
    problems += _file_problems(documents, root, main)
    problems += variable_problems(documents)
    problems += artifact_problems(main)
    problems += target_problems(main)
    by_target: dict[str, list[str]] = {}
    for target in target_names(documents):
        for problem in deployment_problems(deployment(documents, target), main, root, scripts):
            by_target.setdefault(problem, []).append(target)
    every = target_names(documents)
    for problem, targets in by_target.items():
        where = "every target" if targets == every else "target " + ", ".join(targets)
        problems.append(f"{where}: {problem}")
    return problems


def _file_problems(documents: dict[str, dict], root: Path, main: dict) -> list[str]:
    included = {str(p.relative_to(root)) for pattern in main.get("include", []) for p in root.glob(pattern)}
    problems = []
    for relative, doc in documents.items():
        if relative == MAIN:
            continue
        if relative not in included:
            problems.append(f"{relative}: not matched by {MAIN} include")
        if not isinstance(doc, dict) or not set(doc) <= {"resources", "targets"} or not doc:
            problems.append(f"{relative}: must hold `resources` and/or `targets` mappings only")
            continue
        for kind in doc.get("resources") or {}:
            if kind not in RESOURCE_KINDS:
                problems.append(
                    f"{relative}: resources.{kind}: `lakehouse bundle` exports jobs, schemas, volumes and "
                    "secret scopes only"
                )
    return problems


# -- variables and references -------------------------------------------------------------


def variable_problems(documents: dict[str, dict]) -> list[str]:
    """Every `${var.X}` declared, every declared one used, each target's variables declared, every
    variable with a default or a lookup (or a value in every target), every reference known."""
    main = documents[MAIN]
    declared = main.get("variables") or {}
    if not isinstance(declared, dict):
        return [f"{MAIN}: variables must be a mapping"]
    used: dict[str, str] = {}
    problems = []
    for relative, doc in documents.items():
        for reference in _references(doc):
            root = reference.split(".", 1)[0]
            if root not in REFERENCE_ROOTS:
                problems.append(f"{relative}: ${{{reference}}} is not a reference the bundle can resolve")
            elif root == "var":
                used.setdefault(reference.split(".")[1], relative)
    problems += [
        f"{relative}: ${{var.{name}}} is not declared under {MAIN} variables"
        for name, relative in sorted(used.items())
        if name not in declared
    ]
    problems += [
        f"{MAIN}: variable '{name}' is declared but never used" for name in declared if name not in used
    ]
    targets = main.get("targets") or {}
    for target, settings in targets.items():
        for name in (settings or {}).get("variables") or {}:
            if name not in declared:
                problems.append(f"{MAIN}: targets.{target}.variables.{name} is not declared")
    for name in REQUIRED_VARIABLES:
        if name not in declared:
            problems.append(
                f"{MAIN}: variable '{name}' is missing: the tasks and volumes need it "
                f"(--{name}=${{var.{name}}}); run `lakehouse bundle`"
            )
    for name, spec in declared.items():
        spec = spec or {}
        given_everywhere = targets and all(
            name in ((t or {}).get("variables") or {}) for t in targets.values()
        )
        if name in REQUIRED_VARIABLES:
            continue  # given at deploy and run: `databricks bundle deploy` names it when missing
        if "default" not in spec and "lookup" not in spec and not given_everywhere:
            problems.append(
                f"{MAIN}: variable '{name}' has no default and no lookup: `databricks bundle run` "
                "would need the --var given at deploy again"
            )
    return problems


def _references(value: Any) -> list[str]:
    if isinstance(value, str):
        return REFERENCE.findall(value)
    if isinstance(value, dict):
        return [name for item in value.values() for name in _references(item)]
    if isinstance(value, list):
        return [name for item in value for name in _references(item)]
    return []


# -- targets ------------------------------------------------------------------------------


def target_problems(main: dict) -> list[str]:
    """databricks.yml's targets: one default, a known mode, and what that mode requires."""
    targets = main.get("targets") or {}
    if not targets:
        return [f"{MAIN}: no targets"]
    problems = []
    defaults = [name for name, t in targets.items() if (t or {}).get("default")]
    if len(defaults) != 1:
        problems.append(f"{MAIN}: exactly one target must be the default, found {defaults}")
    for name, target in targets.items():
        target = target or {}
        at = f"{MAIN}: targets.{name}"
        mode = target.get("mode")
        if mode not in MODES:
            problems.append(f"{at}.mode must be one of {list(MODES)}, got {mode!r}")
        elif mode == "production":
            problems += _production_problems(at, target)
        else:
            problems += _development_problems(at, target)
    return problems


def artifact_problems(main: dict) -> list[str]:
    """Every wheel artifact gets a version of its own per build: a cluster that has a wheel of
    the same version installed would run the old code."""
    return [
        f"{MAIN}: artifacts.{name}: a wheel of the same version each build (a cluster may run a "
        "cached, stale one): set dynamic_version: true"
        for name, artifact in (main.get("artifacts") or {}).items()
        if isinstance(artifact, dict)
        and artifact.get("type") == "whl"
        and artifact.get("dynamic_version") is not True
    ]


def _production_problems(at: str, target: dict) -> list[str]:
    problems = []
    root_path = (target.get("workspace") or {}).get("root_path")
    if not root_path:
        problems.append(f"{at}: production mode needs workspace.root_path, so that only one copy is deployed")
    elif any(root_path == shared or root_path.startswith(shared + "/") for shared in SHARED_ROOTS):
        problems.append(
            f"{at}.workspace.root_path {root_path} is a shared folder every workspace user can write: "
            "anyone could replace the wheel the job runs; use /Workspace/Users/${workspace.current_user.userName}/..."
        )
    run_as = target.get("run_as")
    if not run_as:
        problems.append(
            f"{at}: production mode needs run_as (a service principal): a job must not run as its deployer"
        )
    else:
        from databricks.bundles.jobs import JobRunAs

        problems += model_problems(run_as, JobRunAs, f"{at}.run_as")
        if not any(run_as.get(p) for p in ("service_principal_name", "user_name")):
            problems.append(f"{at}.run_as names no service_principal_name or user_name")
    for i, permission in enumerate(target.get("permissions") or []):
        problems += _permission_problems(permission, f"{at}.permissions[{i}]")
    return problems


def _permission_problems(permission: Any, at: str) -> list[str]:
    if not isinstance(permission, dict):
        return [f"{at}: must be a mapping"]
    problems = [f"{at}: unknown key '{k}'" for k in permission if k not in ("level", *PRINCIPALS)]
    if permission.get("level") not in PERMISSION_LEVELS:
        problems.append(f"{at}.level must be one of {list(PERMISSION_LEVELS)}")
    if sum(1 for p in PRINCIPALS if permission.get(p)) != 1:
        problems.append(f"{at}: name exactly one of {list(PRINCIPALS)}")
    return problems


def _development_problems(at: str, target: dict) -> list[str]:
    problems = []
    workspace = target.get("workspace") or {}
    for key in ("root_path", "file_path", "artifact_path", "state_path"):
        path = workspace.get(key)
        if path and not any(marker in path for marker in USER_MARKERS):
            problems.append(f"{at}.workspace.{key} must contain the user's name in development mode")
    presets = target.get("presets") or {}
    prefix = presets.get("name_prefix")
    if prefix is not None and not any(marker in prefix for marker in USER_MARKERS[:2]):
        problems.append(f"{at}.presets.name_prefix must contain the user's name in development mode")
    if presets.get("trigger_pause_status") == "UNPAUSED":
        problems.append(f"{at}.presets: development mode cannot unpause schedules")
    return problems


# -- one target's merged resources --------------------------------------------------------


def deployment_problems(deployed: Deployment, main: dict, root: Path, scripts: dict[str, str]) -> list[str]:
    """A target's merged jobs, schemas and volumes: typed models, compute, wheels, parameters."""
    from databricks.bundles.schemas import Schema
    from databricks.bundles.secret_scopes import SecretScope
    from databricks.bundles.volumes import Volume

    problems = []
    models = {"schemas": Schema, "volumes": Volume, "secret_scopes": SecretScope}
    for kind, model in models.items():
        for name, resource in (deployed.resources.get(kind) or {}).items():
            problems += model_problems(resource, model, f"resources.{kind}.{name}")
    for reference in _references(deployed.resources):
        parts = reference.split(".")
        if parts[0] == "resources" and (
            len(parts) < 3 or parts[2] not in deployed.resources.get(parts[1], {})
        ):
            problems.append(f"${{{reference}}} names no resource of the bundle")
    outputs = artifact_outputs(main)
    for name, job in deployed.jobs.items():
        where = f"job {name}"
        typed = job_model_problems(job, where)
        problems += typed
        if not typed:  # the shape is right: its references and settings can be read
            problems += job_problems(job, where, scripts, deployed, outputs, root)
            problems += [f"{where}: {p}" for p in alert_problems(job, deployed)]
    if deployed.mode == "production":
        problems += secret_scope_problems(deployed)
    return problems


# -- alerts and secrets ----------------------------------------------------------------------


def alert_problems(job: dict, deployed: Deployment) -> list[str]:
    """Whether a failure reaches someone: the run's, through the job's notifications; a task's
    whose failure the run's result does not report, through its own."""
    problems = []
    if not run_result.alerts_on_failure(job):
        problems.append(
            "alerts no one when a run fails: give it email_notifications or webhook_notifications on_failure"
        )
    tasks = job.get("tasks") or []
    by_key = {t.get("task_key"): t for t in tasks}
    silent = [key for key in run_result.unreported(tasks) if not run_result.alerts_on_failure(by_key[key])]
    if silent:
        leaves = ", ".join(run_result.leaves(tasks))
        problems.append(
            f"tasks {', '.join(silent)}: a failure of one ends the run SUCCESS_WITH_FAILURES (its leaves "
            f"{leaves} run after it whatever its outcome), which the job's on_failure does not alert on: "
            "give each task email_notifications or webhook_notifications on_failure, or add a leaf that "
            "runs only when every task succeeded (run_if: ALL_SUCCESS)"
        )
    queue = job.get("queue")
    if not isinstance(queue, dict) or "enabled" not in queue:
        problems.append(
            "queue.enabled is not set: whether a run started during another waits or is skipped then "
            "depends on the Jobs API version"
        )
    for at, part in [("", job), *((f"task {t.get('task_key')}: ", t) for t in tasks)]:
        if "no_alert_for_skipped_runs" in (part.get("email_notifications") or {}):
            problems.append(
                f"{at}email_notifications.no_alert_for_skipped_runs is deprecated: set it in notification_settings"
            )
    if deployed.mode == "production":
        addresses = [
            address
            for part in [job, *tasks]
            for value in (part.get("email_notifications") or {}).values()
            if isinstance(value, list)
            for address in value
            if isinstance(address, str)
        ]
        if any(USER_NAME in deployed.resolve(address) for address in addresses):
            problems.append(
                f"mails {USER_NAME}, the deployer: deployed from CI as the service principal, that is an "
                "application ID, not an address; alert a notification destination (webhook_notifications) "
                "or an address given at deploy"
            )
    return problems


def secret_scope_problems(deployed: Deployment) -> list[str]:
    """A production target's secret scope: the bundle's, the one the tasks read, READ for the job's
    principal, readable by no group through the bundle-wide permissions."""
    scopes = deployed.resources.get("secret_scopes") or {}
    principal = (deployed.settings.get("run_as") or {}).get("service_principal_name")
    read = deployed.resolve("${var.secret_scope}")
    problems = []
    named = {key: s for key, s in scopes.items() if deployed.resolve(s.get("name")) == read}
    if not named:
        problems.append(
            f"the secret scope the tasks read ({read}) is no resource of the bundle: declare it under "
            "resources.secret_scopes with READ for the job's principal"
        )
    for key, scope in named.items():
        holders = {
            deployed.resolve(p.get("service_principal_name"))
            for p in scope.get("permissions") or []
            if p.get("level") in ("READ", "WRITE", "MANAGE")
        }
        if principal and deployed.resolve(principal) not in holders:
            problems.append(
                f"resources.secret_scopes.{key}: gives the job's principal {principal} no READ: the tasks "
                "could not read the IP salt or the tokens"
            )
    if scopes:
        for permission in deployed.settings.get("permissions") or []:
            if permission.get("level") == "CAN_VIEW":
                who = next((permission[p] for p in PRINCIPALS if permission.get(p)), "?")
                problems.append(
                    f"permissions: CAN_VIEW for {who} gives it READ on every secret scope of the bundle "
                    "(the IP salt, the tokens): give CAN_VIEW on the job instead (its own permissions)"
                )
    return problems


def grants_to_give(documents: dict[str, dict]) -> list[str]:
    """The grants a catalog admin must give for each target, which the bundle cannot: `USE
    CATALOG` on the existing catalog to the identity the job runs as."""
    by_grant: dict[str, list[str]] = {}
    for target in target_names(documents):
        deployed = deployment(documents, target)
        catalog = deployed.resolve("${var.catalog}")
        catalog = "<catalog>" if "${" in catalog else catalog
        run_as = deployed.settings.get("run_as") or {}
        principal = next((run_as[p] for p in ("service_principal_name", "user_name") if run_as.get(p)), None)
        if principal is None:
            who = "<the deployer's user name>"  # the job runs as its deployer
        else:
            name = principal[len("${var.") : -1] if principal.startswith("${var.") else None
            value = deployed.variables.get(name) if name else principal
            lookup = (value or {}).get("lookup", {}) if isinstance(value, dict) else {}
            who = (
                f"<application ID of the service principal {lookup['service_principal']}>"
                if "service_principal" in lookup
                else deployed.resolve(principal)
            )
        by_grant.setdefault(use_catalog_grant(catalog, who), []).append(target)
    return [
        f"target {', '.join(targets)}: a catalog admin must grant USE CATALOG, which the bundle cannot: {grant}"
        for grant, targets in by_grant.items()
    ]


def artifact_outputs(main: dict) -> list[str]:
    """The wheel paths (globs, relative to the bundle root) the `whl` artifacts build."""
    outputs = []
    for artifact in (main.get("artifacts") or {}).values():
        if not isinstance(artifact, dict) or artifact.get("type") != "whl":
            continue
        base = artifact.get("path") or "."
        files = [f.get("source") for f in artifact.get("files") or [] if isinstance(f, dict)]
        for source in files or ["dist/*.whl"]:
            outputs.append(posixpath.normpath(posixpath.join(base, source)))
    return outputs


def job_problems(
    job: dict, where: str, scripts: dict[str, str], deployed: Deployment, outputs: list[str], root: Path
) -> list[str]:
    """What the typed models cannot see in a job: references between its parts, compute, wheels,
    the runtime, the entry point and its parameters, the schedule."""
    problems = []
    tasks = job.get("tasks") or []
    keys = [t.get("task_key") for t in tasks]
    clusters = {c.get("job_cluster_key"): c for c in job.get("job_clusters") or []}
    environments = {e.get("environment_key"): e for e in job.get("environments") or []}
    if len(keys) != len(set(keys)):
        problems.append(f"{where}: task keys must be unique")
    for task in tasks:
        at = f"{where}: task {task.get('task_key')}"
        for dep in task.get("depends_on") or []:
            if dep.get("task_key") not in keys:
                problems.append(f"{at}: depends on unknown task '{dep.get('task_key')}'")
        if not any(key.endswith("_task") for key in task):
            problems.append(
                f"{at}: runs nothing (no python_wheel_task or other *_task): an override of a task the job lacks?"
            )
        problems += [f"{at}: {p}" for p in compute_problems(task, clusters, environments)]
        for library in task.get("libraries") or []:
            if "whl" in library:
                problems += [f"{at}: {p}" for p in wheel_problems(library["whl"], outputs, root)]
        wheel = task.get("python_wheel_task")
        if wheel:
            if wheel.get("entry_point") not in scripts:
                problems.append(
                    f"{at}: entry point '{wheel.get('entry_point')}' is not in pyproject.toml [project.scripts]"
                )
            if wheel.get("package_name") != PACKAGE:
                problems.append(f"{at}: package_name must be '{PACKAGE}'")
            if wheel.get("entry_point") == TASK_ENTRY_POINT:
                problems += [
                    f"{at}: {p}" for p in parameter_problems(task["task_key"], wheel.get("parameters"))
                ]
            if wheel.get("entry_point") == COLLECT_ENTRY_POINT:
                problems += [f"{at}: {p}" for p in collect_task_problems(task, tasks)]
    for key, environment in environments.items():
        for dependency in (environment.get("spec") or {}).get("dependencies") or []:
            if dependency.endswith(".whl") and not dependency.startswith("/"):
                problems += [
                    f"{where}: environment {key}: {p}" for p in wheel_problems(dependency, outputs, root)
                ]
    for key, cluster in clusters.items():
        version = deployed.resolve((cluster.get("new_cluster") or {}).get("spark_version"))
        problems += [f"{where}: job cluster {key}: {p}" for p in spark_version_problems(version)]
        problems += [
            f"{where}: job cluster {key}: {p}" for p in access_mode_problems(cluster.get("new_cluster"))
        ]
    for task in tasks:
        catalogs = [
            p
            for p in (task.get("python_wheel_task") or {}).get("parameters") or []
            if p.startswith("--catalog")
        ]
        if catalogs and catalogs != ["--catalog=${var.catalog}"]:
            problems.append(
                f"{where}: task {task.get('task_key')}: --catalog must be ${{var.catalog}}, got {catalogs}"
            )
    schedule = job.get("schedule")
    if schedule:
        problems += [
            f"{where}: schedule: {p}" for p in cron_problems(schedule.get("quartz_cron_expression", ""))
        ]
        problems += [f"{where}: schedule: {p}" for p in timezone_problems(schedule.get("timezone_id"))]
    return problems


def collect_task_problems(task: dict, tasks: list[dict]) -> list[str]:
    """A collect task: `lakehouse-collect` accepts its parameters and pulls once what the task is
    named for, with a token from the secret scope, into the landing the bronze tasks read; it
    does not retry for ever, and no task after it waits for its success."""
    key = task.get("task_key")
    parameters = (task.get("python_wheel_task") or {}).get("parameters") or []
    errors = io.StringIO()
    try:
        with contextlib.redirect_stderr(errors):
            parsed = parse_collect_task(parameters)
    except SystemExit:
        message = errors.getvalue().strip().splitlines()
        return [f"lakehouse-collect refuses its parameters: {message[-1] if message else 'usage error'}"]
    problems = []
    runs = collect_tasks.task_key(parsed.collect_source)
    if runs != key:
        problems.append(f"parameters run '{runs}', not '{key}'")
    if not parsed.token_secret:
        problems.append(
            "no --token-secret: the job sets no token variable, so the pull would go without its token"
        )
    read = {p for t in tasks for p in _wheel_parameters(t, TASK_ENTRY_POINT) if p.startswith("--landing=")}
    landing = f"--landing={parsed.landing}"
    if read and landing not in read:
        problems.append(f"lands into {parsed.landing}, but the bronze tasks read {sorted(read)}")
    if task.get("max_retries") == -1:
        problems.append(
            "max_retries -1 retries for ever, and the bronze task after it waits for every attempt"
        )
    for waiting in tasks:
        if any(d.get("task_key") == key for d in waiting.get("depends_on") or []) and (
            waiting.get("run_if") != "ALL_DONE"
        ):
            problems.append(
                f"task {waiting.get('task_key')} waits for its success: a failed pull would hold up its "
                "lane; give it run_if: ALL_DONE"
            )
    return problems


def _wheel_parameters(task: dict, entry_point: str) -> list[str]:
    wheel = task.get("python_wheel_task") or {}
    return list(wheel.get("parameters") or []) if wheel.get("entry_point") == entry_point else []


def compute_problems(task: dict, clusters: dict, environments: dict) -> list[str]:
    """One kind of compute per task, and the one it names declared by its job."""
    kinds = [
        k for k in ("job_cluster_key", "existing_cluster_id", "new_cluster", "environment_key") if k in task
    ]
    if len(kinds) > 1:
        return [f"runs on more than one kind of compute: {kinds}"]
    if not kinds:
        return [
            "has no compute: a job cluster (job_cluster_key) or a serverless environment (environment_key)"
        ]
    if kinds == ["job_cluster_key"] and task["job_cluster_key"] not in clusters:
        return [f"unknown job_cluster_key '{task['job_cluster_key']}'"]
    if kinds == ["environment_key"]:
        if task["environment_key"] not in environments:
            return [f"environment_key '{task['environment_key']}' names no environment of the job"]
        if task.get("libraries"):
            return ["a serverless task takes its wheel from its environment's dependencies, not libraries"]
    return []


def wheel_problems(path: str, outputs: list[str], root: Path) -> list[str]:
    """A wheel path (relative to the bundle root) that no artifact builds and no file matches."""
    if any(fnmatch.fnmatch(path, output) or path == output for output in outputs):
        return []
    if path.startswith(("/", "dbfs:")) or any(root.glob(path)):
        return []  # a workspace or volume path (checked at deploy), or a wheel that exists
    return [f"wheel {path} does not exist and no artifact of {MAIN} builds it (artifacts build {outputs})"]


def access_mode_problems(cluster: Any) -> list[str]:
    """A job cluster's access mode as the Clusters API takes it: `SINGLE_USER` or `USER_ISOLATION`
    (any `kind`), or a `DATA_SECURITY_MODE_*` name with `kind: CLASSIC_PREVIEW`; anything else
    (none, `NONE`, the legacy modes) has no Unity Catalog."""
    cluster = cluster or {}
    mode, kind = cluster.get("data_security_mode"), cluster.get("kind")
    if mode in NEW_ACCESS_MODES:
        if kind != NEW_KIND:
            return [
                f"data_security_mode {mode} needs kind: {NEW_KIND} (the Clusters API refuses it without); "
                f"or name it {'SINGLE_USER' if mode.endswith('DEDICATED') else 'USER_ISOLATION'}"
            ]
        return []
    if mode not in ACCESS_MODES:
        return [
            f"data_security_mode {mode!r} reaches no Unity Catalog table: use SINGLE_USER (dedicated) "
            "or USER_ISOLATION (standard)"
        ]
    return []


def spark_version_problems(version: Any) -> list[str]:
    """A Databricks Runtime version string: `<major>.<minor>.x[-<variant>...]-scala<version>`."""
    if isinstance(version, str) and "${" in version:
        return []  # set by a lookup or at deploy: checked there
    if not isinstance(version, str) or not SPARK_VERSION.fullmatch(version):
        return [
            f"spark_version {version!r} is not a Databricks Runtime version such as 17.3.x-scala2.13 "
            "(`databricks clusters spark-versions` lists them)"
        ]
    return []


def parameter_problems(task_key: str, parameters: list[str] | None) -> list[str]:
    """Whether `lakehouse-task` accepts a task's parameters and runs what the task is named for."""
    errors = io.StringIO()
    try:
        with contextlib.redirect_stderr(errors):
            parsed = task_parser().parse_args(parameters or [])
    except SystemExit:
        message = errors.getvalue().strip().splitlines()
        return [f"lakehouse-task refuses its parameters: {message[-1] if message else 'usage error'}"]
    runs = (
        parsed.group
        or parsed.task
        or (MAINTENANCE_TASK if parsed.maintenance else None)
        or (NOTIFY_TASK if parsed.notify else None)
    )
    if runs != task_key:
        return [f"parameters run '{runs}', not '{task_key}'"]
    return []


# -- the typed models ------------------------------------------------------------------


def job_model_problems(job: Any, where: str) -> list[str]:
    """What databricks-bundles' job models do not accept in `job`: its tasks, job clusters and
    environments one by one, then the rest."""
    from databricks.bundles.jobs import Job, JobCluster, JobEnvironment, Task

    if not isinstance(job, dict):
        return [f"{where}: must be a mapping"]
    problems = []
    parts: dict[str, Callable[..., Any]] = {
        "tasks": Task,
        "job_clusters": JobCluster,
        "environments": JobEnvironment,
    }
    for field_name, model in parts.items():
        items = job.get(field_name)
        if isinstance(items, list):
            for i, item in enumerate(items):
                problems += model_problems(item, model, f"{where}.{field_name}[{i}]")
    rest = {k: v for k, v in job.items() if not (k in parts and isinstance(v, list))}
    problems += model_problems(rest, Job, where)
    return problems


def model_problems(value: Any, model: Any, where: str) -> list[str]:
    """What databricks-bundles' `model` (a dataclass with `from_dict`) refuses in `value`, or reads
    differently from what is written (a value of another type it converts)."""
    try:
        parsed = model.from_dict(copy.deepcopy(value))
    except Exception as exc:  # the models raise ValueError, TypeError, KeyError alike
        return [f"{where}: databricks-bundles refuses it: {exc}"]
    return [f"{where}{path}: {difference}" for path, difference in differences(value, parsed.as_dict())]


def differences(written: Any, read: Any, path: str = "") -> list[tuple[str, str]]:
    """Where a document and the model's reading of it differ."""
    if isinstance(written, dict) and isinstance(read, dict):
        found = []
        for key in written:
            if key not in read:
                found.append((f"{path}.{key}", "databricks-bundles drops it"))
            else:
                found += differences(written[key], read[key], f"{path}.{key}")
        return found
    if isinstance(written, list) and isinstance(read, list) and len(written) == len(read):
        return [
            d
            for i, (w, r) in enumerate(zip(written, read, strict=True))
            for d in differences(w, r, f"{path}[{i}]")
        ]
    if written == read and type(written) is type(read):
        return []
    kind = "null" if written is None else type(written).__name__
    return [
        (path, f"databricks-bundles reads {kind} {written!r} as {read!r}: write a value of the model's type")
    ]


# -- the graph ---------------------------------------------------------------------------


def graph_drift(graph: TaskGraph, documents: dict[str, dict]) -> list[str]:
    """Differences between the task groups (the collect tasks before them, the notify and
    maintenance tasks after them) and the job's tasks and edges, in the default target."""
    names = target_names(documents)
    main = documents.get(MAIN) or {}
    default = next((n for n in names if ((main.get("targets") or {}).get(n) or {}).get("default")), names[0])
    job = deployment(documents, default).jobs.get(graph.name, {})
    groups = task_groups(graph)
    expected = {g.key for g in groups} | {NOTIFY_TASK, MAINTENANCE_TASK}
    expected |= {c.task_key for c in collect_tasks.scheduled(graph)}
    expected_edges = {(g.key, d) for g in groups for d in g.depends_on}
    expected_edges |= {(after, g.key) for g in groups for after in (NOTIFY_TASK, MAINTENANCE_TASK)}
    expected_edges |= {(g, c) for g, fed in collect_tasks.fed_groups(graph).items() for c in fed}
    found = {t.get("task_key") for t in job.get("tasks", [])}
    found_edges = {
        (t["task_key"], d["task_key"]) for t in job.get("tasks", []) for d in t.get("depends_on") or []
    }
    problems = []
    if found != expected:
        problems.append(
            f"bundle tasks differ from the task groups of conf/jobs.yaml: {sorted(found ^ expected)}"
        )
    if found_edges != expected_edges:
        problems.append(
            f"bundle dependencies differ from the task groups': {sorted(found_edges ^ expected_edges)}"
        )
    return problems
