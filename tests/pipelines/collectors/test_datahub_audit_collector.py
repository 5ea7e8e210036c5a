"""`lakehouse collect datahub-audit` against a stand-in audit API on loopback HTTP."""

from __future__ import annotations

import datetime as dt
import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from pipelines.cli import main
from pipelines.collectors.datahub_audit import AuditSettings, CollectError, DataHubAuditCollector
from tests.support.audit_collector import T0, T0_MS, TOKEN, collector
from tests.support.secrets_api import secrets_api
from tests.support.stand_in_datahub import DAY_MS, StandInAuditServer

MINUTE_MS = 60_000
LAKEHOUSE = str(Path(sys.executable).with_name("lakehouse"))


def landed_pages(landing: Path) -> list[Path]:
    return sorted((landing / "datahub_audit").glob("audit-*.json"))


def landed_ids(landing: Path) -> Counter:
    ids: Counter = Counter()
    for page in landed_pages(landing):
        for event in json.loads(page.read_bytes())["usageEvents"]:
            ids[event["telemetryTraceId"]] += 1
    return ids


def ids_of(events: list[dict]) -> Counter:
    return Counter(e["telemetryTraceId"] for e in events)


def pages_served_twice(server: StandInAuditServer) -> list[tuple]:
    pages = Counter((start, end, after) for start, end, after, count in server.served if count)
    return [page for page, times in pages.items() if times > 1]


def no_page_served_twice(server: StandInAuditServer) -> None:
    assert pages_served_twice(server) == []


def test_the_first_collect_takes_the_last_day_as_the_api_does_by_default(tmp_path):
    with StandInAuditServer(token=TOKEN) as server:
        every_7_minutes = list(range(T0_MS - 2 * DAY_MS + 3 * MINUTE_MS, T0_MS, 7 * MINUTE_MS))
        events = server.add_events(every_7_minutes)
        made, _, _ = collector(server, tmp_path)
        summary = made.collect()
    last_day = [e for e in events if T0_MS - DAY_MS <= e["timestamp"] < T0_MS - 60_000]
    assert landed_ids(tmp_path) == ids_of(last_day)
    assert summary.events == len(last_day) and summary.windows == 1
    assert server.served[0][:2] == (T0_MS - DAY_MS, T0_MS - 60_000)
    assert set(server.authorizations) == {f"Bearer {TOKEN}"}


def test_a_window_at_the_cap_is_split_then_later_collects_bring_only_new_events(tmp_path):
    with StandInAuditServer(token=TOKEN) as server:
        crowded = [T0_MS - 3 * 3_600_000 + i * 150 for i in range(20_000)]  # 20,000 events in 50 minutes
        spread = [T0_MS - 5 * 3_600_000 + i * 61_003 for i in range(150)]
        events = server.add_events(crowded + spread)
        made, _, lines = collector(server, tmp_path, page_size=1000)
        first = made.collect(since=T0 - dt.timedelta(hours=6))
        assert landed_ids(tmp_path) == ids_of(events)
        assert first.splits >= 2 and any("reached the cap of 10000" in line for line in lines)
        assert max(count for *_, count in server.served) == 1000
        no_page_served_twice(server)

        files_before = {p.name: p.stat().st_mtime_ns for p in landed_pages(tmp_path)}
        again = made.collect()
        assert (again.pages, again.events) == (0, 0)
        assert {p.name: p.stat().st_mtime_ns for p in landed_pages(tmp_path)} == files_before

        later = server.add_events([T0_MS + i * 1_000 for i in range(1, 301)])
        made.clock = lambda: (T0_MS + 20 * MINUTE_MS) / 1000
        third = made.collect()
        assert third.events == 300
        assert landed_ids(tmp_path) == ids_of(events + later)
        no_page_served_twice(server)


