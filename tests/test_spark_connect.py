"""The pipeline through Spark Connect, as Databricks serverless jobs, standard access mode clusters
and Databricks Connect run it: `lakehouse run` with `profile: connect`, a client of a Spark
Connect server that carries Delta (the delta-spark engine, tables by name) and otherwise Spark's
defaults, in two batches, builds the tables one local run builds from the same files, row for
row; `lakehouse sql` and `lakehouse timeline` answer through it too.

The runs keep the strictest rules of a Databricks compute (`profiles.connect.rules`), serverless's
(no session settings but a handful, no caching), from a thin client's install (`pyspark-client`,
no JVM: `tests.support.thin_client`), on the bundled samples and a generated landing side by
side: the session refuses what that compute refuses and writes each refusal on stderr, which
must stay free of them. What standard access mode and serverless each refuse is checked by a
probe of the rules session; the same two batches under standard access mode's rules (frames
cached, from the suite's own install) run in `make test-exhaustive`.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from benchmarks.workload import add_increment, generate_landing
from pipelines.orchestration.runner import run_pipeline
from pipelines.runtime.connect_siblings import client_closes_sessions_apart
from pipelines.runtime.rules_session import REFUSED
from pipelines.store import open_store
from tests.support.engines import with_engine
from tests.support.runs import PROCESS_TIMEOUT_SECONDS, SAMPLES, data_tables, lakehouse
from tests.support.tables import table_differences
from tests.support.thin_client import thin_client_python

pytestmark = [pytest.mark.slow, pytest.mark.heavy]  # a Spark Connect server, the pipeline through it twice

SECOND_LANDING = ("datahub_ece/2024-04", "openmetadata/2024-04-01", "datahub_audit/2024-03-03")
GENERATED = 1_000  # events of the generated landing: every source, more than one file each
URN = "urn:li:dataset:(urn:li:dataPlatform:snowflake,example.table,PROD)"


def _conf(folder: Path, server, prefix: str, rules: str) -> Path:
    """`profile: connect` against `server` under `rules`, Delta's own engine, the schemas of one warehouse."""
    path = folder / f"connect-{prefix}.yaml"
    settings = {
        "profile": "connect",
        "profiles": {"connect": {"remote": server.remote, "rules": rules}},
        "storage": {"engine": "delta-spark", "schema_prefix": prefix},
    }
    path.write_text(yaml.safe_dump(settings), encoding="utf-8")
    return path


def _run(conf: Path, landing: Path, warehouse: Path, python: Path | None = None) -> list[str]:
    """`lakehouse run` from the suite's install, or from `python`'s (run from an empty folder, so
    that it imports its own install); no refusal of the compute's rules on stderr."""
    arguments = ("run", "--conf", str(conf), "--landing", str(landing), "--warehouse", str(warehouse))
    if python is None:
        done = lakehouse(*arguments)
    else:
        folder = conf.parent / f"cwd-{len(list(conf.parent.glob('cwd-*')))}"
        folder.mkdir()
        command = [str(python), "-m", "pipelines.cli", *arguments]
        done = subprocess.run(
            command, cwd=folder, capture_output=True, text=True, timeout=PROCESS_TIMEOUT_SECONDS
        )
    assert done.returncode == 0, (done.stdout[-2000:], done.stderr[-3000:])
    assert REFUSED not in done.stderr, [line for line in done.stderr.splitlines() if REFUSED in line]
    return done.stdout.splitlines()


def assert_same_tables(spark, built: Path, reference: Path) -> None:
    """Every data table of `built` holds the rows of `reference`'s (bronze by count: its lineage
    names each run's landing folder; the columns derived from that path left out of the others)."""
    ours, theirs = open_store(spark, built, "delta-rs"), open_store(spark, reference, "delta-rs")
    assert sorted(data_tables(ours)) == sorted(data_tables(theirs))
    lineage = ("source_file", "quarantine_id")  # the quarantine's key hashes the landing path
    for table in data_tables(theirs):
        if table.startswith("bronze."):
            assert ours.read(table).count() == theirs.read(table).count(), table
            continue
        differences = table_differences(ours.read(table).drop(*lineage), theirs.read(table).drop(*lineage))
        assert differences is None, f"{table}: {differences}"


