"""The exported Databricks job, run as a job cluster runs it, as closely as one machine allows.

What a cluster does, and what stands in for it here:
- the bundle builds the wheel (`pip wheel --no-deps`) and the cluster installs it into a
  Python that has the runtime's Spark and Delta: here a virtualenv outside the repository with
  the `spark` extra's pins (PySpark and delta-spark), built once per machine as a runtime's
  image is, into which each test session installs the wheel;
- `databricks bundle deploy` merges the default target (`dev`) over the job and fills in its
  references (variables, the user's name, the development-mode schema prefix): here
  `pipelines.deploy.deployments` merges it, for a user `tester`, test folders given for
  landing and warehouse;
- the Jobs service starts each task of the job once the tasks it depends on are done, every
  ready task at once, each in its own process, and retries a failed one up to its
  `max_retries` (`tests.support.jobs_service`): so the task groups that may run side by side
  do, as `lakehouse-task --group` processes started from empty folders, with nothing of the
  repository on any path, after the collect tasks (`lakehouse-collect`, their servers left
  unset here: each pulls nothing and succeeds), and the maintenance task runs last;
- the runtime hands the process a session carrying Delta (`DATABRICKS_RUNTIME_VERSION` set,
  Delta's SQL extension and catalog built in, the job cluster's `spark_conf` applied): here
  `PYSPARK_SUBMIT_ARGS` gives the session Delta's jars (resolved once, as a runtime has them
  built in) and those settings, plus some that only make one small machine quicker
  (`SMALL_MACHINE_CONF`, the C1 compiler, the parallel collector, a JVM class archive);
- the cluster sets its `spark_env_vars`, resolving `{{secrets/<scope>/<key>}}` from the secret
  scope: here from `SECRETS`, so the IP salt reaches gold.failed_logins only through the scope;
- the tables live in a catalog every task process opens at once, as Unity Catalog serves a
  job's tasks: `--catalog=spark_catalog` on a Hive metastore service
  (`tests.support.hive_metastore`); the tables are its managed tables
  `spark_catalog.<schema_prefix><layer>.<table>`, in schemas the job creates itself.

Then the same landing goes through a local run (the default engine, the same salt), and the
job's tables must hold the same rows: gold row for row, bronze and silver by count. And a task
that fails must fail when started as the Jobs service starts it: by calling the entry point.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import re
import shlex
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from pipelines.core.config import PROJECT_ROOT
from pipelines.core.graph import load_graph
from pipelines.core.task_groups import task_groups
from pipelines.deploy import collect_tasks
from pipelines.deploy.bundle import NOTIFY_TASK
from pipelines.deploy.deployments import MAIN, Deployment, deployment
from pipelines.orchestration.runner import run_pipeline
from pipelines.runtime.java import ensure_java
from pipelines.runtime.spark import DELTA_SQL_CONF, SMALL_INPUT_CONF, delta_package
from pipelines.runtime.tuning.collector import COLLECTORS
from pipelines.store import LAYERS, open_store
from pipelines.store.engine import TableRef
from tests.support.cached_venvs import beside, built_once, cached_venv, install_wheel
from tests.support.engines import skip_without_delta_spark
from tests.support.hive_metastore import hive_metastore
from tests.support.jobs_service import overlapping, run_job
from tests.support.packaging import build_wheel, wheel_dependencies
from tests.support.tables import table_differences

pytestmark = [pytest.mark.slow, pytest.mark.heavy]

ANY_REFERENCE = re.compile(r"\$\{[^}]*\}")
SECRET_REFERENCE = re.compile(r"\{\{secrets/([^/}]+)/([^/}]+)\}\}")
SALT_SECRET = ("catalog_lakehouse", "ip_salt")
SECRETS = {SALT_SECRET: "salt-from-the-secret-scope-7f3a"}  # the workspace's secret scopes
USER = "tester"  # the deploying user's short name
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
# a JVM that lives for one small task never earns back C2's compile time (pipelines/runtime/tuning/jit.py);
# a batch job's least CPU is the parallel collector's (pipelines/runtime/tuning/collector.py)
SMALL_MACHINE_JAVA = ["-XX:TieredStopAtLevel=1", "-XX:ReservedCodeCacheSize=240m", COLLECTORS["parallel"]]
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
def cluster_python(wheel) -> Path:
    """A virtualenv with the runtime's PySpark and delta-spark and the wheel's dependencies (built
    once per machine, as a runtime's image is: `tests.support.cached_venvs`), and this session's
    wheel installed into it, as the cluster installs a job's wheel with its dependencies."""
    venv = cached_venv("cluster-runtime", [*runtime_requirements(), *wheel_dependencies()])
    install_wheel(venv, wheel)
    return venv


@dataclass(frozen=True)
class Runtime:
    """What the tasks' JVMs start with: Delta's jars, and a class archive to map (or None)."""

    jars: str
    class_archive: Path | None


@pytest.fixture(scope="session")
def runtime(cluster_python) -> Runtime:
    """Delta's jars as Spark's resolver fetches them (a runtime has them built in, so the tasks
    get the jars, not a package to resolve), and a JVM class archive of the classes a task
    loads, which every task's JVM maps instead of loading them from jars again (none where this
    JDK cannot record one: the tasks start without). Both are recorded once per runtime venv,
    JDK and Delta version, as a runtime's image carries them, and kept beside the venv."""
    folder = beside(cluster_python, "classes", ensure_java(), delta_package())
    archive = folder / "spark.jsa"

    def record(folder: Path) -> None:
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
        (folder / "jars").write_text(recorded.stdout.strip().splitlines()[0])

    built_once(folder, record)
    jars = (folder / "jars").read_text()
    assert "delta-spark" in jars, jars
    return Runtime(jars, archive if archive.is_file() and archive.stat().st_size > 0 else None)


def load_documents(root: Path) -> dict[str, dict]:
    """databricks.yml and the files it includes, as YAML mappings by relative path."""
    main = yaml.safe_load((root / MAIN).read_text(encoding="utf-8"))
    documents = {MAIN: main}
    for pattern in main.get("include", []):
        for path in sorted(root.glob(pattern)):
            documents[str(path.relative_to(root))] = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert len(documents) > 1, f"databricks.yml includes no resource files ({main.get('include')})"
    return documents


def deployed_job(documents: dict[str, dict], **values: str) -> tuple[Deployment, dict]:
    """The default target as `databricks bundle deploy` makes it, for user `USER`, `values` given
    as `--var`: its variables and its one job, every reference filled in (one left over, such as
    a variable set only by a lookup, fails the test)."""
    main = documents[MAIN]
    (target,) = [name for name, t in main["targets"].items() if (t or {}).get("default")]
    deployed = deployment(documents, target)
    unknown = set(values) - set(deployed.variables)
    assert not unknown, f"databricks.yml declares no variables {sorted(unknown)}"
    deployed.variables.update(values)
    (job,) = deployed.jobs.values()
    job = deployed.resolve(
        job, user=USER, bundle_name=main["bundle"]["name"], user_name=f"{USER}@example.com"
    )
    left = ANY_REFERENCE.findall(json.dumps(job))
    assert not left, f"unfilled references {left}"
    return deployed, job


def cluster_environment(cluster: dict) -> dict[str, str]:
    """The job cluster's `spark_env_vars` as the cluster sets them: `{{secrets/<scope>/<key>}}`
    replaced by the secret (a cluster whose secret is missing does not start)."""
    variables = {}
    for name, value in (cluster.get("spark_env_vars") or {}).items():
        reference = SECRET_REFERENCE.fullmatch(str(value))
        if reference:
            assert reference.groups() in SECRETS, f"cluster fails to start: no secret {reference.groups()}"
            value = SECRETS[reference.groups()]
        variables[str(name)] = str(value)
    return variables


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
        **cluster_environment(cluster),
    }
    env["JAVA_HOME"] = ensure_java()  # a runtime has its JDK; here the one the suite finds
    for name in ("TMPDIR", "LANG"):
        if os.environ.get(name):
            env[name] = os.environ[name]
    return env