def test_a_503_and_a_429_part_way_are_retried_honouring_retry_after(tmp_path):
    with StandInAuditServer(token=TOKEN) as server:
        events = server.add_events([T0_MS - 2 * 3_600_000 + i * 997 for i in range(3_000)])
        server.faults = {3: (503, None), 6: (429, "3"), 7: (502, None)}
        made, waits, lines = collector(server, tmp_path)
        made.collect(since=T0 - dt.timedelta(hours=3))
    assert landed_ids(tmp_path) == ids_of(events)
    assert [s for s in server.statuses if s != 200] == [503, 429, 502]
    assert 3.0 in waits and len(waits) == 3 and max(waits) <= 3.0
    assert sum("retry" in line for line in lines) == 3
    no_page_served_twice(server)


def test_a_503_with_retry_after_waits_as_asked(tmp_path):
    with StandInAuditServer(token=TOKEN) as server:
        events = server.add_events([T0_MS - 2 * 3_600_000 + i * 997 for i in range(700)])
        server.faults = {2: (503, "4")}
        made, waits, _ = collector(server, tmp_path)
        made.collect(since=T0 - dt.timedelta(hours=3))
    assert landed_ids(tmp_path) == ids_of(events)
    assert waits == [4.0]


def test_the_stand_in_skips_ties_at_a_page_boundary_as_datahubs_search_after_does():
    with StandInAuditServer() as server:
        server.add_events([T0_MS] * 70)  # each (event type, actor) pair twice in one millisecond
        seen, scroll = [], None
        while True:
            params = {"startTime": T0_MS, "endTime": T0_MS + 1, "size": 25}
            _, page = server.search({**params, **({"scrollId": scroll} if scroll else {})}, {})
            seen += page["usageEvents"]
            scroll = page.get("nextScrollId")
            if not scroll:
                break
    assert len(seen) < 70 and len(ids_of(seen)) == len(seen)


