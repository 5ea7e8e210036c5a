"""The whole pipeline on one generated landing set, checked against an independent model.

Why: the acceptance criteria of bronze (every record landed once), silver (counts
reconcile per source) and gold (current tags, owners, entity statuses, deprecations,
schema fields and structured properties, OpenMetadata version counts and DataWorks
instance outcomes equal an independent plain-Python model; incremental equals a full
rebuild) only mean something where several files per source, late files and duplicates
across files all happen. `make test-all` runs it at the smallest size that has them all
(`LAKEHOUSE_SCALE_EVENTS`, default 16,000, spread over as many files as 300,000 events
fill); `make test-scale` runs it at 300,000 events, where partitioning and Spark's
compiled plans come in too (marked `scale` then).

One data set and three warehouses, each built once per module:
- full: one run over every file;
- incremental: a first run with the `late/` folders, the second and the last data
  file of every source held back; a second run with the last files (events after
  all others, as a live feed's next batch: timelines extend their groups in order);
  a third with the rest (older and interleaved event times: gold rebuilds those
  groups from their history);
- incremental-delta-spark: the same three runs by Delta's own engine, then a run with
  nothing new (the two above run on delta-rs). The per-warehouse checks (bronze, silver,
  gold against the reference model) hold on it too, every gold table equals the delta-rs
  full build's, and the idle run commits nothing (`make test-exhaustive`).
All use the same landing path, so lineage columns agree.
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from pathlib import Path

import pytest
from pyspark.sql import functions as F

from pipelines.orchestration.runner import run_pipeline
from pipelines.synthetic.common import RECORDS_PER_FILE
from pipelines.synthetic.generator import generate
from tests.support.engines import engine_store, skip_without_delta_spark, with_engine
from tests.support.reference_model import (
    FAILURE,
    SUCCESS,
    expected_current_deprecations,
    expected_current_owners,
    expected_current_schema_fields,
    expected_current_statuses,
    expected_current_structured_properties,
    expected_current_tags,
    expected_entity_version_counts,
    expected_finished_runs_per_node,
    expected_instance_final_statuses,
    iter_records,
    landing_files,
    load_events,
)
from tests.support.tables import (
    BRONZE_TABLES,
    assert_reconciles,
    reconciliation,
    set_differences,
    table_differences,
)

EVENTS = int(os.environ.get("LAKEHOUSE_SCALE_EVENTS", "16000"))
SCALE = 100_000  # from this many events the module measures size: `make test-scale`
# Records per data file: a small set is spread over as many files as the generator writes at
# 300,000 events (eight to sixteen per source), so that held-back batches and repeats across
# files happen at every size.
PER_FILE = RECORDS_PER_FILE if EVENTS >= SCALE else max(500, EVENTS // 16)
SEED = 2024
# The delta-spark warehouse's checks run in `make test-exhaustive`: its four runs are half the
# module's time on 2 cores; `make test-all` builds delta-spark incrementally through Spark Connect
# (tests/test_spark_connect.py) and checks its idle commits on tables (test_table_store.py).
ON_DELTA_SPARK = pytest.param("incremental_delta_spark", marks=pytest.mark.exhaustive)
WAREHOUSES = ("full", "incremental", ON_DELTA_SPARK)
pytestmark = [pytest.mark.slow, pytest.mark.heavy, *([pytest.mark.scale] if EVENTS >= SCALE else [])]


@pytest.fixture(scope="module")
def landing(tmp_path_factory) -> tuple[Path, dict[str, int]]:
    """The generated landing folder and the records the generator says it wrote per source."""
    folder = tmp_path_factory.mktemp("scale") / "landing"
    return folder, generate(folder, EVENTS, seed=SEED, records_per_file=PER_FILE)


@pytest.fixture(scope="module")
def landed(landing) -> dict[str, Counter]:
    """Per source, counted in plain Python over the files: records, malformed ones, exact repeats."""
    folder, _ = landing
    counts = {}
    for source in BRONZE_TABLES:
        seen: set[str] = set()
        tally = Counter()
        for path in landing_files(folder / source):
            for record in iter_records(path):
                tally["records"] += 1
                if not isinstance(record, dict):
                    tally["malformed"] += 1
                    continue
                text = json.dumps(record, sort_keys=True)
                tally["repeats"] += text in seen
                seen.add(text)
        counts[source] = tally
    return counts


def _held_back(folder: Path) -> tuple[list[Path], list[Path]]:
    """The files of the two later batches. Second: each source's last data file (events after
    all the others but its own duplicates of held-back records). Third: every late/ folder's
    files and each source's second data file (events inside the history)."""
    after, inside = [], []
    for source in BRONZE_TABLES:
        files = landing_files(folder / source)
        inside += [p for p in files if "late" in p.relative_to(folder / source).parts]
        top = [p for p in files if p.parent == folder / source]
        if len(top) > 3:
            inside.append(top[1])
            after.append(top[-1])
    return after, inside


