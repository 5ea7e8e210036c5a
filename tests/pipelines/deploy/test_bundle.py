"""The Databricks Asset Bundle: exported from the task graph's groups and the collectors of
conf/jobs.yaml, committed, five targets (dedicated, standard and serverless compute in
development; dedicated and serverless in production) that each deploy a complete job."""

from __future__ import annotations

import copy
import dataclasses
import re
import subprocess

import pytest

from pipelines.core.config import PROJECT_ROOT, load_config
from pipelines.core.graph import load_graph
from pipelines.core.task_groups import task_groups
from pipelines.deploy import bundle
from pipelines.deploy.bundle_check import check, project_scripts
from pipelines.deploy.deployments import deployment, normalize_prefix, target_names
from tests.support.jobs_service import failure_alerts, result_state, run_job

FILES = ("databricks.yml", "resources/catalog_lakehouse_job.yml", "resources/catalog_lakehouse_storage.yml")


@pytest.fixture(scope="module")
def documents():
    return bundle.bundle_documents(load_graph(), load_config())


def deployed_job(documents, target):
    return deployment(documents, target).jobs["catalog_lakehouse"]


def test_committed_bundle_equals_a_fresh_export(tmp_path):
    written = bundle.export(tmp_path)
    assert sorted(str(p.relative_to(tmp_path)) for p in written) == sorted(FILES)
    for relative in FILES:
        committed = PROJECT_ROOT / relative
        assert committed.is_file(), f"{relative} is not committed: run `lakehouse bundle`"
        assert committed.read_text(encoding="utf-8") == (tmp_path / relative).read_text(encoding="utf-8"), (
            f"{relative} is stale: run `lakehouse bundle`"
        )


def test_committed_bundle_passes_the_offline_check():
    assert check(PROJECT_ROOT) == []


def test_task_entry_points_are_declared_in_pyproject():
    scripts = project_scripts(PROJECT_ROOT / "pyproject.toml")
    assert scripts["lakehouse-task"] == "pipelines.cli:task_main"
    assert scripts["lakehouse-collect"] == "pipelines.cli:collect_main"


def test_the_job_runs_the_collect_tasks_the_task_groups_then_the_notify_and_maintenance_tasks(documents):
    groups = task_groups(load_graph())
    job = deployed_job(documents, "dev")
    collect = ["collect_openmetadata", "collect_datahub_audit"]
    assert [t["task_key"] for t in job["tasks"]] == collect + [g.key for g in groups] + [
        "notify",
        "maintenance",
    ]
    fed = {"bronze_openmetadata": ["collect_openmetadata"], "bronze_datahub": ["collect_datahub_audit"]}
    for task, group in zip(job["tasks"][len(collect) :], groups, strict=False):
        waits = fed.get(group.key, []) + list(group.depends_on)
        assert [d["task_key"] for d in task.get("depends_on", [])] == waits
        assert task["python_wheel_task"]["parameters"][0] == f"--group={group.key}"
    notify, maintenance = job["tasks"][-2:]
    assert notify["python_wheel_task"]["parameters"][0] == "--notify"
    assert maintenance["python_wheel_task"]["parameters"][0] == "--maintenance"
    for after in (notify, maintenance):  # after every group, gold's included, whatever their outcome
        assert [d["task_key"] for d in after["depends_on"]] == [g.key for g in groups]
        assert after["run_if"] == "ALL_DONE"
    assert len(job["tasks"]) < len(load_graph().tasks) / 3  # fewer, coarser tasks than tables