def catalog_settings(metastore_uri: str | None, root: Path) -> dict[str, str]:
    """Spark settings of the catalog the task processes share: the Hive metastore service at
    `metastore_uri`, its managed tables' folders under `root` (None: each process's in-memory
    session catalog)."""
    if metastore_uri is None:
        return {"spark.sql.warehouse.dir": str(root / "session-catalog")}
    return {
        "spark.sql.catalogImplementation": "hive",
        "spark.sql.warehouse.dir": str(root / "managed"),
        "spark.hadoop.hive.metastore.uris": metastore_uri,
    }


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


def task_starter(venv: Path, env: dict[str, str], root: Path):
    """Starts one attempt of a task as the cluster does: the wheel task's entry point in a
    process of its own, from an empty folder; its output kept in `root/logs/<task>-<attempt>.*`."""
    attempts: dict[str, int] = {}

    def start(task: dict) -> subprocess.CompletedProcess:
        key = task["task_key"]
        wheel_task = task["python_wheel_task"]
        assert wheel_task["package_name"] == "catalog-lakehouse"
        attempts[key] = attempts.get(key, 0) + 1
        name = f"{key}-{attempts[key]}"
        done = subprocess.run(
            [str(venv / "bin" / wheel_task["entry_point"]), *wheel_task["parameters"]],
            cwd=empty_folder(root / "tasks" / name),
            env=env,
            capture_output=True,
            text=True,
            timeout=TASK_TIMEOUT_SECONDS,
        )
        (root / "logs").mkdir(exist_ok=True)
        (root / "logs" / f"{name}.out").write_text(done.stdout)
        (root / "logs" / f"{name}.err").write_text(done.stderr)
        (root / "logs" / f"{name}.rc").write_text(str(done.returncode))
        return done

    return start


