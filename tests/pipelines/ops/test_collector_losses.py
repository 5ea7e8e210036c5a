"""ops.collector_losses: the collectors' loss log loaded once per entry, whatever stops or runs beside."""

from __future__ import annotations

import datetime as dt
import shutil

from pipelines.collectors.loss_log import LOG_FOLDER, LossLog
from pipelines.core.context import RunContext
from pipelines.ops.collector_losses import TABLE, load_collector_losses

T0 = dt.datetime(2026, 11, 20, 12, 0, tzinfo=dt.timezone.utc)


def _ctx(spark, store, config, landing, run_id: str) -> RunContext:
    return RunContext(spark, store, config.with_overrides(landing=str(landing)), run_id, T0)


def test_entries_are_loaded_once_even_when_a_run_stopped_before_moving_its_files(
    spark, store, config, tmp_path
):
    landing = tmp_path / "landing"
    log = LossLog(landing, "receiver")
    log.record("openmetadata", 413, "a body of 20002 bytes is over the receiver's limit", 3)
    log.record("dataworks", 400, "header ce-subject is not valid UTF-8")
    first = log.flush()
    (landing / LOG_FOLDER / "broken.jsonl").write_text('{"count": "many"\n')

    assert load_collector_losses(_ctx(spark, store, config, landing, "run-1")) == 3
    loaded = landing / LOG_FOLDER / "loaded" / first.name
    assert loaded.exists() and not first.exists()
    shutil.copy(loaded, first)  # as if the run had stopped between its merge and the move
    log.record("openmetadata", 413, "a body of 20002 bytes is over the receiver's limit")
    log.flush()
    assert load_collector_losses(_ctx(spark, store, config, landing, "run-2")) == 3
    assert load_collector_losses(_ctx(spark, store, config, landing, "run-3")) == 0

    rows = store.read(TABLE).groupBy("collector", "source", "status").sum("count").collect()
    assert sorted((r[0], r[1], r[2], r[3]) for r in rows) == [
        ("receiver", "dataworks", "400", 1),
        ("receiver", "openmetadata", "413", 4),
        ("unknown", None, "unreadable", 1),
    ]
