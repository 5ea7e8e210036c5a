"""The delivery log through the table store on each engine: what a run plans, finishes and
looks up reads back the same on delta-rs and delta-spark."""

from __future__ import annotations

import datetime as dt

from pipelines.notifications import delivery_log
from pipelines.notifications.delivery_log import BASELINE, DELIVERED, FAILED, PENDING, Entry
from tests.support.engines import engine_store

UTC = dt.timezone.utc


def test_the_delivery_log_round_trips(engine, spark, warehouse):
    store = engine_store(spark, warehouse, engine)
    now = dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC)
    planned = [
        Entry("hooks", BASELINE, BASELINE, now),
        Entry("hooks", "violation:opened:v1", PENDING, now, "violation", "alice", "d1", notice='{"k": 1}'),
        Entry("hooks", "violation:opened:v2", PENDING, now, "violation", "bob", "d2", notice='{"k": 2}'),
    ]
    delivery_log.write(store, planned)
    done = Entry("hooks", "violation:opened:v1", DELIVERED, now, "violation", "alice", "d1", attempts=1,
                 first_tried_at=now, delivered_at=now, notice='{"k": 1}')  # fmt: skip
    failed = Entry("hooks", "violation:opened:v2", FAILED, now, "violation", "bob", "d2", attempts=3,
                   first_tried_at=now, last_error="HTTP 503", notice='{"k": 2}')  # fmt: skip
    delivery_log.write(store, [done, failed])

    assert delivery_log.known_targets(store) == {"hooks"}
    (waiting,) = delivery_log.unfinished(store)
    assert (waiting.notice_key, waiting.status, waiting.attempts, waiting.last_error, waiting.notice) == (
        "violation:opened:v2", FAILED, 3, "HTTP 503", '{"k": 2}',
    )  # fmt: skip
    assert waiting.first_tried_at.replace(tzinfo=UTC) == now
    assert delivery_log.recorded_keys(store, ["violation:opened:v1", "violation:opened:v9"]) == {
        ("hooks", "violation:opened:v1")
    }
    assert store.read(delivery_log.DELIVERIES).count() == 3
