"""`lakehouse bundle --check`: each broken setting of an exported bundle is caught offline, by
databricks-bundles' typed models or by the checks of what they do not know."""

from __future__ import annotations

import copy
import dataclasses

import pytest
import yaml
from databricks.bundles.jobs import Job, Task

from pipelines.cli import main
from pipelines.core.config import PROJECT_ROOT, load_config
from pipelines.core.graph import load_graph
from pipelines.deploy import bundle
from pipelines.deploy.bundle_check import (
    alert_problems,
    grants_to_give,
    graph_drift,
    model_problems,
    parameter_problems,
    validate,
)
from pipelines.deploy.deployments import deployment

SCRIPTS = {"lakehouse-task": "pipelines.cli:task_main", "lakehouse-collect": "pipelines.cli:collect_main"}
JOB = "resources/catalog_lakehouse_job.yml"
NAME = "catalog_lakehouse"


@pytest.fixture
def documents():
    return copy.deepcopy(bundle.bundle_documents(load_graph(), load_config()))


def problems_of(documents, root) -> str:
    """`validate` on `documents` written under `root` (what the include globs), one problem a line."""
    for relative, doc in documents.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(yaml.safe_dump(doc))
    return "\n".join(validate(documents, root, SCRIPTS))


def base_job(documents) -> dict:
    return documents[JOB]["resources"]["jobs"][NAME]


def compute(documents, target) -> dict:
    return documents[JOB]["targets"][target]["resources"]["jobs"][NAME]


def task(tasks: list[dict], key: str) -> dict:
    (found,) = [t for t in tasks if t["task_key"] == key]
    return found


def test_a_fresh_export_has_no_problem(documents, tmp_path):
    assert problems_of(documents, tmp_path) == ""