def _warehouse(config, spark, landing_dir: Path, warehouse: Path, engine: str = "delta-rs"):
    built = with_engine(config.with_overrides(landing=str(landing_dir), warehouse=str(warehouse)), engine)
    return built, engine_store(spark, built.warehouse, engine)


@pytest.fixture(scope="module")
def full(config, spark, landing):
    """(config, store) of a warehouse built by one run over every landing file."""
    folder, _ = landing
    built, store = _warehouse(config, spark, folder, folder.parent / "full")
    run_pipeline(built, spark=spark)
    return built, store


def _in_three_runs(config, spark, landing, name: str, engine: str = "delta-rs"):
    """(config, store, summary of the second run) of a warehouse built in three runs: the newest
    files arrive in the second, held-back files from inside the history in the third."""
    folder, _ = landing
    built, store = _warehouse(config, spark, folder, folder.parent / name, engine)
    aside = folder.parent / f"held_back_{name}"
    after, inside = _held_back(folder)
    assert after and inside, "nothing held back: the data set is too small for three batches"
    moved = {}
    try:
        for path in after + inside:
            target = aside / path.relative_to(folder)
            target.parent.mkdir(parents=True, exist_ok=True)
            path.rename(target)
            moved[path] = target
        run_pipeline(built, spark=spark)
        for path in after:
            moved.pop(path).rename(path)
        second = run_pipeline(built, spark=spark)
    finally:
        for path, target in moved.items():
            target.rename(path)
    run_pipeline(built, spark=spark)
    return built, store, second


@pytest.fixture(scope="module")
def incremental(config, spark, landing):
    return _in_three_runs(config, spark, landing, "incremental")


@pytest.fixture(scope="module")
def incremental_delta_spark(config, spark, landing):
    """`incremental` by Delta's own engine, then a run with nothing new: (config, store, the
    second run's summary, the versions of the data tables before and after the idle run)."""
    skip_without_delta_spark("delta-spark")
    built, store, second = _in_three_runs(config, spark, landing, "incremental-delta-spark", "delta-spark")
    tables = [t for t in store.tables() if not t.startswith("ops.")]
    before = {t: store.version(t) for t in tables}
    run_pipeline(built, spark=spark)
    return built, store, second, (before, {t: store.version(t) for t in tables})


@pytest.fixture(params=WAREHOUSES)
def warehouse_store(request):
    return request.getfixturevalue(request.param)[1]


# Bronze ---------------------------------------------------------------------------------


@pytest.mark.parametrize("built", ["full", ON_DELTA_SPARK])
def test_bronze_holds_every_landed_record_per_source(landing, landed, built, request):
    _folder, generated = landing
    store = request.getfixturevalue(built)[1]
    for source, table in BRONZE_TABLES.items():
        bronze = store.read(table)
        rows, corrupt = bronze.count(), bronze.where("is_corrupt").count()
        assert generated[source] == landed[source]["records"], source
        assert rows == landed[source]["records"], source
        assert corrupt == landed[source]["malformed"], source
    assert sum(generated.values()) == EVENTS


# Silver ---------------------------------------------------------------------------------