def test_every_task_passes_the_same_options(documents):
    tasks = deployed_job(documents, "dev")["tasks"]
    entry_points = [t["python_wheel_task"]["entry_point"] for t in tasks]
    assert entry_points == ["lakehouse-collect"] * 2 + ["lakehouse-task"] * (len(tasks) - 2)
    for task in tasks[2:]:
        assert task["max_retries"] == load_graph().retries
        assert task["python_wheel_task"]["package_name"] == "catalog-lakehouse"
        assert task["python_wheel_task"]["parameters"][1:] == [
            "--conf=${var.conf}",
            "--landing=${var.landing}",
            "--warehouse=${var.warehouse}",
            "--catalog=${var.catalog}",
            "--schema-prefix=${var.schema_prefix}",
            "--profile=databricks",
            "--engine=delta-spark",
            "--ip-salt-secret=${var.secret_scope}/ip_salt",
        ]


def test_five_targets_for_each_compute_in_development_and_production(documents):
    main = documents["databricks.yml"]
    assert target_names(documents) == ["dev", "standard", "serverless", "prod", "prod_serverless"]
    assert main["targets"]["dev"] == {"mode": "development", "default": True}
    for name in ("standard", "serverless"):
        assert main["targets"][name] == {
            "mode": "development",
            "presets": {"name_prefix": f"[{name} ${{workspace.current_user.short_name}}] "},
        }
    for name in ("prod", "prod_serverless"):
        prod = main["targets"][name]
        assert prod["mode"] == "production"
        # under the deployer's home (the service principal's, from CI), never a shared folder
        assert prod["workspace"]["root_path"] == (
            "/Workspace/Users/${workspace.current_user.userName}/.bundle/${bundle.name}/${bundle.target}"
        )
        assert prod["run_as"] == {"service_principal_name": "${var.service_principal}"}
        assert prod["variables"]["service_principal"] == {
            "lookup": {"service_principal": "catalog-lakehouse"}
        }
        assert prod["variables"]["alert_destination"] == {
            "lookup": {"notification_destination": "catalog-lakehouse-alerts"}
        }
        # bundle-wide: the operators manage every resource, the secret scope included
        assert prod["permissions"] == [{"level": "CAN_MANAGE", "group_name": "${var.operators}"}]
        # every user may see the job, on the job alone: a bundle-wide CAN_VIEW reads the secrets
        assert deployed_job(documents, name)["permissions"] == [{"level": "CAN_VIEW", "group_name": "users"}]


@pytest.mark.parametrize(
    ("target", "access_mode"),
    [("dev", "SINGLE_USER"), ("prod", "SINGLE_USER"), ("standard", "USER_ISOLATION")],
)
def test_classic_targets_run_on_a_job_cluster_in_an_access_mode_the_api_takes(documents, target, access_mode):
    job = deployed_job(documents, target)
    ((cluster,),) = [[c["new_cluster"] for c in job["job_clusters"]]]
    assert cluster["spark_version"] == "${var.spark_version}"
    assert cluster["node_type_id"] == "${var.node_type_id}"
    assert cluster["data_security_mode"] == access_mode and "kind" not in cluster
    assert cluster["spark_conf"]["spark.sql.session.timeZone"] == "UTC"
    assert cluster["spark_env_vars"] == {"LAKEHOUSE_IP_SALT": "{{secrets/${var.secret_scope}/ip_salt}}"}
    assert not {"aws_attributes", "azure_attributes", "gcp_attributes"} & set(cluster)
    for task in job["tasks"]:
        assert task["job_cluster_key"] == "lakehouse_cluster"
        assert task["libraries"] == [{"whl": "dist/*.whl"}]  # ../dist/*.whl from resources/
        assert "environment_key" not in task


@pytest.mark.parametrize("target", ["serverless", "prod_serverless"])
def test_the_serverless_targets_have_no_cluster_and_an_environment_holding_the_wheel(documents, target):
    job = deployed_job(documents, target)
    assert "job_clusters" not in job
    assert job["environments"] == [
        {"environment_key": "lakehouse", "spec": {"environment_version": "4", "dependencies": ["dist/*.whl"]}}
    ]
    for task in job["tasks"]:
        assert task["environment_key"] == "lakehouse"
        assert not {"job_cluster_key", "libraries"} & set(task)
        # no cluster environment variables here: the task reads the IP salt from the scope itself
        # (a collect task reads its token so, everywhere: tests/pipelines/deploy/test_collect_tasks.py)
        if task["python_wheel_task"]["entry_point"] == "lakehouse-task":
            assert "--ip-salt-secret=${var.secret_scope}/ip_salt" in task["python_wheel_task"]["parameters"]


