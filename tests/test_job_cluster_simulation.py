"""The exported Databricks job, run as a job cluster runs it, as closely as one machine allows.

What a cluster does, and what stands in for it here:
- the bundle builds the wheel (`pip wheel --no-deps`) and the cluster installs it into a
  Python that has the runtime's Spark and Delta: here a fresh virtualenv outside the
  repository, with the wheel and the `spark` extra's pins (PySpark and delta-spark);
- the Jobs service runs each task of `resources/*.yml` in graph order as `lakehouse-task`
  with the task's parameters, the `${var.*}` filled in from `databricks.yml` (the default
  target's values, test folders for landing and warehouse): here each task is its own
  process, started from an empty folder, with nothing of the repository on any path;
- the runtime hands the process a session carrying Delta (`DATABRICKS_RUNTIME_VERSION` set,
  Delta's SQL extension and catalog built in, the job cluster's `spark_conf` applied): here
  `PYSPARK_SUBMIT_ARGS` gives the session Delta's jars (resolved once, as a runtime has them
  built in) and those settings, plus some that only make one small machine quicker
  (`SMALL_MACHINE_CONF`, the C1 compiler, a JVM class archive);
- the tables live in a catalog every task process sees: `--catalog=spark_catalog` on a Hive
  metastore (Derby, in a test folder)
  that every task process opens in turn, as Unity Catalog is shared by a job's tasks: the
  tables are that catalog's managed tables `spark_catalog.<schema_prefix><layer>.<table>`,
  in schemas the job creates itself (no Unity Catalog runs outside Databricks).

Then the same landing goes through a local run (the default engine), and the job's tables
must hold the same rows: gold row for row, bronze and silver by count. And a task that fails
must fail when started as the Jobs service starts it: by calling the entry point.
"""

from __future__ import annotations

import graphlib
import importlib.metadata
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from pipelines.core.config import PROJECT_ROOT
from pipelines.core.graph import load_graph
from pipelines.orchestration.runner import run_pipeline
from pipelines.runtime.java import ensure_java
from pipelines.runtime.spark import DELTA_SQL_CONF, SMALL_INPUT_CONF, delta_package
from pipelines.store import LAYERS, open_store
from tests.support.engines import skip_without_delta_spark
from tests.support.packaging import build_wheel
from tests.support.tables import table_differences

pytestmark = pytest.mark.slow

VARIABLE = re.compile(r"\$\{var\.([A-Za-z_][A-Za-z0-9_]*)\}")
ANY_REFERENCE = re.compile(r"\$\{[^}]*\}")
JAVA_OPTIONS = "spark.driver.extraJavaOptions"
# Settings that only make one small machine quicker; none changes what a task computes. The
# plans run as a local run runs small inputs (`SMALL_INPUT_CONF`: interpreted, one partition).
SMALL_MACHINE_CONF = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.default.parallelism": "2",
    "spark.databricks.delta.snapshotPartitions": "2",
    "spark.driver.memory": "1g",
    **SMALL_INPUT_CONF,
}
# a JVM that lives for one small task never earns back C2's compile time (pipelines/runtime/tuning/jit.py)
SMALL_MACHINE_JAVA = ["-XX:TieredStopAtLevel=1", "-XX:ReservedCodeCacheSize=240m"]
QUIET_CDS = ["-Xlog:cds=off", "-Xlog:cds+dynamic=off"]
TASK_TIMEOUT_SECONDS = 900

