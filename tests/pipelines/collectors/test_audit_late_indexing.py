"""Audit events that DataHub's search shows only minutes after their timestamp are still collected once."""

from __future__ import annotations

import datetime as dt
import json
from collections import Counter

from tests.support.audit_collector import T0, T0_MS, collector
from tests.support.stand_in_datahub import StandInAuditServer

MINUTE_MS = 60_000


def landed(landing) -> Counter:
    return Counter(
        event["telemetryTraceId"]
        for page in (landing / "datahub_audit").glob("audit-*.json")
        for event in json.loads(page.read_bytes())["usageEvents"]
    )


def _collects(server, landing, **settings):
    """A collector whose clock and the index's clock are one: `at(minutes after T0)` collects then."""
    now = [T0_MS]
    server.index_now = lambda: now[0]
    made, _, lines = collector(server, landing, **settings)
    made.clock = lambda: now[0] / 1000

    def at(minutes: float):
        now[0] = T0_MS + int(minutes * MINUTE_MS)
        return made.collect(since=T0 - dt.timedelta(hours=1)) if minutes == 0 else made.collect()

    return at, lines


def test_an_event_indexed_minutes_late_is_landed_by_the_next_collects_overlap_once(tmp_path):
    with StandInAuditServer(token="dh-token-7Qx9-never-in-files") as server:
        on_time = server.add_events([T0_MS - 40 * MINUTE_MS + i * 9_000 for i in range(200)])
        late = server.add_events(
            [T0_MS - 3 * MINUTE_MS, T0_MS - 2 * MINUTE_MS], indexed_at_ms=T0_MS + 4 * MINUTE_MS
        )
        at, lines = _collects(server, tmp_path)
        first = at(0)
        assert first.late_events == 0 and landed(tmp_path) == Counter(e["telemetryTraceId"] for e in on_time)
        second = at(15)  # the overlap behind T0 - 1 min is read again
        assert second.late_events == 2 and any("indexed late" in line for line in lines)
        assert at(30).late_events == 0
    assert landed(tmp_path) == Counter(e["telemetryTraceId"] for e in on_time + late)
    assert [p.name.endswith("-r.json") for p in (tmp_path / "datahub_audit").glob("*-r.json")] == [True]


def test_without_an_overlap_a_late_event_is_never_collected(tmp_path):
    with StandInAuditServer(token="dh-token-7Qx9-never-in-files") as server:
        server.add_events([T0_MS - 10 * MINUTE_MS + i * 1000 for i in range(50)])
        (late,) = server.add_events([T0_MS - 2 * MINUTE_MS], indexed_at_ms=T0_MS + 2 * MINUTE_MS)
        at, _ = _collects(server, tmp_path, overlap_minutes=0)
        at(0)
        at(15)
        at(30)
    assert late["telemetryTraceId"] not in landed(tmp_path) and sum(landed(tmp_path).values()) == 50


def test_a_collection_saved_before_files_were_tracked_finds_its_files_and_lands_nothing_twice(tmp_path):
    with StandInAuditServer(token="dh-token-7Qx9-never-in-files") as server:
        events = server.add_events([T0_MS - 20 * MINUTE_MS + i * 3_000 for i in range(300)])
        at, _ = _collects(server, tmp_path)
        at(0)
        (state_file,) = (tmp_path / "datahub_audit" / "_state").glob("*.json")
        saved = json.loads(state_file.read_text())
        for key in ("recent_files", "first_start_ms", "reread"):
            saved.pop(key)
        state_file.write_text(json.dumps(saved))
        assert at(15).late_events == 0
    assert landed(tmp_path) == Counter(e["telemetryTraceId"] for e in events)
