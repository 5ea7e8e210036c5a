"""`lakehouse collect openmetadata` against a stand-in that behaves as OpenMetadata's own code does."""

from __future__ import annotations

import datetime as dt
import json
import socket
from collections import Counter
from pathlib import Path

import pytest

from pipelines.cli import main
from pipelines.collectors.openmetadata import OpenMetadataPull, OpenMetadataSettings
from pipelines.collectors.retrying_http import PullError
from tests.support.receiver import landed_files, logged_losses, running_receiver
from tests.support.secrets_api import JOB_TOKEN, secrets_api
from tests.support.stand_in_openmetadata import StandInOpenMetadata

T0 = dt.datetime(2026, 11, 20, 12, 0, tzinfo=dt.timezone.utc)
T0_MS = int(T0.timestamp() * 1000)
MINUTE_MS = 60_000
TOKEN = "om-bot-jwt-never-in-files"


def pull(
    server: StandInOpenMetadata, landing: Path, now_ms: int = T0_MS, subscriptions=(), **settings
) -> OpenMetadataPull:
    return OpenMetadataPull(
        server=server.url,
        landing=landing,
        folder_name="openmetadata",
        settings=OpenMetadataSettings(**{"backoff_seconds": 0.0, "max_attempts": 2, **settings}),
        token=TOKEN,
        subscriptions=list(subscriptions),
        report=lambda line: None,
        sleep=lambda seconds: None,
        clock=lambda: now_ms / 1000,
    )


def landed_ids(landing: Path) -> Counter:
    return Counter(
        json.loads(line)["id"]
        for path in landed_files(landing, "openmetadata")
        for line in path.read_bytes().splitlines()
        if line.strip()
    )


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_a_1_3_subscription_gives_up_on_a_receiver_that_is_down_and_the_pull_lands_what_it_lost(tmp_path):
    with StandInOpenMetadata(token=TOKEN) as server:
        server.now_ms = lambda: T0_MS - 10 * MINUTE_MS
        before = server.change([T0_MS - 50 * MINUTE_MS + i * 1000 for i in range(30)])
        server.deliver(f"http://127.0.0.1:{free_port()}/openmetadata")  # the receiver is down
        assert server.subscription["offset"] == 30 and server.delivered == []  # moved past, never re-sent
        during = server.change([T0_MS - 20 * MINUTE_MS + i * 1000 for i in range(20)])
        with running_receiver(tmp_path) as url:
            server.deliver(url + "/openmetadata")  # back up: only the new events arrive
        assert server.delivered == [e["id"] for e in during]
        assert set(landed_ids(tmp_path)) == {e["id"] for e in during}

        summary = pull(server, tmp_path).collect(since=T0 - dt.timedelta(hours=1))
    assert summary.events == 50 and summary.collected_until_ms == T0_MS - 30_000
    ids = landed_ids(tmp_path)
    assert set(ids) == {e["id"] for e in before + during}
    assert {i: n for i, n in ids.items() if n > 1} == {e["id"]: 2 for e in during}  # silver counts them once
    asked = [params for path, params in server.requests if path == "/api/v1/events"]
    assert [sorted(p) for p in asked] == [
        [t, "timestamp"] for t in ("entityCreated", "entityUpdated", "entityRestored", "entityDeleted")
    ]
    assert all(p["timestamp"] == str(T0_MS - 60 * MINUTE_MS) for p in asked)


def test_each_pull_takes_the_next_window_and_a_stopped_pull_resumes_without_asking_twice(tmp_path):
    with StandInOpenMetadata(token=TOKEN) as server:
        first = server.change([T0_MS - 30 * MINUTE_MS + i * 7_000 for i in range(100)])
        server.faults = {3: 400}  # entityRestored refused once: not a retryable answer
        with pytest.raises(PullError):
            pull(server, tmp_path).collect(since=T0 - dt.timedelta(hours=1))
        ((source, status, reason),) = logged_losses(tmp_path)
        assert (source, status) == ("openmetadata", "stopped") and "answered 400" in reason
        assert pull(server, tmp_path).collect().events == sum(
            1 for e in first if e["eventType"] in ("entityRestored", "entitySoftDeleted", "entityDeleted")
        )
        asked = [p for path, p in server.requests if path == "/api/v1/events"]
        assert [next(k for k in p if k != "timestamp") for p in asked] == [
            "entityCreated",
            "entityUpdated",
            "entityRestored",
            "entityRestored",
            "entityDeleted",
        ]
        assert landed_ids(tmp_path) == Counter({e["id"]: 1 for e in first})

        later = server.change([T0_MS + i * 1000 for i in range(1, 41)])
        again = pull(server, tmp_path, now_ms=T0_MS + 15 * MINUTE_MS).collect()
        assert again.events == 40
        assert {p["timestamp"] for path, p in server.requests[-4:]} == {str(T0_MS - 30_000)}
    assert landed_ids(tmp_path) == Counter({e["id"]: 1 for e in first + later})