def failed_attempts(root: Path) -> list[str]:
    """`<task>-<attempt>: <reason>` of each attempt that failed (the job retried it): the last
    line of its stderr naming an error."""
    found = []
    for err in sorted((root / "logs").glob("*.err")):
        if err.with_suffix(".rc").read_text() != "0":
            reasons = [
                line
                for line in err.read_text().splitlines()
                if re.match(r"(lakehouse:|\w+(\.\w+)*Error)", line)
            ]
            found.append(f"{err.stem}: {reasons[-1] if reasons else 'no reason printed'}")
    return found


def managed_tables(managed: Path, schema_prefix: str) -> dict[str, Path]:
    """{`<layer>.<table>`: its folder} for the managed tables of the metastore's schemas."""
    found = {}
    for layer in LAYERS:
        schema = managed / f"{schema_prefix}{layer}.db"
        for table in sorted(schema.iterdir()) if schema.is_dir() else []:
            if (table / "_delta_log").is_dir():
                found[f"{layer}.{table.name}"] = table
    return found


def simulated_job(metastore_uri: str | None, cluster_python: Path, runtime: Runtime | None, root: Path):
    """The deployed job's variables, its filled-in job and the task environment (`runtime`: None
    for a task that fails before it starts Spark)."""
    deployed, job = deployed_job(
        load_documents(PROJECT_ROOT),
        landing=str(root / "landing"),
        warehouse=str(root / "warehouse"),
        catalog="spark_catalog",
        conf="",
    )
    variables = {k: deployed.resolve(v, user=USER) for k, v in deployed.variables.items()}
    (cluster,) = [c["new_cluster"] for c in job["job_clusters"]]
    java = []
    if runtime is not None and runtime.class_archive is not None:
        java += [f"-XX:SharedArchiveFile={runtime.class_archive}", *QUIET_CDS]
    delta = ["--jars", runtime.jars] if runtime is not None else []
    conf = catalog_settings(metastore_uri, root)
    return variables, job, runtime_environment(cluster_python, cluster, delta, conf, java)


@pytest.fixture(scope="module")
def metastore(tmp_path_factory):
    """The Hive metastore service every task process of the job uses at once."""
    with hive_metastore(tmp_path_factory.mktemp("metastore")) as uri:
        yield uri


