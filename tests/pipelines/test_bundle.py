"""The Databricks Asset Bundle: exported from the task graph, committed, valid offline against
databricks-bundles' typed models."""

from __future__ import annotations

import copy

import pytest
import yaml
from databricks.bundles.jobs import Job, Task

from pipelines.cli import main
from pipelines.core.config import PROJECT_ROOT, load_config
from pipelines.core.graph import load_graph
from pipelines.deploy import bundle
from pipelines.deploy.bundle import cron_problems, model_problems, timezone_problems

SCRIPTS = {"lakehouse-task": "pipelines.cli:task_main"}


@pytest.fixture(scope="module")
def documents():
    return bundle.bundle_documents(load_graph(), load_config())


def job_of(documents):
    graph = load_graph()
    return documents[bundle.job_file(graph)]["resources"]["jobs"][graph.name]


def written(documents, root):
    """`documents` as files under `root` (what `validate` globs for the include)."""
    for relative, doc in documents.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(yaml.safe_dump(doc))
    return documents


def test_committed_bundle_equals_a_fresh_export(tmp_path):
    bundle.export(tmp_path)
    for relative in ("databricks.yml", "resources/catalog_lakehouse_job.yml"):
        fresh = (tmp_path / relative).read_text(encoding="utf-8")
        committed = PROJECT_ROOT / relative
        assert committed.is_file(), f"{relative} is not committed: run `lakehouse bundle`"
        assert committed.read_text(encoding="utf-8") == fresh, f"{relative} is stale: run `lakehouse bundle`"


def test_task_entry_point_is_declared_in_pyproject():
    scripts = bundle.project_scripts(PROJECT_ROOT / "pyproject.toml")
    assert scripts.get("lakehouse-task") == "pipelines.cli:task_main", (
        'pyproject.toml [project.scripts] needs lakehouse-task = "pipelines.cli:task_main"'
    )


def test_committed_bundle_passes_the_offline_check():
    assert bundle.check(PROJECT_ROOT) == []


def test_runner_and_bundle_share_one_graph(documents):
    graph = load_graph()
    job = job_of(documents)
    assert [t["task_key"] for t in job["tasks"]] == [t.key for t in graph.ordered()]
    bundle_edges = {(t["task_key"], d["task_key"]) for t in job["tasks"] for d in t.get("depends_on", [])}
    assert bundle_edges == {(t.key, d) for t in graph.tasks for d in t.depends_on}
    assert bundle.graph_drift(graph, documents[bundle.job_file(graph)]) == []


def test_job_shape(documents):
    graph = load_graph()
    job = job_of(documents)
    assert job["max_concurrent_runs"] == 1
    assert job["schedule"] == graph.schedule
    cluster_keys = {c["job_cluster_key"] for c in job["job_clusters"]}
    spark_conf = job["job_clusters"][0]["new_cluster"]["spark_conf"]
    assert spark_conf["spark.sql.session.timeZone"] == "UTC"
    for task in job["tasks"]:
        assert task["job_cluster_key"] in cluster_keys
        assert task["max_retries"] == graph.retries
        assert task["python_wheel_task"] == {
            "package_name": "catalog-lakehouse",
            "entry_point": "lakehouse-task",
            "parameters": [
                f"--task={task['task_key']}",
                "--conf=${var.conf}",
                "--landing=${var.landing}",
                "--warehouse=${var.warehouse}",
                "--catalog=${var.catalog}",
                "--schema-prefix=${var.schema_prefix}",
                "--profile=databricks",
                "--engine=delta-spark",
            ],
        }
        assert task["libraries"] == [{"whl": "../dist/*.whl"}]
    main = documents["databricks.yml"]
    assert main["include"] == ["resources/*.yml"]
    assert set(main["targets"]) == {"dev", "prod"}
    assert main["targets"]["dev"]["variables"] == {"schema_prefix": "dev_"}
    assert main["artifacts"]["lakehouse_wheel"]["type"] == "whl"


def test_cluster_is_not_tied_to_one_cloud(documents):
    cluster = job_of(documents)["job_clusters"][0]["new_cluster"]
    assert cluster["node_type_id"] == "${var.node_type_id}"
    assert cluster["spark_version"] == "${var.spark_version}"
    assert cluster["data_security_mode"] == "SINGLE_USER"
    assert not {"aws_attributes", "azure_attributes", "gcp_attributes"} & set(cluster)
    variables = documents["databricks.yml"]["variables"]
    assert "default" not in variables["node_type_id"]  # given per workspace: --var node_type_id=...
    assert variables["spark_version"]["default"] == "17.3.x-scala2.13"
    assert {"landing", "warehouse", "catalog", "schema_prefix", "conf"} <= set(variables)
    assert variables["schema_prefix"]["default"] == ""
    committed = (PROJECT_ROOT / bundle.job_file(load_graph())).read_text(encoding="utf-8")
    assert "data_security_mode: SINGLE_USER  # dedicated access" in committed