def test_a_range_the_server_cannot_answer_at_once_is_asked_per_entity_type(tmp_path):
    with StandInOpenMetadata(token=TOKEN, max_answer=100) as server:
        events = server.change([T0_MS - 30 * MINUTE_MS + i * 500 for i in range(400)])
        summary = pull(server, tmp_path).collect(since=T0 - dt.timedelta(hours=1))
    assert landed_ids(tmp_path) == Counter({e["id"]: 1 for e in events})
    assert summary.split_requests == 5 * 2  # entityUpdated and entityDeleted hold more than 100
    assert any(path == "/api/v1/metadata/types" for path, _ in server.requests)


def test_failed_deliveries_of_a_subscription_are_landed_and_a_server_without_that_api_is_no_error(tmp_path):
    with StandInOpenMetadata(token=TOKEN) as server:
        clock = iter(range(T0_MS - 20 * MINUTE_MS, T0_MS, 1000))
        server.now_ms = lambda: next(clock)
        old = server.change([T0_MS - 3 * 86_400_000 + i for i in range(25)])  # before any pull's window
        server.deliver(f"http://127.0.0.1:{free_port()}/openmetadata")
        made = pull(server, tmp_path, subscriptions=["lakehouse"], failed_page_size=10)
        assert made.collect().failed_events == 25
        assert made.collect().failed_events == 0  # seen already
    assert landed_ids(tmp_path) == Counter({e["id"]: 1 for e in old})
    with StandInOpenMetadata(token=TOKEN, failed_events_api=False) as older:
        older.change([T0_MS - 5 * MINUTE_MS])
        summary = pull(older, tmp_path / "older", subscriptions=["lakehouse"]).collect()
    assert (summary.events, summary.failed_events) == (1, 0)


def test_the_command_pulls_into_landing_and_prints_what_it_collected(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("OPENMETADATA_TOKEN", TOKEN)
    with StandInOpenMetadata(token=TOKEN) as server:
        now = int(dt.datetime.now(dt.timezone.utc).timestamp() * 1000)
        events = server.change([now - 10 * MINUTE_MS + i * 1000 for i in range(12)])
        code = main(["collect", "openmetadata", "--server", server.url + "/api", "--landing", str(tmp_path)])
    assert code == 0
    out = capsys.readouterr().out
    assert out.startswith("collected  events=12  failed_events=0  files=")
    assert landed_ids(tmp_path) == Counter({e["id"]: 1 for e in events})
    assert TOKEN not in out and all(TOKEN not in p.read_text() for p in tmp_path.rglob("*") if p.is_file())


def test_the_command_takes_its_token_from_a_databricks_secret(tmp_path, capsys, monkeypatch):
    """`--token-secret SCOPE/KEY` fills the token variable from the secret scope, as a collect task
    of the Databricks job reads it; an empty `--subscription` (its bundle variable unset) is none."""
    monkeypatch.setenv("OPENMETADATA_TOKEN", "")  # unset, and restored after the test
    secret = {("lakehouse", "openmetadata_token"): TOKEN}
    with secrets_api(monkeypatch, secret) as workspace, StandInOpenMetadata(token=TOKEN) as server:
        now = int(dt.datetime.now(dt.timezone.utc).timestamp() * 1000)
        events = server.change([now - 10 * MINUTE_MS + i * 1000 for i in range(5)])
        code = main(
            ["collect", "openmetadata", "--server", server.url, "--landing", str(tmp_path)]
            + ["--token-secret", "lakehouse/openmetadata_token", "--subscription", ""]
        )
    out = capsys.readouterr()
    assert code == 0, out.err
    assert workspace.requests == [("lakehouse", "openmetadata_token", f"Bearer {JOB_TOKEN}")]
    assert landed_ids(tmp_path) == Counter({e["id"]: 1 for e in events})
    assert not [path for path, _ in server.requests if path.endswith("/failedEvents")]
    assert TOKEN not in out.out + out.err
    assert all(TOKEN not in p.read_text() for p in tmp_path.rglob("*") if p.is_file())