def test_check_catches_an_unknown_key_and_wrong_types_through_the_typed_models(tmp_path, capsys):
    assert main(["bundle", "--out", str(tmp_path)]) == 0
    (tmp_path / "pyproject.toml").write_text((PROJECT_ROOT / "pyproject.toml").read_text())
    path = tmp_path / JOB
    doc = yaml.safe_load(path.read_text())
    job = doc["resources"]["jobs"][NAME]
    job["tasks"][0]["pyton_wheel_task"] = {}  # typo: unknown key
    job["tasks"][1]["max_retries"] = True  # a bool where the model wants an int
    job["max_concurrent_runs"] = "1"  # a string where the model wants an int
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    capsys.readouterr()
    assert main(["bundle", "--check", "--out", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert "differs from a fresh export" in err
    assert (
        "every target: job catalog_lakehouse.tasks[0]: databricks-bundles refuses it: "
        "Unexpected field 'pyton_wheel_task' for class Task"
    ) in err
    assert "job catalog_lakehouse.tasks[1].max_retries: databricks-bundles reads bool True as 1" in err
    assert "job catalog_lakehouse.max_concurrent_runs: databricks-bundles reads str '1' as 1" in err
    # Job.from_dict alone converts them quietly: hence the read-back comparison
    assert Job.from_dict({"tasks": [{"task_key": "a", "max_retries": True}]}).tasks[0].max_retries == 1


def test_the_models_accept_references_where_they_do_and_name_what_they_refuse():
    assert model_problems({"task_key": "a", "max_retries": "${var.retries}"}, Task, "t") == []
    assert model_problems({"task_key": "a", "libraries": [{"wheel": "x"}]}, Task, "t") == [
        "t: databricks-bundles refuses it: Unexpected field 'wheel' for class Library"
    ]
    assert model_problems({"max_retries": 1}, Task, "t")[0].startswith("t: databricks-bundles refuses it:")
    assert model_problems({"tasks": {}}, Job, "job") == ["job.tasks: databricks-bundles drops it"]
    assert model_problems({"tasks": "x"}, Job, "job")[0].startswith("job: databricks-bundles refuses it")
    assert model_problems(
        {"schedule": {"quartz_cron_expression": "x", "timezone_id": "UTC", "pause_status": "SOMETIMES"}},
        Job,
        "job",
    ) == ["job: databricks-bundles refuses it: 'SOMETIMES' is not a valid PauseStatus"]


def test_a_spark_version_without_the_runtimes_shape_is_caught(documents, tmp_path):
    documents["databricks.yml"]["variables"]["spark_version"]["default"] = "99.9.x-nope"
    problems = problems_of(documents, tmp_path)
    assert (
        "target dev, standard, prod: job catalog_lakehouse: job cluster lakehouse_cluster: "
        "spark_version '99.9.x-nope'" in problems
    )
    documents["databricks.yml"]["variables"]["spark_version"]["default"] = "15.4.x-photon-scala2.12"
    assert problems_of(documents, tmp_path) == ""


def test_a_wheel_no_artifact_builds_is_caught(documents, tmp_path):
    task(compute(documents, "dev")["tasks"], "bronze_datahub")["libraries"] = [{"whl": "../dsit/*.whl"}]
    compute(documents, "serverless")["environments"][0]["spec"]["dependencies"] = ["../build/*.whl"]
    problems = problems_of(documents, tmp_path)
    assert (
        "target dev: job catalog_lakehouse: task bronze_datahub: wheel dsit/*.whl does not exist and no artifact"
        in problems
    )
    assert (
        "target serverless: job catalog_lakehouse: environment lakehouse: wheel build/*.whl does not exist"
        in problems
    )
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "catalog_lakehouse-0.1.0-py3-none-any.whl").write_bytes(b"")
    assert "build/*.whl" not in problems_of(documents, tmp_path)  # a wheel that exists is fine


def test_a_wheel_is_caught_when_no_artifact_builds_it_any_more(documents, tmp_path):
    del documents["databricks.yml"]["artifacts"]
    problems = problems_of(documents, tmp_path)
    assert (
        "target dev, standard, prod: job catalog_lakehouse: task bronze_datahub: wheel dist/*.whl does not exist"
        in problems
    )
    assert (
        "target serverless, prod_serverless: job catalog_lakehouse: environment lakehouse: wheel dist/*.whl does not"
        in problems
    )


def test_an_environment_key_naming_no_environment_is_caught(documents, tmp_path):
    del compute(documents, "serverless")["environments"]
    problems = problems_of(documents, tmp_path)
    assert (
        "target serverless: job catalog_lakehouse: task bronze_datahub: environment_key 'lakehouse' names no environment of the job"
        in problems
    )


def test_a_task_without_compute_or_with_two_kinds_is_caught(documents, tmp_path):
    dev = compute(documents, "dev")["tasks"]
    dev.remove(task(dev, "bronze_datahub"))  # bronze_datahub gets no cluster in dev
    task(compute(documents, "prod")["tasks"], "bronze_openmetadata")["environment_key"] = "lakehouse"
    problems = problems_of(documents, tmp_path)
    assert "target dev: job catalog_lakehouse: task bronze_datahub: has no compute" in problems
    assert (
        "target prod: job catalog_lakehouse: task bronze_openmetadata: runs on more than one kind of compute"
        in problems
    )


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        (
            lambda t: t["prod"]["workspace"].pop("root_path"),
            "targets.prod: production mode needs workspace.root_path",
        ),
        (lambda t: t["prod"].pop("run_as"), "targets.prod: production mode needs run_as"),
        (
            lambda t: t["prod"]["run_as"].update(service_principal_name=None),
            "targets.prod.run_as names no service_principal_name",
        ),
        (
            lambda t: t["prod"]["permissions"].append({"level": "CAN_OWN", "group_name": "x"}),
            "targets.prod.permissions[1].level",
        ),
        (
            lambda t: t["dev"].update(mode="staging"),
            "targets.dev.mode must be one of ['development', 'production']",
        ),
        (
            lambda t: t["dev"].update(workspace={"root_path": "/Workspace/Shared/x"}),
            "targets.dev.workspace.root_path must contain the user",
        ),
        (
            lambda t: t["serverless"]["presets"].update(name_prefix="[serverless] "),
            "targets.serverless.presets.name_prefix must contain",
        ),
        (
            lambda t: t["dev"].update(presets={"trigger_pause_status": "UNPAUSED"}),
            "development mode cannot unpause",
        ),
        (
            lambda t: t["prod"].update(default=True),
            "exactly one target must be the default, found ['dev', 'prod']",
        ),
    ],
)
def test_targets_without_what_their_mode_requires_are_caught(documents, tmp_path, change, problem):
    change(documents["databricks.yml"]["targets"])
    assert problem in problems_of(documents, tmp_path)


