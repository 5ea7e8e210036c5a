"""The Databricks Asset Bundle: exported from the job graph, committed, valid offline."""

from __future__ import annotations

import copy

import pytest
import yaml

from pipelines import bundle
from pipelines.bundle import cron_problems, timezone_problems, unknown_keys
from pipelines.config import PROJECT_ROOT, load_config
from pipelines.graph import load_graph


@pytest.fixture(scope="module")
def documents():
    return bundle.bundle_documents(load_graph(), load_config())


def job_of(documents):
    graph = load_graph()
    return documents[bundle.job_file(graph)]["resources"]["jobs"][graph.name]


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
            "parameters": ["--task", task["task_key"]],
        }
        assert task["libraries"] == [{"whl": "../dist/*.whl"}]
    main = documents["databricks.yml"]
    assert main["include"] == ["resources/*.yml"]
    assert set(main["targets"]) == {"dev", "prod"}
    assert main["artifacts"]["lakehouse_wheel"]["type"] == "whl"


def test_validator_catches_broken_bundles(documents, tmp_path):
    graph = load_graph()
    job_path = bundle.job_file(graph)
    broken = copy.deepcopy(documents)
    job = broken[job_path]["resources"]["jobs"][graph.name]
    job["tasks"][0]["pyton_wheel_task"] = {}  # typo: unknown key
    job["tasks"][1]["depends_on"] = [{"task_key": "nope"}]
    job["tasks"][2]["job_cluster_key"] = "missing_cluster"
    job["tasks"][3]["python_wheel_task"]["entry_point"] = "not-a-script"
    job["schedule"] = {"quartz_cron_expression": "0 0/15 * * *", "timezone_id": "Mars/Olympus"}
    broken["databricks.yml"]["targets"]["dev"]["mod"] = "development"
    for relative, doc in broken.items():
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relative).write_text(yaml.safe_dump(doc))
    problems = "\n".join(bundle.validate(broken, tmp_path, {"lakehouse-task": "pipelines.cli:task_main"}))
    assert "unknown key 'pyton_wheel_task'" in problems
    assert "depends on unknown task 'nope'" in problems
    assert "unknown job_cluster_key 'missing_cluster'" in problems
    assert "entry point 'not-a-script'" in problems
    assert "must have 6 or 7 fields" in problems
    assert "'Mars/Olympus' is not a known time zone" in problems
    assert "databricks.yml.targets.dev: unknown key 'mod'" in problems


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


def test_unknown_keys_walks_lists_and_named_maps():
    doc = {"resources": {"jobs": {"j": {"tasks": [{"task_key": "a", "libraries": [{"wheel": "x"}]}]}}}}
    assert unknown_keys(doc, bundle._keys(resources=bundle.RESOURCES_KEYS), "f") == [
        "f.resources.jobs.j.tasks[0].libraries[0]: unknown key 'wheel'"
    ]
    assert unknown_keys({"tasks": {}}, bundle.JOB_KEYS, "job") == ["job.tasks: must be a list"]


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