def _landing_parts(root: Path) -> tuple[Path, Path]:
    """(landing, generated): the bundled samples without `SECOND_LANDING`, with a generated
    landing of `GENERATED` events copied in beside them (its files are `<source>/part-*`, the
    samples' are in dated folders)."""
    landing, generated = root / "landing", root / "generated"
    shutil.copytree(
        SAMPLES, landing, ignore=shutil.ignore_patterns(*[p.split("/")[-1] for p in SECOND_LANDING])
    )
    generate_landing(generated, GENERATED, seed=5)
    shutil.copytree(generated, landing, dirs_exist_ok=True)  # copy2: modification times kept
    return landing, generated


@dataclass(frozen=True)
class ThroughConnect:
    landing: Path
    warehouse: Path
    conf: Path  # `profile: connect` against the suite's server
    first_lines: list[str]  # what the first run printed


def two_batches(root: Path, server, rules: str, python: Path | None) -> ThroughConnect:
    """Two batches through Spark Connect under `rules`, from `python`'s install (the suite's
    when None). The first is the samples (their malformed and quarantined records included)
    without `SECOND_LANDING`, and a generated landing of every source, more than one file each;
    the second is the samples held back (a late arrival, a duplicate, a table created by the
    second run) and an increment of generated events that follows the first's."""
    landing, generated = _landing_parts(root)
    warehouse = root / "warehouse"
    conf = _conf(root, server, f"{rules}_", rules)
    first = _run(conf, landing, warehouse, python)
    for part in SECOND_LANDING:
        shutil.copytree(SAMPLES / part, landing / part)
    _, folder = add_increment(generated, GENERATED // 10, seed=6, after_base_of=GENERATED)
    for source in (p for p in generated.iterdir() if (p / folder).is_dir()):
        shutil.copytree(source / folder, landing / source.name / folder)
    _run(conf, landing, warehouse, python)
    return ThroughConnect(landing, warehouse, conf, first)


@pytest.fixture(scope="module")
def through_connect(connect_server, thin_client, tmp_path_factory) -> ThroughConnect:
    """The two batches under serverless's rules, from the thin client's install."""
    return two_batches(tmp_path_factory.mktemp("connect"), connect_server, "serverless", thin_client)


def local_build(config, spark, landing: Path, folder: Path) -> Path:
    """The warehouse of one local run (the suite's session, delta-rs) over the whole `landing`."""
    local = with_engine(
        config.with_overrides(landing=str(landing), warehouse=str(folder / "warehouse")), "delta-rs"
    )
    run_pipeline(local, spark=spark)
    return local.warehouse


@pytest.fixture(scope="module")
def local_run(config, spark, through_connect: ThroughConnect, tmp_path_factory) -> Path:
    return local_build(config, spark, through_connect.landing, tmp_path_factory.mktemp("local"))


@pytest.fixture(scope="module")
def thin_client(tmp_path_factory) -> Path:
    return thin_client_python(tmp_path_factory.mktemp("thin-client"))


def test_a_run_through_spark_connect_says_so_on_its_first_line(through_connect: ThroughConnect):
    first = through_connect.first_lines[0].split()
    assert first[0] == "run" and "engine=delta-spark" in first and "spark=connect" in first


def test_two_batches_under_the_serverless_rules_from_a_thin_client_equal_one_local_run(
    spark, through_connect: ThroughConnect, local_run
):
    assert_same_tables(spark, through_connect.warehouse, local_run)


@pytest.mark.exhaustive  # the paths of the serverless run, with frames cached as standard access mode allows
def test_two_batches_under_the_standard_rules_from_the_suites_install_equal_one_local_run(
    config, spark, connect_server, tmp_path
):
    standard = two_batches(tmp_path / "standard", connect_server, "standard", None)
    assert_same_tables(spark, standard.warehouse, local_build(config, spark, standard.landing, tmp_path))


def test_sql_and_timeline_answer_through_connect_as_duckdb_does(through_connect: ThroughConnect):
    common = ["--conf", str(through_connect.conf), "--warehouse", str(through_connect.warehouse)]
    query = "SELECT count(*) AS n FROM gold.tag_timeline WHERE is_current"
    answers = {
        engine: lakehouse("sql", *common, "--engine", engine, "--format", "json", query)
        for engine in ("spark", "duckdb")
    }
    assert answers["spark"].returncode == 0, answers["spark"].stderr[-2000:]
    assert (
        answers["spark"].stdout == answers["duckdb"].stdout and json.loads(answers["spark"].stdout)["n"] > 0
    )
    timelines = {
        engine: lakehouse("timeline", URN, *common, "--engine", engine, "--format", "json")
        for engine in ("spark", "duckdb")
    }
    assert timelines["spark"].returncode == 0, timelines["spark"].stderr[-2000:]
    assert json.loads(timelines["spark"].stdout) == json.loads(timelines["duckdb"].stdout)
    assert json.loads(timelines["spark"].stdout)


# What the rules session refuses, as Databricks words it (run in a process of its own: a Spark
# Connect client beside the suite's classic session)
PROBE = """
import json, sys
from pipelines.runtime.compute_rules import SERVERLESS, STANDARD
from pipelines.runtime.rules_session import connect

found = {}

def error(action):
    try:
        action()
    except BaseException as exc:  # the thin client exits where the full one raises
        return [type(exc).__name__, getattr(exc, "getCondition", lambda: None)() or str(exc).split("]")[0] + "]"]
    return None

spark = connect(sys.argv[1], SERVERLESS if sys.argv[2] == "serverless" else STANDARD)
df = spark.range(3)
found["set"] = error(lambda: spark.conf.set("spark.sql.codegen.wholeStage", "false"))
found["set_allowed"] = error(lambda: spark.conf.set("spark.sql.shuffle.partitions", "3"))
found["sql_set"] = error(lambda: spark.sql("SET spark.sql.adaptive.enabled=false").collect())
found["persist"] = error(lambda: df.persist())
found["checkpoint"] = error(lambda: df.localCheckpoint())
found["spark_context"] = error(lambda: spark.sparkContext)
found["rdd"] = error(lambda: df.rdd)
found["count"] = df.count()
print(json.dumps(found))
"""


@pytest.mark.parametrize("rules", ["serverless", "standard"])
def test_the_rules_session_refuses_what_databricks_refuses(connect_server, tmp_path, rules):
    done = subprocess.run(
        [sys.executable, "-c", PROBE, connect_server.remote, rules],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["count"] == 3 and found["set_allowed"] is None
    assert found["spark_context"][1].startswith("JVM_ATTRIBUTE_NOT_SUPPORTED")
    assert found["rdd"] is not None
    if rules == "serverless":
        assert found["set"] == ["AnalysisException", "CONFIG_NOT_AVAILABLE"]
        assert found["sql_set"] == ["AnalysisException", "CONFIG_NOT_AVAILABLE"]
        assert found["persist"] == ["AnalysisException", "NOT_SUPPORTED_WITH_SERVERLESS"]
        assert found["checkpoint"] == ["AnalysisException", "NOT_SUPPORTED_WITH_SERVERLESS"]
        assert done.stderr.count(REFUSED) == 4
    else:
        assert found["set"] is None and found["sql_set"] is None and found["persist"] is None
        assert REFUSED not in done.stderr


# Two toy tasks meeting at a rendezvous (`tests.support.toy_graph`), run by the runner over a
# Spark Connect session under serverless's rules: they pass only if they run at the same time.
SIDE_BY_SIDE = """
import datetime as dt, json, sys, threading
sys.path.insert(0, sys.argv[2])
from pipelines.core.config import load_config
from pipelines.core.context import RunContext
from pipelines.core.graph import Task
from pipelines.orchestration.runner import RunSummary, _run_graph
from pipelines.runtime.spark import get_spark
from pipelines.store import open_configured_store
from tests.support import toy_graph

config = load_config(sys.argv[1])
spark = get_spark(config)
store = open_configured_store(spark, config)
t0 = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
names = ("meets_then_succeeds", "meets_too")
for name in names:
    rows = [(f"{name}-{i}", "toy.jsonl", i, t0) for i in range(3)]
    store.append(spark.createDataFrame(rows, toy_graph.SCHEMA), f"bronze.toy_{name}")
toy_graph.RENDEZVOUS["barrier"] = threading.Barrier(2, timeout=float(sys.argv[3]))
tasks = [Task(name, f"tests.support.toy_graph.{name}") for name in names]
summary = RunSummary("toy-run")
failed = _run_graph(RunContext(spark, store, config, "toy-run", t0), tasks, 2, summary)
print(json.dumps({
    "failed": failed,
    "messages": {k: r.message for k, r in summary.results.items()},
    "sessions": toy_graph.SESSIONS,
    "run_session": spark.session_id,
    "rows": {name: store.read(f"silver.toy_{name}").count() for name in names if store.exists(f"silver.toy_{name}")},
}))
"""


def test_tasks_run_side_by_side_over_spark_connect_each_in_a_session_of_its_own(connect_server, tmp_path):
    """A session this process opened to a named server has siblings on it: each task side by
    side plans in its own, and the run's session is left as it was. With a client that cannot
    close one session while others run (before PySpark 4.2) the tasks run one by one: the first
    waits at the rendezvous in vain."""
    side_by_side = client_closes_sessions_apart()
    conf = _conf(tmp_path, connect_server, "toys_", "serverless")
    wait = "120" if side_by_side else "2"
    done = subprocess.run(
        [sys.executable, "-c", SIDE_BY_SIDE, str(conf), str(Path(__file__).resolve().parents[1]), wait],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=PROCESS_TIMEOUT_SECONDS,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert REFUSED not in done.stderr
    found = json.loads(done.stdout.strip().splitlines()[-1])
    if not side_by_side:
        assert found["failed"] == "meets_then_succeeds", found["messages"]
        assert found["messages"]["meets_then_succeeds"].startswith("BrokenBarrierError")
        assert found["sessions"] == [found["run_session"]]
        return
    assert found["failed"] is None, found["messages"]
    assert found["rows"] == {"meets_then_succeeds": 3, "meets_too": 3}
    assert len(set(found["sessions"])) == 2 and found["run_session"] not in found["sessions"]


@pytest.mark.parametrize(
    ("version", "apart"),
    [("4.0.1", False), ("4.1.1", False), ("4.2.0", True), ("4.3.0.dev0", True), ("5.0.0", True)],
)
def test_sessions_open_beside_each_other_only_with_a_client_that_closes_them_apart(version, apart):
    assert client_closes_sessions_apart(version) is apart


# Imports every module of the installed packages but the local driver's JVM tuning (which only
# the `local` profile reaches) and the collectors (extras the thin install leaves out).
IMPORTS = """
import importlib, importlib.util, json, os, pkgutil
import bronze, gold, pipelines, pyspark, silver

assert not os.path.isdir(os.path.join(os.path.dirname(pyspark.__file__), "jars")), "PySpark's jars"
assert importlib.util.find_spec("py4j") is None and importlib.util.find_spec("delta") is None
failed = {}
for package in (pipelines, bronze, silver, gold):
    for module in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
        name = module.name
        if name.endswith("__main__") or name.startswith(("pipelines.runtime.tuning", "pipelines.collectors")):
            continue
        try:
            importlib.import_module(name)
        except Exception as exc:
            failed[name] = f"{type(exc).__name__}: {exc}"
print(json.dumps(failed))
"""


def test_every_module_a_connect_run_reaches_imports_without_the_jvm_parts(thin_client, tmp_path):
    done = subprocess.run([str(thin_client), "-c", IMPORTS], cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout.strip().splitlines()[-1]) == {}