def test_the_exported_job_on_a_simulated_cluster_builds_the_tables_a_local_run_builds(
    cluster_python, runtime, metastore, config, spark, tmp_path, monkeypatch
):
    skip_without_delta_spark("delta-spark")
    shutil.copytree(PROJECT_ROOT / "samples" / "landing", tmp_path / "landing")
    variables, job, env = simulated_job(metastore, cluster_python, runtime, tmp_path)
    assert_nothing_from_the_repository(cluster_python, env, empty_folder(tmp_path / "probe"))

    started = time.monotonic()
    runs = run_job(job["tasks"], task_starter(cluster_python, env, tmp_path))
    side_by_side = overlapping(runs)
    print(
        f"\n{len(runs)} job tasks in {time.monotonic() - started:.0f} s: "
        + ", ".join(
            f"{k}={r.seconds:.0f}" + (f" ({r.attempts} attempts)" if r.attempts > 1 else "")
            for k, r in runs.items()
        )
        + f"; side by side: {side_by_side}; failed attempts, retried: {failed_attempts(tmp_path)}"
    )
    # On the first run in an empty catalog, groups starting together race to create the tables
    # they share (ops.runs, ops.ingestion_log): one creation wins, the table store tries the
    # others again, and an attempt failing still fails with a concurrent write, which the job's
    # retries absorb. No attempt fails otherwise.
    for attempt in failed_attempts(tmp_path):
        assert "ConcurrentWriteError" in attempt, attempt
    graph = load_graph()
    groups = task_groups(graph)
    collect = {c.task_key: c.name for c in collect_tasks.scheduled(graph)}
    assert sorted(runs) == sorted([*collect, *(g.key for g in groups), NOTIFY_TASK, "maintenance"])
    for key, run in runs.items():
        assert run.state == "SUCCESS", f"{key} {run.state}:\n{run.stdout}\n{run.stderr[-5000:]}"
        first = run.stdout.splitlines()[0] if run.stdout else ""
        if key in collect:  # no server given: the pull has nothing to do
            assert first.startswith(f"lakehouse-collect: {collect[key]}: no server given"), first
            continue
        if key == NOTIFY_TASK:  # no target configured: nothing to tell, nothing read
            assert first.startswith("lakehouse-task --notify: notifications are off"), first
            continue
        assert "engine=delta-spark" in first, f"{key}: first line {first!r}"
        assert SECRETS[SALT_SECRET] not in run.stdout + run.stderr, f"{key} printed the IP salt"
    for group in groups:  # each group ran every table of its own, in one process (a retry finds
        for task in group.tasks:  # what a failed attempt committed: nothing new to do)
            line = rf"^(success|skipped)\s+task={task}\s"
            assert re.search(line, runs[group.key].stdout, re.M), runs[group.key].stdout
    may_overlap = {
        (a.key, b.key) for a in groups for b in groups if a.key < b.key and not _ordered(a.key, b.key, groups)
    }
    assert may_overlap & {tuple(sorted(pair)) for pair in side_by_side}, "no groups ran side by side"
    assert re.search(r"^done\s+tables=\d+", runs["maintenance"].stdout, re.M), runs["maintenance"].stdout

    monkeypatch.setenv("LAKEHOUSE_IP_SALT", SECRETS[SALT_SECRET])  # the salt the cluster took from the scope
    local = config.with_overrides(landing=variables["landing"], warehouse=str(tmp_path / "local"))
    run_pipeline(local, spark=spark)
    expected = open_store(spark, local.warehouse, "delta-rs")
    reader = open_store(spark, variables["warehouse"], "delta-rs")  # the same Delta folders, read here
    tables = managed_tables(tmp_path / "managed", variables["schema_prefix"])
    assert variables["schema_prefix"] == f"dev_{USER}_lakehouse_"  # development mode's per-user schemas
    assert not any((Path(variables["warehouse"]) / layer).exists() for layer in ("bronze", "silver", "gold"))
    assert sorted(tables) == sorted(expected.tables())
    for name, folder in tables.items():
        simulated = reader.engine.read(TableRef(name, path=str(folder)))
        if name.startswith(("bronze.", "silver.")):
            assert simulated.count() == expected.read(name).count(), name
        elif name.startswith("gold."):
            differences = table_differences(simulated, expected.read(name))
            assert differences is None, f"{name}:\n{differences}"


def _ordered(a: str, b: str, groups) -> bool:
    """Whether group `a` waits for `b`, directly or not, or `b` for `a`."""
    waits = {g.key: set(g.depends_on) for g in groups}

    def reaches(start: str, goal: str) -> bool:
        pending, seen = [start], set()
        while pending:
            key = pending.pop()
            if key == goal:
                return True
            if key not in seen:
                seen.add(key)
                pending.extend(waits[key])
        return False

    return reaches(a, b) or reaches(b, a)


def test_a_failing_task_fails_when_called_as_the_jobs_service_calls_it(cluster_python, tmp_path):
    """A task that fails (here: its landing folder is missing) must fail the job run: the Jobs
    service calls the entry point as a function, so the failure has to be raised, not returned."""
    variables, job, env = simulated_job(None, cluster_python, None, tmp_path)  # no landing copied
    (task,) = [t for t in job["tasks"] if t["task_key"] == "bronze_datahub"]
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