# Loads the classes a task loads (a session, Delta writes, a merge, a catalog table) in a JVM
# that writes them to a class archive as it exits, and waits for that exit. Prints the Delta
# jars Spark's resolver found, which the tasks then get as they are.
RECORD_CLASSES = """
import sys
from delta.tables import DeltaTable
from pyspark.sql import SparkSession

spark = SparkSession.builder.getOrCreate()
print(spark.sparkContext.getConf().get("spark.jars"))
path = sys.argv[1]
spark.range(10).write.format("delta").save(path)
spark.sql(f"CREATE TABLE warm USING DELTA LOCATION '{path}'")
table = DeltaTable.forPath(spark, path)
table.alias("t").merge(spark.range(5).alias("s"), "t.id = s.id").whenMatchedUpdateAll().execute()
assert spark.table("warm").count() == 10 and table.history().count() == 2
jvm = spark.sparkContext._gateway.proc
spark.stop()
jvm.stdin.close()  # PySpark's JVM exits at the end of its stdin, and writes the archive then
sys.exit(jvm.wait(timeout=600))
"""

# How the Jobs service starts a wheel task: it calls the entry point as a function with
# sys.argv set to the parameters; the task fails when the call raises, whatever it returns.
CALL_ENTRY_POINT = """
import sys
from importlib.metadata import distribution

package, name, *parameters = sys.argv[1:]
(entry,) = [e for e in distribution(package).entry_points if e.name == name]
sys.argv = [name, *parameters]
entry.load()()
"""


def runtime_requirements() -> list[str]:
    """What a Databricks runtime brings that the wheel leaves out: the `spark` extra's pins."""
    requirements = importlib.metadata.requires("catalog-lakehouse") or []
    found = [r.split(";")[0].strip() for r in requirements if re.search(r"extra\s*==\s*.spark.", r)]
    assert found, "the spark extra names no requirements"
    return found


@pytest.fixture(scope="session")
def wheel(tmp_path_factory) -> Path:
    """The wheel as the bundle's artifact builds it."""
    return build_wheel(tmp_path_factory.mktemp("wheel-source"), tmp_path_factory.mktemp("dist"))


@pytest.fixture(scope="session")
def cluster_python(wheel, tmp_path_factory) -> Path:
    """A fresh virtualenv (one per test session) with the wheel and the runtime's PySpark and delta-spark."""
    venv = tmp_path_factory.mktemp("cluster") / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    installed = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
        + [str(wheel), *runtime_requirements()],
        capture_output=True,
        text=True,
    )
    assert installed.returncode == 0, installed.stderr[-3000:]
    return venv


@dataclass(frozen=True)
class Runtime:
    """What the tasks' JVMs start with: Delta's jars, and a class archive to map (or None)."""

    jars: str
    class_archive: Path | None


@pytest.fixture(scope="session")
def runtime(cluster_python, tmp_path_factory) -> Runtime:
    """Delta's jars as Spark's resolver fetches them (once: a runtime has them built in, so the
    tasks get the jars, not a package to resolve), and a JVM class archive of the classes a task
    loads, which every task's JVM maps instead of loading them from jars again (none where this
    JDK cannot record one: the tasks start without)."""
    folder = tmp_path_factory.mktemp("runtime")
    archive = folder / "spark.jsa"
    env = runtime_environment(
        cluster_python,
        {},
        ["--packages", delta_package()],
        java=[f"-XX:ArchiveClassesAtExit={archive}", *QUIET_CDS],
    )
    recorded = subprocess.run(
        [str(cluster_python / "bin" / "python"), "-c", RECORD_CLASSES, str(folder / "table")],
        cwd=empty_folder(folder / "cwd"),
        env=env,
        capture_output=True,
        text=True,
        timeout=TASK_TIMEOUT_SECONDS,
    )
    assert recorded.returncode == 0, recorded.stderr[-3000:]
    jars = recorded.stdout.strip().splitlines()[0]
    assert "delta-spark" in jars, jars
    return Runtime(jars, archive if archive.is_file() and archive.stat().st_size > 0 else None)


def load_bundle(root: Path) -> tuple[dict, list[dict]]:
    """databricks.yml and the resource files it includes, as YAML mappings."""
    bundle = yaml.safe_load((root / "databricks.yml").read_text(encoding="utf-8"))
    resources = [
        yaml.safe_load(path.read_text(encoding="utf-8"))
        for pattern in bundle.get("include", [])
        for path in sorted(root.glob(pattern))
    ]
    assert resources, f"databricks.yml includes no resource files ({bundle.get('include')})"
    return bundle, resources