def test_bronze_reconciles_with_silver_quarantine_and_duplicates_per_source(warehouse_store):
    assert_reconciles(warehouse_store)


def test_run_counts_match_the_silver_and_quarantine_tables(warehouse_store):
    store = warehouse_store
    per_table = reconciliation(store, by="table")
    quarantined = {
        r.source_table: r["count"]
        for r in store.read("silver.quarantine").groupBy("source_table").count().collect()
    }
    for table, totals in per_table.items():
        assert store.read(table).count() == totals["rows_out"], table
        assert quarantined.get(table, 0) == totals["rows_quarantined"], table


def test_duplicates_removed_are_the_exact_repeats_in_the_files(landed, warehouse_store):
    totals = reconciliation(warehouse_store)
    for source in BRONZE_TABLES:
        assert totals[source]["rows_duplicate"] == landed[source]["repeats"], source


# Gold -----------------------------------------------------------------------------------


def _current(store, table: str, *columns: str) -> set[tuple]:
    timeline = store.read(table)
    assert timeline.where(F.col("is_current") != F.col("valid_to").isNull()).count() == 0, table
    rows = timeline.where(F.col("is_current") & (F.col("source") == "datahub")).select(*columns).collect()
    return {tuple(r) for r in rows}


@pytest.fixture(scope="module")
def reference_tags(landing) -> set[tuple]:
    folder, _ = landing
    return expected_current_tags(folder)


@pytest.fixture(scope="module")
def reference_owners(landing) -> set[tuple]:
    folder, _ = landing
    return expected_current_owners(folder)


def test_gold_current_tags_equal_the_reference_model(reference_tags, warehouse_store):
    expected = reference_tags
    actual = _current(warehouse_store, "gold.tag_timeline", "entity_urn", "tag_urn")
    assert expected, "the reference model found no current tags"
    assert actual == expected, set_differences(expected, actual)


def test_gold_current_owners_equal_the_reference_model(reference_owners, warehouse_store):
    expected = reference_owners
    actual = _current(warehouse_store, "gold.ownership_timeline", "entity_urn", "owner_urn", "owner_type")
    assert expected, "the reference model found no current owners"
    assert actual == expected, set_differences(expected, actual)


def _current_rows(store, table: str, *columns: str) -> set[tuple]:
    """The current rows of an interval table (every source), as tuples of `columns`."""
    timeline = store.read(table)
    assert timeline.where(F.col("is_current") != F.col("valid_to").isNull()).count() == 0, table
    return {tuple(r) for r in timeline.where(F.col("is_current")).select(*columns).collect()}


@pytest.fixture(scope="module")
def reference(landing) -> dict[str, object]:
    """The reference model's expectations of the other histories, computed once."""
    folder, _ = landing
    return {
        "statuses": expected_current_statuses(folder),
        "deprecations": expected_current_deprecations(folder),
        "schema_fields": expected_current_schema_fields(folder),
        "structured_properties": expected_current_structured_properties(folder),
        "versions": expected_entity_version_counts(folder),
        "instances": expected_instance_final_statuses(folder),
        "finished_per_node": expected_finished_runs_per_node(folder),
    }


def test_gold_current_entity_statuses_equal_the_reference_model(reference, warehouse_store):
    expected = reference["statuses"]
    actual = _current_rows(warehouse_store, "gold.entity_status_timeline", "source", "entity_urn", "status")
    assert {s for _, _, s in expected} >= {"ACTIVE", "HARD_DELETED"}, "the model saw no lifecycle"
    assert actual == expected, set_differences(expected, actual)


def test_gold_current_deprecations_equal_the_reference_model(reference, warehouse_store):
    expected = {(urn,) for urn in reference["deprecations"]}
    actual = _current_rows(warehouse_store, "gold.deprecation_timeline", "entity_urn")
    assert expected, "the reference model found nothing deprecated"
    assert actual == expected, set_differences(expected, actual)