def test_the_job_has_a_timeout_a_duration_warning_and_queues_a_run_started_during_another(documents):
    graph = load_graph()
    job = documents["resources/catalog_lakehouse_job.yml"]["resources"]["jobs"]["catalog_lakehouse"]
    assert job["timeout_seconds"] == graph.timeout_seconds > 0
    assert job["health"] == {
        "rules": [
            {"metric": "RUN_DURATION_SECONDS", "op": "GREATER_THAN", "value": graph.duration_warning_seconds}
        ]
    }
    assert job["queue"] == {"enabled": True}
    assert job["notification_settings"] == {"no_alert_for_skipped_runs": True}
    assert "email_notifications" not in job  # whom to alert is each target's


@pytest.mark.parametrize("target", ["dev", "standard", "serverless"])
def test_development_mails_the_deployer_when_a_run_or_a_task_fails(documents, target):
    job = deployed_job(documents, target)
    assert job["email_notifications"] == {
        "on_failure": ["${var.notify}"],
        "on_duration_warning_threshold_exceeded": ["${var.notify}"],
    }
    assert (
        documents["databricks.yml"]["variables"]["notify"]["default"] == "${workspace.current_user.userName}"
    )
    alerting = {t["task_key"] for t in job["tasks"] if "email_notifications" in t}
    # every task but the leaves, which run whatever the others' outcome: their own failure fails the run
    assert alerting == {t["task_key"] for t in job["tasks"]} - {"notify", "maintenance"}
    for task in job["tasks"]:
        if task["task_key"] in alerting:
            assert task["email_notifications"] == {"on_failure": ["${var.notify}"]}
            assert task["notification_settings"] == {"alert_on_last_attempt": True}
    assert "webhook_notifications" not in job


@pytest.mark.parametrize("target", ["prod", "prod_serverless"])
def test_production_alerts_a_notification_destination_and_mails_no_deployer(documents, target):
    job = deployed_job(documents, target)
    destination = [{"id": "${var.alert_destination}"}]
    assert job["webhook_notifications"] == {
        "on_failure": destination,
        "on_duration_warning_threshold_exceeded": destination,
    }
    assert "email_notifications" not in job
    for task in job["tasks"]:
        assert "email_notifications" not in task
        if task["task_key"] not in ("notify", "maintenance"):
            assert task["webhook_notifications"] == {"on_failure": destination}
            assert task["notification_settings"] == {"alert_on_last_attempt": True}


@pytest.mark.parametrize(
    ("target", "alerted"), [("dev", "${var.notify}"), ("prod", "${var.alert_destination}")]
)
def test_a_failed_group_is_alerted_though_the_run_ends_a_success_with_failures(documents, target, alerted):
    """Ordered as the Jobs service orders it, a run whose silver group fails every attempt runs its
    leaves all the same (`run_if: ALL_DONE`) and so ends SUCCESS_WITH_FAILURES, on which the job's
    own on_failure stays silent: the failed task's own notification is the one that alerts."""
    job = deployed_job(documents, target)

    def start(task: dict) -> subprocess.CompletedProcess:
        return subprocess.CompletedProcess([], 1 if task["task_key"] == "silver_openmetadata" else 0)

    runs = run_job(job["tasks"], start)
    assert result_state(job["tasks"], runs) == "SUCCESS_WITH_FAILURES"
    alerts = failure_alerts(job, runs)
    assert alerts == {"silver_openmetadata": [alerted]}

    without = copy.deepcopy(job)
    for task in without["tasks"]:
        for key in ("email_notifications", "webhook_notifications"):
            task.pop(key, None)
    assert failure_alerts(without, run_job(without["tasks"], start)) == {}  # the failure would go unheard