def test_every_variable_needs_a_default_or_a_lookup_and_every_reference_a_declaration(documents, tmp_path):
    variables = documents["databricks.yml"]["variables"]
    del variables["node_type_id"]["default"]
    compute(documents, "dev")["job_clusters"][0]["new_cluster"]["num_workers"] = "${var.workers}"
    base_job(documents)["tasks"][0]["python_wheel_task"]["parameters"].append(
        "--x=${resources.volumes.nope.name}"
    )
    documents["databricks.yml"]["targets"]["prod"]["variables"]["colour"] = "blue"
    problems = problems_of(documents, tmp_path)
    assert "variable 'node_type_id' has no default and no lookup" in problems
    assert f"{JOB}: ${{var.workers}} is not declared under databricks.yml variables" in problems
    assert "${resources.volumes.nope.name} names no resource of the bundle" in problems
    assert "targets.prod.variables.colour is not declared" in problems
    variables["node_type_id"]["lookup"] = {"instance_pool": "pool"}
    assert "node_type_id" not in problems_of(documents, tmp_path)


def test_broken_references_parameters_and_schedules_are_caught(documents, tmp_path):
    tasks = base_job(documents)["tasks"]
    task(tasks, "bronze_openmetadata")["depends_on"] = [{"task_key": "nope"}]
    task(tasks, "bronze_dataworks")["python_wheel_task"]["entry_point"] = "not-a-script"
    task(tasks, "silver_datahub")["python_wheel_task"]["parameters"].append("--bogus=1")
    task(tasks, "silver_openmetadata")["python_wheel_task"]["parameters"][0] = "--group=gold_datahub"
    task(compute(documents, "dev")["tasks"], "silver_dataworks")["job_cluster_key"] = "missing_cluster"
    base_job(documents)["schedule"] = {
        "quartz_cron_expression": "0 0/15 * * *",
        "timezone_id": "Mars/Olympus",
    }
    problems = problems_of(documents, tmp_path)
    assert "task bronze_openmetadata: depends on unknown task 'nope'" in problems
    assert "task bronze_dataworks: entry point 'not-a-script'" in problems
    assert "task silver_datahub: lakehouse-task refuses its parameters" in problems
    assert "task silver_openmetadata: parameters run 'gold_datahub', not 'silver_openmetadata'" in problems
    assert (
        "target dev: job catalog_lakehouse: task silver_dataworks: unknown job_cluster_key 'missing_cluster'"
        in problems
    )
    assert "must have 6 or 7 fields" in problems
    assert "'Mars/Olympus' is not a known time zone" in problems


def test_parameters_must_run_the_task_they_belong_to():
    assert parameter_problems("a", ["--group=a"]) == []
    assert parameter_problems("maintenance", ["--maintenance"]) == []
    assert parameter_problems("notify", ["--notify"]) == []
    assert "not 'maintenance'" in parameter_problems("maintenance", ["--notify"])[0]
    assert parameter_problems("a", ["--task=a"]) == []
    assert parameter_problems("a", ["--group=a", "--bogus=1"]) == [
        "lakehouse-task refuses its parameters: lakehouse-task: error: unrecognized arguments: --bogus=1"
    ]
    assert "refuses" in parameter_problems("a", ["--group=a", "--maintenance"])[0]  # one of them only
    assert "refuses" in parameter_problems("a", ["--landing=x"])[0]  # a group, a task or maintenance
    assert "refuses" in parameter_problems("a", ["--group=a", "--ip-salt-secret=noslash"])[0]