def test_events_tying_on_every_sort_key_at_page_boundaries_are_all_collected_once(tmp_path):
    with StandInAuditServer(token=TOKEN) as server:
        # 20 milliseconds of 70 events: each (event type, actor) pair twice in each millisecond
        crowded = [T0_MS - 3_600_000 + (i // 70) * 1_000 for i in range(1_400)]
        events = server.add_events(crowded)
        made, _, lines = collector(server, tmp_path, page_size=45)
        summary = made.collect(since=T0 - dt.timedelta(hours=2))
        assert made.collect().events == 0
    assert landed_ids(tmp_path) == ids_of(events)
    assert summary.events == 1_400 and summary.boundary_events > 0
    assert any("where a page ended" in line for line in lines)


def test_a_refused_scroll_position_pages_the_window_again_without_landing_a_page_twice(tmp_path):
    with StandInAuditServer(token=TOKEN) as server:
        events = server.add_events([T0_MS - 2 * 3_600_000 + i * 1_009 for i in range(2_600)])
        server.faults = {4: (400, None)}  # the fourth page's scrollId has expired
        made, _, lines = collector(server, tmp_path)
        summary = made.collect(since=T0 - dt.timedelta(hours=3))
    assert any("paging the window again" in line for line in lines)
    assert summary.pages == len(landed_pages(tmp_path)) == 6
    assert landed_ids(tmp_path) == ids_of(events)


def test_a_run_stopped_between_landing_a_page_and_saving_its_state_resumes_without_repeating_it(tmp_path):
    with StandInAuditServer(token=TOKEN) as server:
        events = server.add_events([T0_MS - 2 * 3_600_000 + i * 1_003 for i in range(4_000)])
        made, _, _ = collector(server, tmp_path)
        landed = []

        def crash_on_third_page(line: str) -> None:
            if "-> audit-" in line:
                landed.append(line)
                if len(landed) == 3:
                    raise KeyboardInterrupt  # after the rename, before the state that counts the page

        made.report = crash_on_third_page
        with pytest.raises(KeyboardInterrupt):
            made.collect(since=T0 - dt.timedelta(hours=3))
        assert len(landed_pages(tmp_path)) == 3
        made.report = lambda line: None
        resumed = made.collect()
    assert resumed.recovered == 1
    assert landed_ids(tmp_path) == ids_of(events)
    no_page_served_twice(server)


def test_401_stops_at_once_with_one_line_and_the_token_appears_nowhere(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("DATAHUB_TOKEN", "wrong-" + TOKEN)
    with StandInAuditServer(token=TOKEN) as server:
        server.add_events([int(time.time() * 1000) - 3_600_000])
        code = main(["collect", "datahub-audit", "--server", server.url, "--landing", str(tmp_path)])
    out = capsys.readouterr()
    assert code == 1 and server.requests == 1
    assert out.err.strip().splitlines() == [
        "lakehouse collect: DataHub answered 401 Unauthorized: the token in $DATAHUB_TOKEN was refused"
    ]
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert TOKEN not in out.out + out.err
    assert all(TOKEN.encode() not in p.read_bytes() for p in files)


def test_a_token_from_another_variable_is_sent_and_written_nowhere(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("MY_DATAHUB_TOKEN", TOKEN)
    with StandInAuditServer(token=TOKEN) as server:
        now = int(time.time() * 1000)
        events = server.add_events([now - 3_600_000 + i * 10_000 for i in range(100)])
        code = main(
            ["collect", "datahub-audit", "--server", server.url, "--landing", str(tmp_path)]
            + ["--token-env", "MY_DATAHUB_TOKEN", "--page-size", "30", "--since", "2000-01-01"]
        )
    out = capsys.readouterr()
    assert code == 0, out.err
    assert landed_ids(tmp_path) == ids_of(events)
    assert "events=100" in out.out
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert any(p.name.endswith(".json") and "_state" in str(p) for p in files)
    assert all(TOKEN.encode() not in p.read_bytes() for p in files)
    assert TOKEN not in out.out + out.err


def test_a_token_secret_is_read_only_when_the_variable_is_unset_and_one_missing_stops_at_once(
    tmp_path, monkeypatch, capsys
):
    arguments = [
        "collect",
        "datahub-audit",
        "--landing",
        str(tmp_path),
        "--token-secret",
        "lakehouse/datahub",
    ]
    with secrets_api(monkeypatch, {}) as workspace, StandInAuditServer(token=TOKEN) as server:
        server.add_events([int(time.time() * 1000) - 3_600_000])
        monkeypatch.setenv("DATAHUB_TOKEN", "")  # unset, and restored after the test
        assert main([*arguments, "--server", server.url]) == 2
        assert server.requests == 0  # nothing asked without the token
        assert capsys.readouterr().err.startswith(
            "lakehouse collect: config error: cannot read the DataHub token from secret lakehouse/datahub: "
        )
        monkeypatch.setenv("DATAHUB_TOKEN", TOKEN)  # set (on a cluster, say): the scope is not asked
        assert main([*arguments, "--server", server.url]) == 0
    assert len(workspace.requests) == 1 and "events=1" in capsys.readouterr().out


def test_an_unreachable_server_is_retried_a_bounded_number_of_times_then_reported(tmp_path):
    server = StandInAuditServer()
    url = server.url
    server.httpd.server_close()  # nothing listens there any more
    made = DataHubAuditCollector(
        server=url,
        landing=tmp_path,
        folder_name="datahub_audit",
        settings=AuditSettings(max_attempts=3, backoff_seconds=0.01),
        token=None,
        event_types=[],
        report=lambda line: None,
    )
    with pytest.raises(
        CollectError, match=r"gave up after 3 attempts, last: ConnectionError reaching http://127"
    ):
        made.collect()
    assert landed_pages(tmp_path) == []


def test_event_types_filter_the_collection_and_keep_their_own_state(tmp_path):
    with StandInAuditServer() as server:
        events = server.add_events([T0_MS - 3_600_000 + i * 1_000 for i in range(500)])
        logins, _, _ = collector(server, tmp_path, token=None)
        logins.event_types = ["LogInEvent"]
        logins.state_file = logins.state_file.with_name("logins.json")
        logins.collect(since=T0 - dt.timedelta(hours=2))
        wanted = [e for e in events if e["eventType"] == "LogInEvent"]
        assert wanted and landed_ids(tmp_path) == ids_of(wanted)


def _start_collect(server: StandInAuditServer, landing: Path, *extra: str) -> subprocess.Popen:
    env = {**os.environ, "DATAHUB_TOKEN": TOKEN}
    command = [LAKEHOUSE, "collect", "datahub-audit", "--server", server.url, "--landing", str(landing)]
    return subprocess.Popen(
        [*command, "--page-size", "40", "--since", "2000-01-01", *extra],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.mark.slow
@pytest.mark.parametrize("kill_after_pages", [2, 9, 23])
def test_a_collect_killed_mid_collection_resumes_with_no_page_twice_and_none_skipped(
    tmp_path, kill_after_pages
):
    with StandInAuditServer(token=TOKEN, delay_seconds=0.02) as server:
        now = int(time.time() * 1000)
        events = server.add_events([now - 5 * 3_600_000 + i * 5_000 for i in range(1_200)])
        process = _start_collect(server, tmp_path)
        deadline = time.monotonic() + 60
        while len(landed_pages(tmp_path)) < kill_after_pages and time.monotonic() < deadline:
            time.sleep(0.005)
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=10)
        assert process.returncode == -signal.SIGKILL
        killed_at = len(landed_pages(tmp_path))
        assert kill_after_pages <= killed_at < 30
        leftovers = [p.name for p in (tmp_path / "datahub_audit").iterdir() if p.is_file()]
        assert all(name.startswith("audit-") or name.startswith("_") for name in leftovers)

        resumed = _start_collect(server, tmp_path)
        out, err = resumed.communicate(timeout=120)
    assert resumed.returncode == 0, err
    assert landed_ids(tmp_path) == ids_of(events)
    # The page whose answer was on the wire when the collector died was never landed:
    # asking for it again is what resuming means. Every other page was asked for once.
    assert len(pages_served_twice(server)) <= 1
    assert not list((tmp_path / "datahub_audit").glob("_audit-*"))


@pytest.mark.slow
def test_every_collects_again_on_each_tick(tmp_path):
    with StandInAuditServer(token=TOKEN) as server:
        now = int(time.time() * 1000)
        server.add_events([now - 3_600_000 + i * 1_000 for i in range(50)])
        process = _start_collect(server, tmp_path, "--every", "1s")
        lines = []
        while len(lines) < 2:
            line = process.stdout.readline()
            assert line, process.stderr.read()
            lines.append(line)
        process.send_signal(signal.SIGINT)
        process.communicate(timeout=10)
    assert "events=50" in lines[0] and "events=0" in lines[1]
    assert landed_ids(tmp_path) == Counter({f"trace-{i:07d}": 1 for i in range(50)})


def test_since_and_until_bound_what_the_command_collects(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("DATAHUB_TOKEN", TOKEN)
    now = dt.datetime.now(dt.timezone.utc).replace(microsecond=0)
    now_ms = int(now.timestamp() * 1000)
    with StandInAuditServer(token=TOKEN) as server:
        events = server.add_events([now_ms - 5 * 3_600_000 + i * 7_001 for i in range(2_000)])
        since, until = now - dt.timedelta(hours=4), now - dt.timedelta(hours=2)
        code = main(
            ["collect", "datahub-audit", "--server", server.url, "--landing", str(tmp_path)]
            + ["--since", since.isoformat(), "--until", until.strftime("%Y-%m-%dT%H:%M:%SZ")]
        )
    assert code == 0, capsys.readouterr().err
    inside = [e for e in events if since.timestamp() * 1000 <= e["timestamp"] < until.timestamp() * 1000]
    assert 0 < len(inside) < len(events)
    assert landed_ids(tmp_path) == ids_of(inside)