def test_the_wheel_gets_a_version_of_its_own_with_every_build(documents):
    (artifact,) = documents["databricks.yml"]["artifacts"].values()
    assert artifact["type"] == "whl" and artifact["dynamic_version"] is True


def test_the_catalog_is_named_at_deploy_and_every_other_variable_has_a_default(documents):
    variables = documents["databricks.yml"]["variables"]
    assert "default" not in variables["catalog"]  # no catalog exists on every workspace
    assert all("default" in spec for name, spec in variables.items() if name != "catalog")
    assert variables["node_type_id"]["default"] == "i3.xlarge"
    assert variables["spark_version"]["default"] == "17.3.x-scala2.13"


@pytest.mark.parametrize(
    ("target", "user", "schema"),
    [
        ("dev", "alice", "dev_alice_lakehouse"),
        ("standard", "alice", "standard_alice_lakehouse"),
        ("serverless", "alice", "serverless_alice_lakehouse"),
        ("prod", "x", "lakehouse"),
        ("prod_serverless", "x", "lakehouse"),
    ],
)
def test_each_target_has_its_own_schemas_and_volumes(documents, target, user, schema):
    """Development targets share no schema or volume: development mode prefixes every schema with
    the target and user, and the volume paths and the tasks' schema prefix follow the storage
    schema's name, so the layer schemas the bundle creates are the ones the tasks write."""
    deployed = deployment(documents, target)
    deployed.variables["catalog"] = "sales"
    resolve = lambda value: deployed.resolve(value, user=user)  # noqa: E731
    assert resolve("${resources.schemas.lakehouse.name}") == schema
    assert resolve("${var.schema_prefix}") == f"{schema}_"
    assert resolve("${var.landing}") == f"/Volumes/sales/{schema}/landing"
    assert resolve("${var.warehouse}") == f"/Volumes/sales/{schema}/warehouse"
    volumes = deployed.resources["volumes"]
    assert {resolve(v["schema_name"]) for v in volumes.values()} == {schema}
    schemas = deployed.resources["schemas"]
    layers = {f"{schema}_{layer}" for layer in ("bronze", "silver", "gold", "ops")}
    names = {resolve(f"${{resources.schemas.{key}.name}}") for key in schemas if key != "lakehouse"}
    assert names == layers
    assert {
        resolve("${var.schema_prefix}") + layer for layer in ("bronze", "silver", "gold", "ops")
    } == layers


@pytest.mark.parametrize("target", ["prod", "prod_serverless"])
def test_prod_grants_its_service_principal_what_the_job_needs_and_keeps_it_from_a_destroy(documents, target):
    prod = deployment(documents, target).resources
    principal = "${var.service_principal}"
    assert prod["schemas"]["lakehouse"]["grants"] == [{"principal": principal, "privileges": ["USE_SCHEMA"]}]
    for layer in ("bronze", "silver", "gold", "ops"):
        schema = prod["schemas"][f"lakehouse_{layer}"]
        assert schema["grants"] == [
            {"principal": principal, "privileges": ["USE_SCHEMA", "CREATE_TABLE", "MODIFY", "SELECT"]}
        ]
        assert schema["lifecycle"] == {"prevent_destroy": True}
    for volume in prod["volumes"].values():
        assert volume["grants"][0]["privileges"] == ["READ_VOLUME", "WRITE_VOLUME"]
        assert volume["lifecycle"] == {"prevent_destroy": True}
    # the scope the tasks read the IP salt and the tokens from, readable by the job's principal
    assert prod["secret_scopes"] == {
        "lakehouse_secrets": {
            "name": "${var.secret_scope}",
            "permissions": [{"level": "READ", "service_principal_name": principal}],
            "lifecycle": {"prevent_destroy": True},
        }
    }
    assert "grants" not in deployment(documents, "dev").resources["schemas"]["lakehouse"]
    # development mode does not prefix a scope's name: one scope per developer would collide
    assert "secret_scopes" not in deployment(documents, "dev").resources