def test_files_the_include_misses_and_resources_of_other_kinds_are_caught(documents, tmp_path):
    documents["jobs/extra.yml"] = {"resources": {"pipelines": {}}}
    problems = problems_of(documents, tmp_path)
    assert "jobs/extra.yml: not matched by databricks.yml include" in problems
    assert (
        "jobs/extra.yml: resources.pipelines: `lakehouse bundle` exports jobs, schemas, volumes and "
        "secret scopes only" in problems
    )


def test_schemas_and_volumes_are_checked_against_their_models(documents, tmp_path):
    documents["resources/catalog_lakehouse_storage.yml"]["resources"]["volumes"]["landing"]["volume_type"] = (
        "SHARED"
    )
    assert "resources.volumes.landing: databricks-bundles refuses it: 'SHARED' is not a valid VolumeType" in (
        problems_of(documents, tmp_path)
    )


def test_drift_between_the_task_groups_and_the_job_is_reported(documents):
    graph = load_graph()
    task(base_job(documents)["tasks"], "silver_openmetadata")["depends_on"] = []
    assert any("dependencies differ" in p for p in graph_drift(graph, documents))
    task(base_job(documents)["tasks"], "bronze_datahub")["task_key"] = "bronze_all"
    assert any("bundle tasks differ" in p and "bronze_all" in p for p in graph_drift(graph, documents))


def test_an_override_of_a_task_the_job_lacks_is_caught(documents, tmp_path):
    task(base_job(documents)["tasks"], "bronze_datahub")["task_key"] = "bronze_all"  # targets still add it
    problems = problems_of(documents, tmp_path)
    assert "task bronze_datahub: runs nothing" in problems
    assert "parameters run 'bronze_datahub', not 'bronze_all'" in problems


@pytest.mark.parametrize(
    ("cluster", "problem"),
    [
        (
            {"data_security_mode": "DATA_SECURITY_MODE_DEDICATED"},
            "data_security_mode DATA_SECURITY_MODE_DEDICATED needs kind: CLASSIC_PREVIEW",
        ),
        (
            {"data_security_mode": "DATA_SECURITY_MODE_STANDARD"},
            "data_security_mode DATA_SECURITY_MODE_STANDARD needs kind: CLASSIC_PREVIEW (the Clusters API "
            "refuses it without); or name it USER_ISOLATION",
        ),
        ({"data_security_mode": "NONE"}, "data_security_mode 'NONE' reaches no Unity Catalog table"),
        ({"data_security_mode": None}, "data_security_mode None reaches no Unity Catalog table"),
    ],
)
def test_an_access_mode_the_clusters_api_refuses_or_without_unity_catalog_is_caught(
    documents, tmp_path, cluster, problem
):
    new_cluster = compute(documents, "dev")["job_clusters"][0]["new_cluster"]
    new_cluster.update(cluster)
    if cluster["data_security_mode"] is None:
        del new_cluster["data_security_mode"]
    problems = problems_of(documents, tmp_path)
    assert f"target dev: job catalog_lakehouse: job cluster lakehouse_cluster: {problem}" in problems


def test_the_new_access_mode_names_pass_with_their_kind(documents, tmp_path):
    for target, mode in (
        ("dev", "DATA_SECURITY_MODE_DEDICATED"),
        ("standard", "DATA_SECURITY_MODE_STANDARD"),
    ):
        compute(documents, target)["job_clusters"][0]["new_cluster"].update(
            data_security_mode=mode, kind="CLASSIC_PREVIEW"
        )
    assert problems_of(documents, tmp_path) == ""


@pytest.mark.parametrize(
    "root", ["/Workspace/Shared/.bundle/${bundle.name}/${bundle.target}", "/Shared/lakehouse"]
)
def test_a_production_root_every_workspace_user_can_write_is_caught(documents, tmp_path, root):
    documents["databricks.yml"]["targets"]["prod"]["workspace"]["root_path"] = root
    problems = problems_of(documents, tmp_path)
    assert (
        f"targets.prod.workspace.root_path {root} is a shared folder every workspace user can write"
        in problems
    )


