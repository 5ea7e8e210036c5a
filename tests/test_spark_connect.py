"""The pipeline through Spark Connect, as Databricks serverless jobs, standard access mode clusters
and Databricks Connect run it: `lakehouse run` with `profile: connect`, a client of a Spark
Connect server that carries Delta (the delta-spark engine, tables by name), in two batches,
builds the tables one local run builds from the same files, row for row; `lakehouse sql` and
`lakehouse timeline` answer through it too. The landing is the bundled samples and a generated
landing side by side: the server runs the pipeline twice in all."""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from benchmarks.workload import add_increment, generate_landing
from pipelines.orchestration.runner import run_pipeline
from pipelines.store import open_store
from tests.support.engines import with_engine
from tests.support.runs import SAMPLES, data_tables, lakehouse
from tests.support.tables import table_differences

pytestmark = [pytest.mark.slow, pytest.mark.heavy]  # a Spark Connect server, the pipeline through it twice

SECOND_LANDING = ("datahub_ece/2024-04", "openmetadata/2024-04-01", "datahub_audit/2024-03-03")
GENERATED = 1_000  # events of the generated landing: every source, more than one file each
URN = "urn:li:dataset:(urn:li:dataPlatform:snowflake,example.table,PROD)"


def _conf(folder: Path, server, prefix: str) -> Path:
    """`profile: connect` against `server`, Delta's own engine, the schemas of one warehouse."""
    path = folder / f"connect-{prefix}.yaml"
    settings = {
        "profile": "connect",
        "profiles": {"connect": {"remote": server.remote}},
        "storage": {"engine": "delta-spark", "schema_prefix": prefix},
    }
    path.write_text(yaml.safe_dump(settings), encoding="utf-8")
    return path


def _run(conf: Path, landing: Path, warehouse: Path) -> list[str]:
    done = lakehouse("run", "--conf", str(conf), "--landing", str(landing), "--warehouse", str(warehouse))
    assert done.returncode == 0, (done.stdout[-2000:], done.stderr[-3000:])
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


@pytest.fixture(scope="module")
def through_connect(connect_server, tmp_path_factory) -> ThroughConnect:
    """Two batches through Spark Connect. The first is the samples (their malformed and
    quarantined records included) without `SECOND_LANDING`, and a generated landing of every
    source, more than one file each; the second is the samples held back (a late arrival, a
    duplicate, a table created by the second run) and an increment of generated events that
    follows the first's."""
    root = tmp_path_factory.mktemp("connect")
    landing, generated = _landing_parts(root)
    warehouse = root / "warehouse"
    conf = _conf(root, connect_server, "connect_")
    first = _run(conf, landing, warehouse)
    for part in SECOND_LANDING:
        shutil.copytree(SAMPLES / part, landing / part)
    _, folder = add_increment(generated, GENERATED // 10, seed=6, after_base_of=GENERATED)
    for source in (p for p in generated.iterdir() if (p / folder).is_dir()):
        shutil.copytree(source / folder, landing / source.name / folder)
    _run(conf, landing, warehouse)
    return ThroughConnect(landing, warehouse, conf, first)


@pytest.fixture(scope="module")
def local_run(config, spark, through_connect: ThroughConnect, tmp_path_factory) -> Path:
    """The warehouse of one local run (the suite's session, delta-rs) over the whole landing."""
    warehouse = tmp_path_factory.mktemp("local") / "warehouse"
    local = with_engine(
        config.with_overrides(landing=str(through_connect.landing), warehouse=str(warehouse)),
        "delta-rs",
    )
    run_pipeline(local, spark=spark)
    return local.warehouse


def test_a_run_through_spark_connect_says_so_on_its_first_line(through_connect: ThroughConnect):
    first = through_connect.first_lines[0].split()
    assert first[0] == "run" and "engine=delta-spark" in first and "spark=connect" in first


def test_two_batches_through_connect_equal_one_local_run(spark, through_connect: ThroughConnect, local_run):
    assert_same_tables(spark, through_connect.warehouse, local_run)


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