def test_development_prefixes_are_normalized_as_the_cli_does():
    assert normalize_prefix("[dev alice] ") == "dev_alice_"
    assert normalize_prefix("[serverless ${workspace.current_user.short_name}] ") == (
        "serverless_${workspace.current_user.short_name}_"
    )
    assert normalize_prefix("Team-A ") == "team_a"


COLLECT_PARAMETERS = {
    "collect_openmetadata": [
        "openmetadata",
        "--server=${var.openmetadata_server}",
        "--landing=${var.landing}",
        "--conf=${var.conf}",
        "--token-secret=${var.secret_scope}/openmetadata_token",
        "--subscription=${var.openmetadata_subscription}",
    ],
    "collect_datahub_audit": [
        "datahub-audit",
        "--server=${var.datahub_server}",
        "--landing=${var.landing}",
        "--conf=${var.conf}",
        "--token-secret=${var.secret_scope}/datahub_token",
    ],
}


def tasks_by_key(job) -> dict[str, dict]:
    return {t["task_key"]: t for t in job["tasks"]}


@pytest.mark.parametrize("target", ["dev", "standard", "serverless", "prod", "prod_serverless"])
def test_the_collect_tasks_pull_once_before_the_bronze_task_of_their_lane(documents, target):
    """Each collector of conf/jobs.yaml pulls once per run (no --every) into the landing the bronze
    tasks read, its token from the job's secret scope, before the bronze task of its landing
    source, which runs whatever the pull's outcome; on every target's compute."""
    graph = load_graph()
    job = deployed_job(documents, target)
    tasks = tasks_by_key(job)
    for key, parameters in COLLECT_PARAMETERS.items():
        task = tasks[key]
        assert task["python_wheel_task"] == {
            "package_name": "catalog-lakehouse",
            "entry_point": "lakehouse-collect",
            "parameters": parameters,
        }
        assert "depends_on" not in task and "run_if" not in task  # first in the run, at once
        assert task["max_retries"] == graph.collector_retries == 1
        assert task["min_retry_interval_millis"] == 60_000
        assert task["timeout_seconds"] == graph.collector_timeout_seconds == 600
        assert ("environment_key" in task) == target.endswith("serverless")
        assert ("job_cluster_key" in task) != target.endswith("serverless")
    assert tasks["bronze_openmetadata"]["depends_on"] == [{"task_key": "collect_openmetadata"}]
    assert tasks["bronze_datahub"]["depends_on"] == [{"task_key": "collect_datahub_audit"}]
    for key in ("bronze_openmetadata", "bronze_datahub"):
        assert tasks[key]["run_if"] == "ALL_DONE"  # a failed pull does not hold up its lane
    assert "depends_on" not in tasks["bronze_dataworks"]  # no pull feeds it
    others = [
        t
        for k, t in tasks.items()
        if k not in ("bronze_openmetadata", "bronze_datahub", "notify", "maintenance")
    ]
    assert not [t["task_key"] for t in others if "run_if" in t]
    assert not {d["task_key"] for d in tasks["maintenance"]["depends_on"]} & set(COLLECT_PARAMETERS)


def test_the_collectors_servers_are_variables_that_may_stay_empty(documents):
    variables = documents["databricks.yml"]["variables"]
    for name in ("openmetadata_server", "openmetadata_subscription", "datahub_server"):
        assert variables[name]["default"] == ""
    assert "openmetadata_token" in variables["secret_scope"]["description"]
    assert "datahub_token" in variables["secret_scope"]["description"]