def test_a_missing_catalog_variable_is_caught(documents, tmp_path):
    del documents["databricks.yml"]["variables"]["catalog"]
    problems = problems_of(documents, tmp_path)
    assert "databricks.yml: variable 'catalog' is missing: the tasks and volumes need it" in problems
    assert "${var.catalog} is not declared under databricks.yml variables" in problems


def test_tasks_must_write_the_catalog_the_variable_names(documents, tmp_path):
    parameters = task(base_job(documents)["tasks"], "bronze_datahub")["python_wheel_task"]["parameters"]
    parameters[parameters.index("--catalog=${var.catalog}")] = "--catalog=main"
    problems = problems_of(documents, tmp_path)
    assert "task bronze_datahub: --catalog must be ${var.catalog}, got ['--catalog=main']" in problems


def test_a_wheel_whose_version_never_changes_is_caught(documents, tmp_path):
    documents["databricks.yml"]["artifacts"]["lakehouse_wheel"]["dynamic_version"] = False
    problems = problems_of(documents, tmp_path)
    assert "artifacts.lakehouse_wheel: a wheel of the same version each build" in problems


@pytest.mark.parametrize(
    "collectors", [(), ("openmetadata",), ("datahub-audit",), ("datahub-audit", "openmetadata")]
)
def test_a_job_with_any_choice_of_collectors_passes_the_check(tmp_path, collectors):
    graph = dataclasses.replace(load_graph(), collectors=collectors)
    documents = bundle.bundle_documents(graph, load_config())
    assert problems_of(documents, tmp_path) == ""
    assert graph_drift(graph, documents) == []


def collect_parameters(documents, key="collect_openmetadata") -> list[str]:
    return task(base_job(documents)["tasks"], key)["python_wheel_task"]["parameters"]


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        (
            lambda d: task(base_job(d)["tasks"], "bronze_openmetadata").pop("run_if"),
            "task collect_openmetadata: task bronze_openmetadata waits for its success: a failed pull would "
            "hold up its lane; give it run_if: ALL_DONE",
        ),
        (
            lambda d: task(base_job(d)["tasks"], "bronze_datahub").update(run_if="NONE_FAILED"),
            "task collect_datahub_audit: task bronze_datahub waits for its success",
        ),
        (
            lambda d: collect_parameters(d).append("--every=15m"),
            "task collect_openmetadata: lakehouse-collect refuses its parameters: lakehouse-collect: error: "
            "--every: a task of the job pulls once",
        ),
        (
            lambda d: collect_parameters(d, "collect_datahub_audit").remove(
                "--token-secret=${var.secret_scope}/datahub_token"
            ),
            "task collect_datahub_audit: no --token-secret: the job sets no token variable",
        ),
        (
            lambda d: collect_parameters(d).__setitem__(2, "--landing=/Volumes/main/elsewhere/landing"),
            "task collect_openmetadata: lands into /Volumes/main/elsewhere/landing, but the bronze tasks read "
            "['--landing=${var.landing}']",
        ),
        (
            lambda d: task(base_job(d)["tasks"], "collect_openmetadata").update(max_retries=-1),
            "task collect_openmetadata: max_retries -1 retries for ever",
        ),
        (
            lambda d: collect_parameters(d, "collect_datahub_audit").__setitem__(0, "openmetadata"),
            "task collect_datahub_audit: parameters run 'collect_openmetadata', not 'collect_datahub_audit'",
        ),
        (
            lambda d: collect_parameters(d).__setitem__(0, "datahub-kafka"),
            "lakehouse-collect refuses its parameters: lakehouse-collect: error: argument collect_source: "
            "invalid choice: 'datahub-kafka'",
        ),
        (
            lambda d: task(base_job(d)["tasks"], "collect_openmetadata").update(run_if="SOMETIMES"),
            "databricks-bundles refuses it: 'SOMETIMES' is not a valid RunIf",
        ),
        (
            lambda d: task(base_job(d)["tasks"], "collect_openmetadata").update(timeout_seconds="600"),
            "timeout_seconds: databricks-bundles reads str '600' as 600",
        ),
        (
            lambda d: documents_without_variable(d, "datahub_server"),
            "${var.datahub_server} is not declared under databricks.yml variables",
        ),
    ],
)
def test_a_collect_task_that_would_pull_wrong_or_hold_up_its_lane_is_caught(
    documents, tmp_path, change, problem
):
    change(documents)
    assert problem in problems_of(documents, tmp_path)