def test_every_task_parameter_is_accepted_by_lakehouse_task(documents):
    for task in job_of(documents)["tasks"]:
        params = task["python_wheel_task"]["parameters"]
        assert bundle.parameter_problems(task["task_key"], params) == []
    assert bundle.parameter_problems("a", ["--task=a", "--bogus=1"]) == [
        "lakehouse-task refuses its parameters: lakehouse-task: error: unrecognized arguments: --bogus=1"
    ]
    assert bundle.parameter_problems("a", ["--task=b"]) == ["parameters run task 'b', not 'a'"]
    assert "refuses" in bundle.parameter_problems("a", ["--landing=x"])[0]  # --task is required


def test_check_catches_an_unknown_key_and_a_wrong_type_through_the_typed_models(tmp_path, capsys):
    assert main(["bundle", "--out", str(tmp_path)]) == 0
    (tmp_path / "pyproject.toml").write_text((PROJECT_ROOT / "pyproject.toml").read_text())
    job_path = tmp_path / bundle.job_file(load_graph())
    doc = yaml.safe_load(job_path.read_text())
    job = doc["resources"]["jobs"]["catalog_lakehouse"]
    job["tasks"][0]["pyton_wheel_task"] = {}  # typo: unknown key
    job["tasks"][1]["max_retries"] = True  # a bool where the model wants an int
    job["job_clusters"][0]["new_cluster"]["num_workers"] = "two"
    job_path.write_text(yaml.safe_dump(doc, sort_keys=False))
    capsys.readouterr()
    assert main(["bundle", "--check", "--out", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    where = "resources/catalog_lakehouse_job.yml: resources.jobs.catalog_lakehouse"
    assert f"{where}.tasks[0]: unknown key 'pyton_wheel_task' (Task has no such field)" in err
    assert f"{where}.tasks[1].max_retries: must be int, got bool True" in err
    assert f"{where}.job_clusters[0].new_cluster.num_workers: must be int, got str 'two'" in err
    # Job.from_dict alone converts the bool quietly: hence the strict walk over its type hints
    assert Job.from_dict({"tasks": [{"task_key": "a", "max_retries": True}]}).tasks[0].max_retries == 1


def test_typed_models_accept_references_where_the_models_do():
    ok = {"task_key": "a", "max_retries": "${var.retries}", "libraries": "${var.libraries}"}
    assert model_problems(ok, Task, "t") == []
    assert model_problems({"task_key": "a", "max_retries": "2"}, Task, "t") == [
        "t.max_retries: must be int, got str '2'"
    ]
    assert model_problems({"task_key": "a", "libraries": [{"wheel": "x"}]}, Task, "t") == [
        "t.libraries[0]: unknown key 'wheel' (Library has no such field)"
    ]
    assert model_problems({"max_retries": 1}, Task, "t") == ["t: missing key 'task_key'"]
    assert model_problems({"tasks": {}}, Job, "job") == ["job.tasks: must be a list, got dict"]
    assert model_problems({"tags": {"team": 7}}, Job, "job") == ["job.tags.team: must be str, got int 7"]
    assert model_problems(
        {"schedule": {"quartz_cron_expression": "x", "timezone_id": "UTC", "pause_status": "SOMETIMES"}},
        Job,
        "job",
    )[0].startswith("job.schedule.pause_status: must be one of ['UNPAUSED', 'PAUSED']")


def test_validator_catches_broken_references(documents, tmp_path):
    broken = copy.deepcopy(documents)
    job = job_of(broken)
    job["tasks"][1]["depends_on"] = [{"task_key": "nope"}]
    job["tasks"][2]["job_cluster_key"] = "missing_cluster"
    job["tasks"][3]["python_wheel_task"]["entry_point"] = "not-a-script"
    job["tasks"][4]["python_wheel_task"]["parameters"].append("--bogus=1")
    job["schedule"] = {"quartz_cron_expression": "0 0/15 * * *", "timezone_id": "Mars/Olympus"}
    broken["databricks.yml"]["targets"]["dev"]["mode"] = "staging"
    problems = "\n".join(bundle.validate(written(broken, tmp_path), tmp_path, SCRIPTS))
    assert "depends on unknown task 'nope'" in problems
    assert "unknown job_cluster_key 'missing_cluster'" in problems
    assert "entry point 'not-a-script'" in problems
    assert f"task {job['tasks'][4]['task_key']}: lakehouse-task refuses its parameters" in problems
    assert "must have 6 or 7 fields" in problems
    assert "'Mars/Olympus' is not a known time zone" in problems
    assert "targets.dev.mode must be one of ['development', 'production']" in problems


def test_every_variable_used_is_declared(documents, tmp_path):
    broken = copy.deepcopy(documents)
    job_of(broken)["job_clusters"][0]["new_cluster"]["node_type_id"] = "${var.node_type}"
    broken["databricks.yml"]["targets"]["prod"]["variables"] = {"catalog": "prod", "schema": "x"}
    problems = bundle.validate(written(broken, tmp_path), tmp_path, SCRIPTS)
    assert problems == [
        "resources/catalog_lakehouse_job.yml: ${var.node_type} is not declared under databricks.yml variables",
        "databricks.yml: variable 'node_type_id' is declared but never used",
        "databricks.yml: targets.prod.variables.schema is not declared",
    ]


def test_validator_reports_files_the_include_misses(documents, tmp_path):
    moved = {"databricks.yml": documents["databricks.yml"], "jobs/job.yml": next(iter(documents.values()))}
    (tmp_path / "jobs").mkdir()
    (tmp_path / "jobs" / "job.yml").write_text("x: 1")
    problems = bundle.validate(moved, tmp_path, {})
    assert any("not matched by databricks.yml include" in p for p in problems)


def test_drift_between_graph_and_bundle_is_reported(documents):
    graph = load_graph()
    job_doc = copy.deepcopy(documents[bundle.job_file(graph)])
    tasks = job_doc["resources"]["jobs"][graph.name]["tasks"]
    dependent = next(t for t in tasks if t.get("depends_on"))
    dependent["depends_on"] = []
    assert any("dependencies differ" in p for p in bundle.graph_drift(graph, job_doc))


def test_only_jobs_are_exported(documents, tmp_path):
    extra = copy.deepcopy(documents)
    extra[bundle.job_file(load_graph())]["resources"]["pipelines"] = {}
    problems = bundle.validate(written(extra, tmp_path), tmp_path, SCRIPTS)
    assert problems == [
        "resources/catalog_lakehouse_job.yml: resources.pipelines: `lakehouse bundle` exports jobs only"
    ]


@pytest.mark.parametrize(
    "expression",
    [
        "0 0/15 * * * ?",
        "0 0 12 * * ?",
        "0 15 10 ? * MON-FRI",
        "0 15 10 L * ?",
        "0 15 10 L-2 * ?",
        "0 15 10 15W * ?",
        "0 15 10 LW * ?",
        "0 15 10 ? * 6L",
        "0 15 10 ? * 6#3",
        "0 15 10 ? * L",
        "0 0,15,30,45 8-18 ? JAN-MAR,DEC SUN,SAT 2026",
        "0 */5 * * * ?",
        "*/10 0-59/2 1,2,3 1-31 1-12 ?",
        "0 15 10 ? * * 2026-2030/2",
    ],
)
def test_valid_quartz_expressions(expression):
    assert cron_problems(expression) == []


@pytest.mark.parametrize(
    ("expression", "problem"),
    [
        ("0 0/15 * * *", "6 or 7 fields"),
        ("0 0 12 * * ? 2026 1", "6 or 7 fields"),
        ("0 0 12 * * *", "exactly one of day-of-month and day-of-week"),
        ("0 0 12 ? * ?", "exactly one of day-of-month and day-of-week"),
        ("60 0 12 * * ?", "seconds '60'"),
        ("0 60 12 * * ?", "minutes '60'"),
        ("0 0 24 * * ?", "hours '24'"),
        ("0 0 12 32 * ?", "day-of-month '32'"),
        ("0 0 12 0 * ?", "day-of-month '0'"),
        ("0 0 12 * 13 ?", "month '13'"),
        ("0 0 12 ? * 8", "day-of-week '8'"),
        ("0 0 12 ? * MON#6", "day-of-week 'MON#6'"),
        ("0 0 12 ? * FOO", "day-of-week 'FOO'"),
        ("0 0 12 * FOO ?", "month 'FOO'"),
        ("0 0/0 12 * * ?", "invalid step"),
        ("0 0/x 12 * * ?", "invalid step"),
        ("0 1-2-3 12 * * ?", "invalid range"),
        ("? 0 12 * * ?", "cannot be '?'"),
        ("0 0 12 * * ? 1969", "year '1969'"),
        ("0 0 12 L-31 * ?", "day-of-month 'L-31'"),
        ("0 0 12 32W * ?", "day-of-month '32W'"),
        ("0 0 12 * * ?,1", "day-of-week '?,1'"),
    ],
)
def test_invalid_quartz_expressions(expression, problem):
    problems = cron_problems(expression)
    assert problems and any(problem in p for p in problems), problems


def test_timezones():
    assert timezone_problems("UTC") == []
    assert timezone_problems("Europe/Berlin") == []
    assert timezone_problems(None) == ["timezone_id is required"]
    assert timezone_problems("Europe/Nowhere") == ["timezone_id 'Europe/Nowhere' is not a known time zone"]
    assert timezone_problems("../etc") != []
