"""`lakehouse collect openmetadata`: the catch-up pull of the change events the receiver missed.

From 1.3 on, OpenMetadata's event subscriptions do not retry: a delivery that fails (connection
refused, 401, 413, 503) is recorded as a failed event of the subscription and the subscription's
offset moves past it. This pull reads the same events from OpenMetadata itself, so a receiver
that was down or refused a body only delays them:

- The events API, `GET /api/v1/events?<eventType>=*&timestamp=<ms>`, in every version: all change
  events of that type whose time is at or after `timestamp`, as `{"data": [...], "paging":
  {...}}`, with no paging and no upper bound (the server loads the whole range into memory). The
  pull asks one event type at a time (`entityCreated`, `entityUpdated`, `entityRestored`,
  `entityDeleted`; the last one includes soft deletes), from where it stopped: a window
  `[start, now - settle_seconds)`, keeping the events of the window. A request the server cannot
  answer (5xx or time-out after the retries) is asked again per entity type
  (`GET /api/v1/metadata/types?category=entity`), so a long backlog is read in smaller answers.
  Running it often keeps every range short.
- The failed events of named subscriptions (`--subscription`), where the server has them
  (`GET /api/v1/events/subscriptions/name/{name}/failedEvents?limit=&paginationOffset=`, newest
  failure first): their `changeEvent`s, which also covers event types the events API does not
  list. A 404 there means a server without that API (or no such subscription): the events API
  alone is used.

Each answer is landed as JSON Lines (one ChangeEvent a line, as the webhook posts it) under a
name made of the window and the request, durably (`landing_writer`); `openmetadata_state` keeps
the position, so a pull that is killed resumes and lands no request twice. Silver's `event_id` is
the hash of the event's `id`, so what the receiver and the pull both land counts once. What the
pull could not collect is counted in the collectors' loss log (`ops.collector_losses`).
"""

from __future__ import annotations

import datetime as dt
import fcntl
import json
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from pipelines.collectors.landing_writer import write_atomically
from pipelines.collectors.loss_log import LossLog
from pipelines.collectors.openmetadata_state import (
    PullState,
    load_state,
    save_state,
    server_key,
    state_path,
)
from pipelines.collectors.retrying_http import AccessRefused, PullError, Refused, RetryingClient

EVENTS_PATH = "/api/v1/events"
TYPES_PATH = "/api/v1/metadata/types"
FAILED_PATH = "/api/v1/events/subscriptions/name/{name}/failedEvents"
EVENT_TYPES = ("entityCreated", "entityUpdated", "entityRestored", "entityDeleted")
DAY_MS = 86_400_000
FAILURE_OVERLAP_MS = 60_000  # failures recorded while the last pull paged are read again
SOURCE = "openmetadata"
COLLECTOR = "collect-openmetadata"


@dataclass(frozen=True)
class OpenMetadataSettings:
    """`collectors.openmetadata` in conf/lakehouse.yaml (see there for meanings)."""

    token_env: str = "OPENMETADATA_TOKEN"
    settle_seconds: int = 30
    failed_page_size: int = 100
    max_attempts: int = 6
    backoff_seconds: float = 0.5
    max_backoff_seconds: float = 60.0
    timeout_seconds: float = 120.0

    @classmethod
    def from_section(cls, section: dict) -> OpenMetadataSettings:
        return cls(**{name: section[name] for name in cls.__dataclass_fields__ if name in section})


@dataclass
class PullSummary:
    events: int = 0
    files: int = 0
    split_requests: int = 0
    failed_events: int = 0
    collected_until_ms: int | None = None

    def line(self) -> str:
        until = "-" if self.collected_until_ms is None else iso(self.collected_until_ms)
        return (
            f"collected  events={self.events}  failed_events={self.failed_events}  files={self.files}  "
            f"split_requests={self.split_requests}  until={until}"
        )


def iso(ms: int) -> str:
    return dt.datetime.fromtimestamp(ms / 1000, dt.timezone.utc).isoformat(timespec="milliseconds")