def documents_without_variable(documents, name: str) -> None:
    del documents["databricks.yml"]["variables"][name]


def test_drift_from_the_collectors_of_jobs_yaml_is_reported(documents):
    graph = load_graph()
    task(base_job(documents)["tasks"], "bronze_datahub").pop("depends_on")
    assert graph_drift(graph, documents) == [
        "bundle dependencies differ from the task groups': [('bronze_datahub', 'collect_datahub_audit')]"
    ]
    tasks = base_job(documents)["tasks"]
    tasks.remove(task(tasks, "collect_openmetadata"))
    for target in ("dev", "standard", "serverless", "prod", "prod_serverless"):
        overrides = compute(documents, target)["tasks"]
        overrides.remove(task(overrides, "collect_openmetadata"))
    assert "bundle tasks differ from the task groups of conf/jobs.yaml: ['collect_openmetadata']" in (
        graph_drift(graph, documents)
    )


# -- failures that alert ------------------------------------------------------------------


def strip_task_alerts(documents, target) -> None:
    for task in compute(documents, target)["tasks"]:
        for key in ("email_notifications", "webhook_notifications", "notification_settings"):
            task.pop(key, None)


def test_a_job_whose_leaves_all_run_all_done_without_task_alerts_is_refused(documents, tmp_path):
    strip_task_alerts(documents, "serverless")
    problems = problems_of(documents, tmp_path)
    assert (
        "target serverless: job catalog_lakehouse: tasks collect_openmetadata, collect_datahub_audit, "
        "bronze_datahub, bronze_openmetadata, bronze_dataworks, silver_datahub"
    ) in problems
    assert (
        "a failure of one ends the run SUCCESS_WITH_FAILURES (its leaves notify, maintenance run after it "
        "whatever its outcome), which the job's on_failure does not alert on"
    ) in problems
    assert "target dev" not in problems  # its tasks still alert


def test_a_leaf_that_runs_only_when_every_task_succeeded_makes_task_alerts_unneeded(documents):
    strip_task_alerts(documents, "serverless")
    deployed = deployment(documents, "serverless")
    job = copy.deepcopy(deployed.jobs[NAME])
    others = [t["task_key"] for t in job["tasks"] if t["task_key"] not in ("notify", "maintenance")]
    # the sentinel: a leaf after every other task, waiting for their success, so a failure fails the run
    sentinel = {
        **copy.deepcopy(task(job["tasks"], "maintenance")),
        "task_key": "every_task_succeeded",
        "depends_on": [{"task_key": k} for k in others],
        "run_if": "ALL_SUCCESS",
    }
    job["tasks"].append(sentinel)
    assert [p for p in alert_problems(job, deployed) if "SUCCESS_WITH_FAILURES" in p] == []
    sentinel["run_if"] = "ALL_DONE"
    assert any("SUCCESS_WITH_FAILURES" in p for p in alert_problems(job, deployed))


def test_a_job_that_alerts_no_one_on_a_failed_run_is_refused(documents, tmp_path):
    del compute(documents, "dev")["email_notifications"]
    assert "target dev: job catalog_lakehouse: alerts no one when a run fails" in problems_of(
        documents, tmp_path
    )


def test_production_mailing_the_deployer_is_refused(documents, tmp_path):
    prod = compute(documents, "prod")
    prod["email_notifications"] = {"on_failure": ["${var.notify}"]}  # its default: the deployer's login
    problems = problems_of(documents, tmp_path)
    assert (
        "target prod: job catalog_lakehouse: mails ${workspace.current_user.userName}, the deployer: deployed "
        "from CI as the service principal, that is an application ID, not an address"
    ) in problems
    prod["email_notifications"] = {"on_failure": ["oncall@example.com"]}
    # an address given is fine; the development targets mail the deployer, a person with one
    assert "the deployer" not in problems_of(documents, tmp_path)