def bundle_variables(bundle: dict, **values: str) -> dict[str, str]:
    """Each variable's value in the default target: its default, the target's value, then `values`."""
    (target,) = [t or {} for t in bundle["targets"].values() if (t or {}).get("default")]
    variables = {name: (spec or {}).get("default") for name, spec in bundle["variables"].items()}
    variables.update(target.get("variables") or {})
    unknown = set(values) - set(variables)
    assert not unknown, f"databricks.yml declares no variables {sorted(unknown)}"
    variables.update(values)
    missing = sorted(name for name, value in variables.items() if value is None)
    assert not missing, f"variables with no value: {missing}"
    return {name: str(value) for name, value in variables.items()}


def fill(value, variables: dict[str, str]):
    """`value` with every `${var.X}` replaced; a reference left over (an unknown variable, or
    another kind such as `${bundle.target}`) fails the test."""
    if isinstance(value, dict):
        return {k: fill(v, variables) for k, v in value.items()}
    if isinstance(value, list):
        return [fill(v, variables) for v in value]
    if not isinstance(value, str):
        return value
    filled = VARIABLE.sub(lambda m: variables.get(m.group(1), m.group(0)), value)
    left = ANY_REFERENCE.findall(filled)
    assert not left, f"unfilled references {left} in {value!r}"
    return filled


def job_of(resources: list[dict]) -> dict:
    """The one job the resource files declare."""
    (job,) = [
        job
        for resource in resources
        for job in ((resource.get("resources") or {}).get("jobs") or {}).values()
    ]
    return job


def in_graph_order(tasks: list[dict]) -> list[dict]:
    """The job's tasks in an order the Jobs service may run them one by one: each after its `depends_on`."""
    by_key = {task["task_key"]: task for task in tasks}
    sorter = graphlib.TopologicalSorter(
        {key: [d["task_key"] for d in task.get("depends_on", [])] for key, task in by_key.items()}
    )
    return [by_key[key] for key in sorter.static_order()]


def runtime_environment(
    venv: Path,
    cluster: dict,
    delta: list[str],
    conf: dict[str, str] | None = None,
    java: list[str] | None = None,
) -> dict[str, str]:
    """The environment a task process gets on the cluster: a runtime version, a session carrying
    Delta (`delta`: spark-submit's options that add its jars) and the cluster's settings, the
    cluster's environment variables; no PYTHONPATH."""
    settings = {**DELTA_SQL_CONF, **(cluster.get("spark_conf") or {}), **SMALL_MACHINE_CONF, **(conf or {})}
    settings[JAVA_OPTIONS] = " ".join([*SMALL_MACHINE_JAVA, *(java or [])])
    submit = list(delta)
    for key, value in settings.items():
        submit += ["--conf", f"{key}={value}"]
    path = [
        p for p in os.environ.get("PATH", "").split(os.pathsep) if p and not _inside(Path(p), PROJECT_ROOT)
    ]
    env = {
        "PATH": os.pathsep.join(path or ["/usr/bin", "/bin"]),
        "HOME": os.environ.get("HOME", str(Path.home())),  # where Spark's Ivy cache keeps Delta's jars
        "DATABRICKS_RUNTIME_VERSION": "17.3",
        "PYSPARK_PYTHON": str(venv / "bin" / "python"),
        "PYSPARK_SUBMIT_ARGS": shlex.join([*submit, "pyspark-shell"]),
        **{str(k): str(v) for k, v in (cluster.get("spark_env_vars") or {}).items()},
    }
    env["JAVA_HOME"] = ensure_java()  # a runtime has its JDK; here the one the suite finds
    for name in ("TMPDIR", "LANG"):
        if os.environ.get(name):
            env[name] = os.environ[name]
    return env