def to_ms(moment: dt.datetime) -> int:
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.timezone.utc)
    return int(moment.timestamp() * 1000)


def api_base(server: str) -> str:
    """The server's base URL, whether given with or without its `/api` suffix."""
    base = server.rstrip("/")
    return base[: -len("/api")] if base.endswith("/api") else base


def _lines(events: list[dict]) -> bytes:
    return b"".join(
        json.dumps(event, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"
        for event in events
    )


def _event_list(response, what: str) -> list:
    try:
        value = response.json()
    except ValueError:
        raise PullError(f"{what}: the answer is not JSON") from None
    if isinstance(value, dict) and isinstance(value.get("data"), list):
        return value["data"]
    if isinstance(value, list):
        return value
    raise PullError(f"{what}: the answer is no list of events")


class OpenMetadataPull:
    """`collect()` lands what OpenMetadata has that the landing folder may lack, resumably."""

    def __init__(
        self,
        server: str,
        landing: Path,
        folder_name: str,
        settings: OpenMetadataSettings,
        token: str | None,
        subscriptions: list[str],
        report: Callable[[str], object],
        sleep: Callable[[float], object] = time.sleep,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.base = api_base(server)
        self.folder = landing / folder_name
        self.settings = settings
        self.token = token
        self.subscriptions = list(subscriptions)
        self.report = report
        self.sleep = sleep
        self.clock = clock
        self.state_file = state_path(self.folder, self.base)
        self.losses = LossLog(landing, COLLECTOR)

    def _client(self) -> RetryingClient:
        s = self.settings
        return RetryingClient(
            self.token,
            s.token_env,
            s.max_attempts,
            s.backoff_seconds,
            s.max_backoff_seconds,
            s.timeout_seconds,
            self.report,
            self.sleep,
        )

    def collect(self, since: dt.datetime | None = None) -> PullSummary:
        """Finish the window under way, then collect from where the state ends up to now less
        `settle_seconds` (the first pull starts at `since`, default a day ago), then the failed
        events of the subscriptions. A failure is counted in the loss log and raised."""
        self.state_file.parent.mkdir(parents=True, exist_ok=True)
        with open(self.state_file.with_suffix(".lock"), "a") as lock:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise PullError(f"another pull of this server is running ({lock.name})") from None
            try:
                return self._collect(since)
            except PullError as exc:
                self.losses.record(SOURCE, "stopped", str(exc).splitlines()[0])
                raise
            finally:
                self.losses.flush()

    def _collect(self, since: dt.datetime | None) -> PullSummary:
        summary = PullSummary()
        state = load_state(self.state_file, self.base)
        now_ms = int(self.clock() * 1000)
        end_ms = now_ms - self.settings.settle_seconds * 1000
        client = self._client()
        try:
            if state.window is not None:
                self._collect_window(client, state, summary)
            start_ms = state.collected_until_ms
            if start_ms is None:
                start_ms = to_ms(since) if since is not None else now_ms - DAY_MS
            elif since is not None and to_ms(since) > start_ms:
                start_ms = to_ms(since)  # a later --since skips ahead; an earlier one never re-collects
            if end_ms > start_ms:
                state.plan(start_ms, end_ms)
                save_state(self.state_file, state)
                self._collect_window(client, state, summary)
            for name in self.subscriptions:
                self._collect_failures(client, state, name, summary)
        finally:
            client.close()
        summary.collected_until_ms = state.collected_until_ms
        return summary

    def _collect_window(self, client: RetryingClient, state: PullState, summary: PullSummary) -> None:
        start, end = state.window
        for event_type in EVENT_TYPES:
            if event_type in state.done:
                continue
            name = f"pull-{state.key}-{start}-{end}-{event_type}.jsonl"
            if not (self.folder / name).exists():
                events = self._events_of(client, event_type, start, summary)
                kept = [
                    e
                    for e in events
                    if isinstance(e, dict)
                    and isinstance(e.get("timestamp"), int)
                    and start <= e["timestamp"] < end
                ]
                if kept:
                    write_atomically(self.folder / name, _lines(kept))
                    summary.files += 1
                    summary.events += len(kept)
                    self.report(f"{event_type} {iso(start)}..{iso(end)}: {len(kept)} events -> {name}")
            state.done.append(event_type)
            save_state(self.state_file, state)
        state.finish_window()
        save_state(self.state_file, state)

    def _events_of(self, client: RetryingClient, event_type: str, start: int, summary: PullSummary) -> list:
        """Every `event_type` event from `start` on: in one answer, or per entity type when the server
        cannot give it in one."""
        url = self.base + EVENTS_PATH
        try:
            return _event_list(client.get(url, {event_type: "*", "timestamp": start}), url)
        except (AccessRefused, Refused):
            raise
        except PullError as exc:
            self.report(
                f"{event_type} from {iso(start)} in one answer failed ({exc}); asking per entity type"
            )
        events: list = []
        for entity_type in self._entity_types(client):
            summary.split_requests += 1
            events += _event_list(client.get(url, {event_type: entity_type, "timestamp": start}), url)
        return events

    def _entity_types(self, client: RetryingClient) -> list[str]:
        url = self.base + TYPES_PATH
        types = _event_list(client.get(url, {"category": "entity", "limit": 1000}), url)
        names = sorted({t["name"] for t in types if isinstance(t, dict) and isinstance(t.get("name"), str)})
        if not names:
            raise PullError(f"{url} names no entity types to ask per type")
        return names

    def _collect_failures(
        self, client: RetryingClient, state: PullState, name: str, summary: PullSummary
    ) -> None:
        """Land the change events of `name`'s failed deliveries recorded since the last pull."""
        seen = state.failures_seen_ms.get(name, 0)
        since = seen - FAILURE_OVERLAP_MS
        url = self.base + FAILED_PATH.format(name=quote(name, safe=""))
        page, offset, fresh = self.settings.failed_page_size, 0, []
        while True:
            try:
                items = _event_list(client.get(url, {"limit": page, "paginationOffset": offset}), url)
            except Refused as exc:
                if exc.status != 404:
                    raise
                self.report(
                    f"subscription {name}: no failed events to read here ({exc}); the events API covers it"
                )
                return
            failures = [i for i in items if isinstance(i, dict)]
            fresh += [f for f in failures if isinstance(f.get("timestamp"), int) and f["timestamp"] >= since]
            oldest = min((f.get("timestamp") or 0 for f in failures), default=0)
            if len(items) < page or oldest < since:
                break
            offset += page
        recent = {tuple(item) for item in state.failures_recent.get(name, [])}
        fresh = [f for f in fresh if (_failed_id(f), f["timestamp"]) not in recent]
        events = [f["changeEvent"] for f in fresh if isinstance(f.get("changeEvent"), dict)]
        if events:
            newest = max(f["timestamp"] for f in fresh)
            subscription = server_key(name)
            file_name = f"failed-{state.key}-{subscription}-{newest}-{len(events)}.jsonl"
            write_atomically(self.folder / file_name, _lines(events))
            summary.files += 1
            summary.failed_events += len(events)
            reasons = Counter(str(f.get("reason") or "")[:80] for f in fresh)
            self.report(
                f"subscription {name}: {len(events)} failed deliveries -> {file_name} ({dict(reasons)})"
            )
        if fresh:
            newest = max(seen, *(f["timestamp"] for f in fresh))
            state.failures_seen_ms[name] = newest
            kept = recent | {(_failed_id(f), f["timestamp"]) for f in fresh}
            state.failures_recent[name] = sorted(
                [list(item) for item in kept if item[1] >= newest - FAILURE_OVERLAP_MS],
                key=lambda i: (i[1], str(i[0])),
            )
            save_state(self.state_file, state)


def _failed_id(failure: dict) -> str | None:
    event = failure.get("changeEvent")
    return event.get("id") if isinstance(event, dict) else None