def test_queueing_left_to_the_jobs_api_version_is_refused(documents, tmp_path):
    del base_job(documents)["queue"]
    assert "every target: job catalog_lakehouse: queue.enabled is not set" in problems_of(documents, tmp_path)


def test_the_deprecated_no_alert_for_skipped_runs_in_email_notifications_is_refused(documents, tmp_path):
    compute(documents, "dev")["email_notifications"]["no_alert_for_skipped_runs"] = True
    task(compute(documents, "dev")["tasks"], "bronze_datahub")["email_notifications"][
        "no_alert_for_skipped_runs"
    ] = True
    problems = problems_of(documents, tmp_path)
    assert (
        "target dev: job catalog_lakehouse: email_notifications.no_alert_for_skipped_runs is deprecated: set it in "
        "notification_settings"
    ) in problems
    assert "task bronze_datahub: email_notifications.no_alert_for_skipped_runs is deprecated" in problems


# -- grants that suffice ------------------------------------------------------------------


def storage(documents, target) -> dict:
    return documents["resources/catalog_lakehouse_storage.yml"]["targets"][target]["resources"]


def test_a_production_target_without_the_secret_scope_the_tasks_read_is_refused(documents, tmp_path):
    del storage(documents, "prod")["secret_scopes"]
    storage(documents, "prod_serverless")["secret_scopes"]["lakehouse_secrets"]["name"] = "elsewhere"
    problems = problems_of(documents, tmp_path)
    assert (
        "target prod, prod_serverless: the secret scope the tasks read (catalog_lakehouse) is no resource of the "
        "bundle"
    ) in problems


def test_a_secret_scope_the_jobs_principal_cannot_read_is_refused(documents, tmp_path):
    storage(documents, "prod")["secret_scopes"]["lakehouse_secrets"]["permissions"] = [
        {"level": "READ", "group_name": "admins"}
    ]
    problems = problems_of(documents, tmp_path)
    assert (
        "target prod: resources.secret_scopes.lakehouse_secrets: gives the job's principal "
        "${var.service_principal} no READ"
    ) in problems


def test_a_bundle_wide_can_view_that_makes_the_secrets_readable_is_refused(documents, tmp_path):
    documents["databricks.yml"]["targets"]["prod"]["permissions"].append(
        {"level": "CAN_VIEW", "group_name": "users"}
    )
    problems = problems_of(documents, tmp_path)
    assert (
        "target prod: permissions: CAN_VIEW for users gives it READ on every secret scope of the bundle"
    ) in problems


def test_a_secret_scope_is_checked_against_its_model(documents, tmp_path):
    storage(documents, "prod")["secret_scopes"]["lakehouse_secrets"]["permissions"][0]["level"] = "OWN"
    assert (
        "resources.secret_scopes.lakehouse_secrets: databricks-bundles refuses it: 'OWN' is not a valid "
        "SecretScopePermissionLevel"
    ) in problems_of(documents, tmp_path)


def test_the_check_names_the_use_catalog_grant_a_catalog_admin_must_give(documents, tmp_path, capsys):
    assert grants_to_give(documents) == [
        "target dev, standard, serverless: a catalog admin must grant USE CATALOG, which the bundle cannot: "
        "GRANT USE CATALOG ON CATALOG `<catalog>` TO `<the deployer's user name>`",
        "target prod, prod_serverless: a catalog admin must grant USE CATALOG, which the bundle cannot: "
        "GRANT USE CATALOG ON CATALOG `<catalog>` TO `<application ID of the service principal "
        "catalog-lakehouse>`",
    ]
    documents["databricks.yml"]["variables"]["catalog"]["default"] = "sales"
    documents["databricks.yml"]["targets"]["prod"]["run_as"] = {"user_name": "etl@example.com"}
    assert "GRANT USE CATALOG ON CATALOG `sales` TO `etl@example.com`" in "\n".join(grants_to_give(documents))
    assert main(["bundle", "--check"]) == 0
    out = capsys.readouterr().out
    assert "GRANT USE CATALOG ON CATALOG `<catalog>` TO `<application ID of the service principal" in out