def catalog_settings(catalog: str, root: Path) -> tuple[dict[str, str], list[str]]:
    """Spark settings and Java options of the catalog the task processes share."""
    if not catalog:  # each process's in-memory session catalog; its schemas' folders under `root`
        return {"spark.sql.warehouse.dir": str(root / "session-catalog")}, []
    metastore = root / "metastore"
    return {
        "spark.sql.catalogImplementation": "hive",
        "spark.sql.warehouse.dir": str(metastore / "managed"),
        "spark.hadoop.javax.jdo.option.ConnectionURL": f"jdbc:derby:;databaseName={metastore / 'db'};create=true",
    }, [f"-Dderby.system.home={metastore}"]


def _inside(path: Path, folder: Path) -> bool:
    try:
        path.resolve().relative_to(folder.resolve())
        return True
    except ValueError:
        return False


def empty_folder(path: Path) -> Path:
    path.mkdir(parents=True)
    assert not any(path.iterdir())
    return path


def assert_nothing_from_the_repository(venv: Path, env: dict[str, str], cwd: Path) -> None:
    """The task processes import the installed wheel and runtime, nothing of the repository."""
    probe = (
        "import json, sys, pipelines, bronze, silver, gold, pyspark, delta; "
        "print(json.dumps({'modules': [m.__file__ for m in (pipelines, bronze, silver, gold, pyspark, delta)], "
        "'path': sys.path}))"
    )
    done = subprocess.run(
        [str(venv / "bin" / "python"), "-c", probe], cwd=cwd, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    for module in found["modules"]:
        assert _inside(Path(module), venv), f"{module} is not the installed one"
    assert not [p for p in found["path"] if p and _inside(Path(p), PROJECT_ROOT)], found["path"]


def run_job(venv: Path, job: dict, env: dict[str, str], root: Path) -> dict[str, float]:
    """Every task in graph order, each as its own process from an empty folder; seconds per task."""
    clusters = {c["job_cluster_key"]: c["new_cluster"] for c in job.get("job_clusters", [])}
    seconds = {}
    for task in in_graph_order(job["tasks"]):
        key = task["task_key"]
        wheel_task = task["python_wheel_task"]
        assert wheel_task["package_name"] == "catalog-lakehouse"
        assert task["job_cluster_key"] in clusters
        started = time.monotonic()
        done = subprocess.run(
            [str(venv / "bin" / wheel_task["entry_point"]), *wheel_task["parameters"]],
            cwd=empty_folder(root / "tasks" / key),
            env=env,
            capture_output=True,
            text=True,
            timeout=TASK_TIMEOUT_SECONDS,
        )
        seconds[key] = time.monotonic() - started
        assert done.returncode == 0, f"{key} exited {done.returncode}:\n{done.stdout}\n{done.stderr[-5000:]}"
        first = done.stdout.splitlines()[0] if done.stdout else ""
        assert "engine=delta-spark" in first, f"{key}: first line {first!r}"
        assert re.search(rf"^success\s+task={key}\s", done.stdout, re.M), f"{key}:\n{done.stdout}"
    return seconds


def managed_tables(metastore: Path, schema_prefix: str) -> dict[str, Path]:
    """{`<layer>.<table>`: its folder} for the managed tables of the Hive metastore's schemas."""
    found = {}
    for layer in LAYERS:
        schema = metastore / "managed" / f"{schema_prefix}{layer}.db"
        for table in sorted(schema.iterdir()) if schema.is_dir() else []:
            if (table / "_delta_log").is_dir():
                found[f"{layer}.{table.name}"] = table
    return found


def simulated_job(catalog: str, cluster_python: Path, runtime: Runtime | None, root: Path):
    """The job's variables, filled-in job and task environment for `catalog` (`runtime`: None
    for a task that fails before it starts Spark)."""
    bundle, resources = load_bundle(PROJECT_ROOT)
    variables = bundle_variables(
        bundle,
        landing=str(root / "landing"),
        warehouse=str(root / "warehouse"),
        catalog=catalog,
        conf="",
        node_type_id="local",
    )
    job = fill(job_of(resources), variables)
    (cluster,) = [c["new_cluster"] for c in job["job_clusters"]]
    conf, java = catalog_settings(catalog, root)
    if runtime is not None and runtime.class_archive is not None:
        java += [f"-XX:SharedArchiveFile={runtime.class_archive}", *QUIET_CDS]
    delta = ["--jars", runtime.jars] if runtime is not None else []
    return variables, job, runtime_environment(cluster_python, cluster, delta, conf, java)


# The named catalog only: it is what the bundle deploys with (Unity Catalog). The session-catalog
# path (`--catalog=""`) is the local one, run by the CLI tests; the job is one run per catalog.
@pytest.mark.parametrize("catalog", ["spark_catalog"], ids=["named-catalog"])
def test_the_exported_job_on_a_simulated_cluster_builds_the_tables_a_local_run_builds(
    catalog, cluster_python, runtime, config, spark, tmp_path, monkeypatch
):
    skip_without_delta_spark("delta-spark")
    shutil.copytree(PROJECT_ROOT / "samples" / "landing", tmp_path / "landing")
    variables, job, env = simulated_job(catalog, cluster_python, runtime, tmp_path)
    assert_nothing_from_the_repository(cluster_python, env, empty_folder(tmp_path / "probe"))

    started = time.monotonic()
    seconds = run_job(cluster_python, job, env, tmp_path)
    print(
        f"\n{len(seconds)} tasks in {time.monotonic() - started:.0f} s: "
        + ", ".join(f"{k}={s:.0f}" for k, s in seconds.items())
    )
    assert sorted(seconds) == sorted(t.key for t in load_graph().tasks)  # every task of conf/jobs.yaml

    monkeypatch.delenv("LAKEHOUSE_IP_SALT", raising=False)  # the job's cluster sets none either
    local = config.with_overrides(landing=variables["landing"], warehouse=str(tmp_path / "local"))
    run_pipeline(local, spark=spark)
    expected = open_store(spark, local.warehouse, "delta-rs")
    reader = open_store(spark, variables["warehouse"], "delta-rs")  # the same Delta folders, read here
    if catalog:
        tables = managed_tables(tmp_path / "metastore", variables["schema_prefix"])
        assert not any(
            (Path(variables["warehouse"]) / layer).exists() for layer in ("bronze", "silver", "gold")
        )
    else:
        tables = {name: Path(reader.path(name)) for name in reader.tables()}
    assert sorted(tables) == sorted(expected.tables())
    for name, folder in tables.items():
        simulated = reader.engine.read(str(folder))
        if name.startswith(("bronze.", "silver.")):
            assert simulated.count() == expected.read(name).count(), name
        elif name.startswith("gold."):
            differences = table_differences(simulated, expected.read(name))
            assert differences is None, f"{name}:\n{differences}"


def test_a_failing_task_fails_when_called_as_the_jobs_service_calls_it(cluster_python, tmp_path):
    """A task that fails (here: its landing folder is missing) must fail the job run: the Jobs
    service calls the entry point as a function, so the failure has to be raised, not returned."""
    variables, job, env = simulated_job("", cluster_python, None, tmp_path)  # no landing copied
    (task,) = [t for t in job["tasks"] if t["task_key"] == "bronze_datahub_audit_events"]
    wheel_task = task["python_wheel_task"]
    done = subprocess.run(
        [str(cluster_python / "bin" / "python"), "-c", CALL_ENTRY_POINT]
        + [wheel_task["package_name"], wheel_task["entry_point"], *wheel_task["parameters"]],
        cwd=empty_folder(tmp_path / "task"),
        env=env,
        capture_output=True,
        text=True,
        timeout=TASK_TIMEOUT_SECONDS,
    )
    assert done.returncode != 0, f"the failed task passed:\n{done.stdout}\n{done.stderr}"
    assert f"landing folder {variables['landing']} does not exist" in done.stderr