def test_a_collector_left_out_of_jobs_yaml_has_no_task_edge_or_variable():
    graph = load_graph()
    only_audit = bundle.bundle_documents(
        dataclasses.replace(graph, collectors=("datahub-audit",)), load_config()
    )
    job = deployed_job(only_audit, "serverless")
    tasks = tasks_by_key(job)
    assert "collect_openmetadata" not in tasks and "collect_datahub_audit" in tasks
    assert not {"depends_on", "run_if"} & set(tasks["bronze_openmetadata"])
    assert tasks["bronze_datahub"]["depends_on"] == [{"task_key": "collect_datahub_audit"}]
    variables = only_audit["databricks.yml"]["variables"]
    assert "datahub_server" in variables
    assert not {"openmetadata_server", "openmetadata_subscription"} & set(variables)

    none = bundle.bundle_documents(dataclasses.replace(graph, collectors=()), load_config())
    job = deployed_job(none, "dev")
    assert [t["task_key"] for t in job["tasks"]] == [g.key for g in task_groups(graph)] + [
        "notify",
        "maintenance",
    ]
    assert [t for t in job["tasks"] if t["task_key"] not in ("notify", "maintenance") and "run_if" in t] == []
    assert not {"openmetadata_server", "datahub_server"} & set(none["databricks.yml"]["variables"])


def test_a_failed_pull_holds_up_no_lane_as_the_jobs_service_orders_the_job(documents):
    """Ordered as the Jobs service orders it (`tests.support.jobs_service`), a job whose
    OpenMetadata pull fails every attempt runs every other task: its own lane's too. Without
    `run_if: ALL_DONE` the lane, and the gold groups joining it, would not run."""
    job = deployed_job(documents, "serverless")

    def start(task: dict) -> subprocess.CompletedProcess:
        return subprocess.CompletedProcess([], 1 if task["task_key"] == "collect_openmetadata" else 0)

    runs = run_job(job["tasks"], start)
    assert runs["collect_openmetadata"].state == "FAILED"
    assert runs["collect_openmetadata"].attempts == 1 + load_graph().collector_retries
    assert {key for key, run in runs.items() if run.state != "SUCCESS"} == {"collect_openmetadata"}

    tasks_by_key(job)["bronze_openmetadata"].pop("run_if")
    held_up = {key for key, run in run_job(job["tasks"], start).items() if run.state == "UPSTREAM_FAILED"}
    assert {"bronze_openmetadata", "silver_openmetadata", "gold_datahub_openmetadata"} <= held_up


def test_the_hand_over_between_the_production_targets_binds_every_resource_they_share(documents):
    """docs/deployment.md moves prod between classic and serverless with `bundle deployment
    unbind` and `bind`: the resources it names are every resource both production targets
    declare, and both declare the same keys and names."""
    text = (PROJECT_ROOT / "docs" / "deployment.md").read_text(encoding="utf-8")
    section = text.split("## Moving prod between classic and serverless", 1)[1].split("\n## ", 1)[0]
    script = section.split("```", 2)[1]
    unbind = re.search(r"for key in (.*?); do\s+databricks bundle deployment unbind", script, re.S)
    unbound = set(unbind.group(1).replace("\\\n", " ").split())
    bound = set(re.findall(r"^databricks bundle deployment bind (\w+) ", script, re.M))
    for names in re.findall(r"for \w+ in ([^;]*); do\s+databricks bundle deployment bind", script):
        bound |= set(names.split())
    shared = []
    for target in ("prod", "prod_serverless"):
        deployed = deployment(documents, target)
        keys = {key for resources in deployed.resources.values() for key in resources}
        names = {
            (kind, key, deployed.resolve(resource.get("name", "")))
            for kind, resources in deployed.resources.items()
            for key, resource in resources.items()
        }
        shared.append(names)
        assert unbound == keys, target
        assert bound == keys, target
    assert shared[0] == shared[1]