def test_gold_current_schema_fields_equal_the_reference_model(reference, warehouse_store):
    expected = reference["schema_fields"]
    actual = _current_rows(
        warehouse_store, "gold.schema_field_timeline", "source", "dataset_urn", "field_path"
    )
    assert {source for source, _, _ in expected} == {"datahub", "openmetadata"}
    assert actual == expected, set_differences(expected, actual)


def test_gold_current_structured_properties_equal_the_reference_model(reference, warehouse_store):
    expected = reference["structured_properties"]
    actual = _current_rows(
        warehouse_store, "gold.structured_property_timeline", "entity_urn", "property_urn", "property_values"
    )
    assert expected, "the reference model found no structured property"
    assert actual == expected, set_differences(expected, actual)


def test_gold_entity_version_counts_equal_the_reference_model(reference, warehouse_store):
    expected = set(reference["versions"].items())
    rows = warehouse_store.read("gold.entity_versions").groupBy("entity_key").count().collect()
    actual = {(r.entity_key, r["count"]) for r in rows}
    assert expected, "the reference model found no OpenMetadata versions"
    assert actual == expected, set_differences(expected, actual)


def test_gold_dataworks_instance_final_statuses_equal_the_reference_model(reference, warehouse_store):
    expected = {(task, node, status) for task, (node, status) in reference["instances"].items()}
    runs = warehouse_store.read("gold.dataworks_instance_runs")
    actual = {tuple(r) for r in runs.select("instance_id", "node_id", "final_status").collect()}
    assert {status for _, _, status in expected} >= {FAILURE, SUCCESS}
    assert actual == expected, set_differences(expected, actual)
    finished = {(task, status in (FAILURE, SUCCESS)) for task, _, status in expected}
    assert {tuple(r) for r in runs.select("instance_id", "is_finished").collect()} == finished


def test_gold_node_reliability_counts_the_reference_models_finished_runs(reference, warehouse_store):
    expected = {(node, runs, failed) for node, (runs, failed) in reference["finished_per_node"].items()}
    daily = warehouse_store.read("gold.dataworks_node_reliability_daily")
    totals = daily.groupBy("node_id").agg(F.sum("runs").alias("runs"), F.sum("failed").alias("failed"))
    actual = {tuple(r) for r in totals.select("node_id", "runs", "failed").collect()}
    assert expected, "the reference model found no finished run"
    assert actual == expected, set_differences(expected, actual)


def test_gold_coverage_on_the_last_day_counts_the_reference_models_live_and_owned_datasets(
    reference, reference_owners, full
):
    """The end state of the governance tables against the model: DataHub datasets live at the end
    (ACTIVE) and those among them with a current owner."""
    _, store = full
    live = {e for source, e, s in reference["statuses"] if source == "datahub" and s == "ACTIVE"}
    live = {e for e in live if e.startswith("urn:li:dataset:")}
    owned = live & {entity for entity, _, _ in reference_owners}
    coverage = store.read("gold.governance_coverage_daily").where(
        "source = 'datahub' AND entity_type = 'dataset'"
    )
    last = coverage.agg(F.max("day")).first()[0]
    totals = coverage.where(F.col("day") == last).agg(F.sum("live_entities"), F.sum("with_owner")).first()
    assert live and (totals[0], totals[1]) == (len(live), len(owned))


def test_gold_actors_count_each_datahub_actors_changes_as_the_reference_model(landing, full):
    folder, _ = landing
    expected = Counter(event["auditStamp"].get("actor") for event in load_events(folder))
    _, store = full
    rows = store.read("gold.actors").where("source = 'datahub' AND changes > 0").collect()
    assert {r.actor: r.changes for r in rows} == dict(expected)
    kinds = {r.actor: r.actor_kind for r in rows}
    assert kinds["urn:li:corpuser:__datahub_system"] == "system"
    assert kinds["urn:li:corpuser:svc_ingestion"] == kinds["urn:li:corpuser:datahub"] == "service"
    assert kinds["urn:li:corpuser:jdoe"] == "person"


