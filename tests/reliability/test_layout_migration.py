"""A warehouse written before its tables had a layout (no partitions, no `event_month`) goes on
incrementally as it is: no rebuild, the same rows as a new warehouse built in one run."""

from __future__ import annotations

import shutil

import pytest

from pipelines.executors import silver as silver_executor
from pipelines.orchestration.runner import run_pipeline
from pipelines.store.delta_rs import DeltaRsEngine
from tests.support.engines import engine_store
from tests.support.runs import SAMPLES, SOURCES, data_tables
from tests.support.tables import table_differences

pytestmark = [pytest.mark.slow]


def _without_layout(patch: pytest.MonkeyPatch) -> None:
    """Writes as before layouts existed: tables created without partitions, no partition month."""
    for method in ("append", "overwrite", "commit_no_rows"):
        original = getattr(DeltaRsEngine, method)

        def unpartitioned(self, df, ref, partition_by, *args, _original=original, **kwargs):
            return _original(self, df, ref, [], *args, **kwargs)

        patch.setattr(DeltaRsEngine, method, unpartitioned)
    patch.setattr(silver_executor, "with_layout_columns", lambda rows, partition_by: rows)


def test_a_warehouse_without_layouts_continues_and_equals_a_new_one(config, spark, tmp_path):
    landing = tmp_path / "landing"
    shutil.copytree(SAMPLES, landing)
    aside = tmp_path / "held_back"
    held = []
    for source in SOURCES:  # each source's newer half, back for the second run
        files = sorted(p for p in (landing / source).rglob("*") if p.is_file())
        for path in files[len(files) // 2 :]:
            target = aside / path.relative_to(landing)
            target.parent.mkdir(parents=True, exist_ok=True)
            path.rename(target)
            held.append((path, target))

    def run(warehouse: str) -> None:
        settings = config.with_overrides(landing=str(landing), warehouse=str(tmp_path / warehouse))
        summary = run_pipeline(settings, spark=spark)
        assert not [k for k, r in summary.results.items() if r.status == "FAILED"]

    with pytest.MonkeyPatch.context() as patch:
        _without_layout(patch)
        run("old")
    old = engine_store(spark, tmp_path / "old", "delta-rs")
    assert old.columns("silver.datahub_entity_changes").count("event_month") == 0
    for path, target in held:
        target.rename(path)
    run("old")
    run("new")
    new = engine_store(spark, tmp_path / "new", "delta-rs")

    assert "event_month" not in old.columns("silver.datahub_entity_changes"), "a table keeps its columns"
    assert "event_month" in new.columns("silver.datahub_entity_changes")
    differences = {}
    for table in data_tables(new):
        columns = [c for c in new.columns(table) if c in old.columns(table)]
        found = table_differences(new.read(table).select(*columns), old.read(table).select(*columns))
        if found:
            differences[table] = found
    assert not differences, "\n".join(f"{t}: {d}" for t, d in differences.items())