def test_the_governance_questions_answer_alike_on_both_query_engines_over_generated_data(capsys, full):
    """Every governance query of docs/data-model.md, each one short query over gold, on a
    generated warehouse: the same rows from DuckDB and Spark SQL, and some rows."""
    from pipelines.cli import main
    from tests.support.docs_queries import portable_queries

    config, _ = full
    governance = [(h, q) for h, q in portable_queries() if int(h.split(".")[0]) >= 15]
    assert len(governance) >= 10
    for heading, query in governance:
        answers = {}
        for engine in ("duckdb", "spark"):
            code = main(
                ["sql", "--warehouse", str(config.warehouse), "--engine", engine, "--format", "json", query]
            )
            answers[engine] = (code, capsys.readouterr().out)
        assert answers["duckdb"] == answers["spark"], heading
        assert answers["spark"][0] == 0 and answers["spark"][1].strip(), heading
    undone = "SELECT count(*) AS n FROM gold.change_reversals WHERE first_by_kind = 'person' AND second_by_kind = 'service'"
    assert main(["sql", "--warehouse", str(config.warehouse), "--format", "csv", undone]) == 0
    assert int(capsys.readouterr().out.splitlines()[1]) > 0  # ingestion undid people's edits


def _warehouse_differences(left, right, layers: tuple[str, ...], sides: str) -> str:
    """'' when both warehouses hold the same tables of `layers` with the same rows, else what differs."""
    tables = sorted(t for t in left.tables() if t.startswith(layers))
    assert tables == sorted(t for t in right.tables() if t.startswith(layers))
    found = {table: table_differences(left.read(table), right.read(table)) for table in tables}
    return "\n".join(f"{t} ({sides}): {d}" for t, d in found.items() if d)


def test_incremental_in_three_batches_equals_a_full_rebuild(full, incremental):
    _, full_store = full
    _, incremental_store, _ = incremental
    differences = _warehouse_differences(full_store, incremental_store, ("gold.",), "full vs incremental")
    assert not differences, differences


@pytest.mark.exhaustive
def test_delta_spark_in_three_batches_equals_a_delta_rs_full_build_table_by_table(
    full, incremental_delta_spark
):
    _, rs_store = full
    _, spark_store, _, _ = incremental_delta_spark
    # gold, as the delta-rs build in three batches is held to: silver keeps the first landed copy of
    # a repeated record, and a batch landing later changes which copy that is (bronze and silver
    # counts reconcile per warehouse above)
    differences = _warehouse_differences(rs_store, spark_store, ("gold.",), "delta-rs vs delta-spark")
    assert not differences, differences


@pytest.mark.exhaustive
def test_delta_sparks_idle_run_commits_nothing(incremental_delta_spark):
    """The third run compacted tables it wrote (`OPTIMIZE`, which changes no row): their readers
    are up to date all the same, so the run after commits to no table."""
    *_, (before, after) = incremental_delta_spark
    assert after == before


def test_a_batch_after_the_history_extends_timelines_without_rebuilding_most_groups(incremental):
    """The second batch's events come after the first batch's (one file per source): the
    timelines extend their touched groups from their current rows (no history read), but for
    the few a duplicate of a held-back record reaches. The third batch then rebuilds groups
    from their history; the test above compares the end result with a full rebuild."""
    _, _, second = incremental
    for key in ("gold_tag_timeline", "gold_ownership_timeline"):
        message = second.results[key].message
        extended, rebuilt = (int(n) for n in re.findall(r"(\d+) groups extended, (\d+) rebuilt", message)[0])
        assert extended > 0 and rebuilt <= extended / 10, message


# Bronze again: re-running lands nothing (last: it adds a run to ops.runs) -----------------------


def test_second_run_lands_nothing_and_changes_no_table(spark, full):
    config, store = full
    data_tables = [t for t in store.tables() if not t.startswith("ops.")]
    before = {t: store.version(t) for t in data_tables}
    summary = run_pipeline(config, spark=spark)
    assert {t: store.version(t) for t in data_tables} == before
    bronze = {k: r for k, r in summary.results.items() if k.startswith("bronze")}
    assert len(bronze) == len(BRONZE_TABLES)
    assert all(r.rows_out == 0 and r.files == 0 for r in bronze.values()), bronze
