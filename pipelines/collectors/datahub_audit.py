"""Collect DataHub's audit events into `<landing>/datahub_audit/` through the Audit Events Search API.

`POST {server}/openapi/v1/events/audit/search?startTime=&endTime=&size=[&scrollId=]` with a
filter body answers pages of `usageEvents`, `nextScrollId` to continue, and a `total` the
server counts only up to 10,000. The collector walks the time from where it stopped to now
(less `settle_seconds`, for events still being indexed) as one time window; a window whose
first page reports the cap is halved before any of its pages is written, and so on, so no
window holds more than the server can count and a quiet month costs one request. Each non-empty page is landed whole, as the server sent it (bronze reads
audit search pages), under a name made of the collection, the window and the page number, so
a page fetched twice would land under one name.

Page boundaries. DataHub sorts hits by timestamp, event type and actor and continues a scroll
strictly after the last hit's values, so events that tie on all three across a page boundary are
skipped by the server. The collector therefore reads each millisecond where a page ended again,
as a window of its own in one request, and lands the events of it that no page of the window
held (by the identity silver's `event_id` hashes) as `...-b<ms>.json`.

Late-indexed events. The search reads an index fed through Kafka: an event can appear minutes
after its timestamp, after a collect already read its time. So every collect that moves on also
reads the `overlap_minutes` behind its old position again, whole (one request of up to 10,000
events per part, halved while a part reaches the cap), and lands the events that no landed file
of that time holds as `...-r.json`. How many it finds is the measure of DataHub's indexing lag
(`audit_late_indexed_events` in `ops.dq_results`); silver's `event_id` removes any event landed
twice. An event indexed later than the overlap is still missed: raise `overlap_minutes` then.

Every request is retried on 429 and 503 (waiting `Retry-After`), other 5xx and connection errors, with
exponential backoff bounded by `max_backoff_seconds`, up to `max_attempts`; 401/403 stop at once
with a one-line reason. The bearer token is read from an environment variable and only ever
put in the Authorization header: it is in no log line, exception text or file.
"""

from __future__ import annotations

import datetime as dt
import email.utils
import fcntl
import json
import random
import re
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import requests

from pipelines.collectors.collector_state import (
    CollectorState,
    collection_key,
    load_state,
    save_state,
    state_path,
)
from pipelines.collectors.landing_writer import write_atomically
from pipelines.collectors.loss_log import LossLog
from silver.datahub_audit_events import EVENT_IDENTITY

SEARCH_PATH = "/openapi/v1/events/audit/search"
DAY_MS = 86_400_000
MAX_WINDOW_RESTARTS = 3  # a server that refuses every scroll position stops the collect instead
MINUTE_MS = 60_000
SOURCE = "datahub_audit"
COLLECTOR = "collect-datahub-audit"
FILE_NAME = re.compile(r"^audit-(?P<key>[0-9a-f]+)-(?P<start>\d+)-(?P<end>\d+)-[pbr]")


class CollectError(Exception):
    """Collection stopped; the message is one line and never holds the token."""


class AccessRefused(CollectError):
    """401/403: retrying cannot help."""


class ScrollRejected(CollectError):
    """A 4xx answer to a scroll continuation: the saved position is no longer valid (expired)."""


@dataclass(frozen=True)
class AuditSettings:
    """`collectors.datahub_audit` in conf/lakehouse.yaml (see there for meanings)."""

    token_env: str = "DATAHUB_TOKEN"
    page_size: int = 1000
    settle_seconds: int = 60
    overlap_minutes: float = 15
    total_cap: int = 10_000
    max_attempts: int = 8
    backoff_seconds: float = 0.5
    max_backoff_seconds: float = 60.0
    timeout_seconds: float = 30.0

    @classmethod
    def from_section(cls, section: dict) -> AuditSettings:
        return cls(**{name: section[name] for name in cls.__dataclass_fields__ if name in section})


@dataclass
class CollectSummary:
    pages: int = 0
    events: int = 0
    windows: int = 0
    splits: int = 0
    recovered: int = 0
    boundary_events: int = 0
    late_events: int = 0
    collected_until_ms: int | None = None


def to_ms(moment: dt.datetime) -> int:
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.timezone.utc)
    return int(moment.timestamp() * 1000)


def iso(ms: int) -> str:
    return dt.datetime.fromtimestamp(ms / 1000, dt.timezone.utc).isoformat(timespec="milliseconds")


def parse_moment(text: str) -> dt.datetime:
    """An ISO date or date-time (UTC when no offset is given), e.g. 2026-11-01 or 2026-11-01T08:00Z."""
    try:
        moment = dt.datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(f"{text!r} is not an ISO date or date-time (e.g. 2026-11-01T08:00:00Z)") from None
    return moment if moment.tzinfo else moment.replace(tzinfo=dt.timezone.utc)


def retry_after_seconds(value: str | None, now: float) -> float | None:
    """`Retry-After` as seconds: a number of seconds or an HTTP date; None when absent or unreadable."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - now)


class AuditSearchClient:
    """One search request at a time, retried as the module docstring says."""

    def __init__(
        self,
        server: str,
        token: str | None,
        settings: AuditSettings,
        report: Callable[[str], object],
        sleep: Callable[[float], object] = time.sleep,
    ) -> None:
        self.url = server.rstrip("/") + SEARCH_PATH
        self.settings = settings
        self.report = report
        self.sleep = sleep
        self.session = requests.Session()
        self.session.headers["Accept"] = "application/json"
        if token:
            self.session.headers["Authorization"] = f"Bearer {token}"
        self.has_token = bool(token)

    def close(self) -> None:
        self.session.close()

    def _backoff(self, attempt: int) -> float:
        base = self.settings.backoff_seconds * (2 ** (attempt - 1))
        return min(self.settings.max_backoff_seconds, base * (0.5 + random.random() / 2))

    def search(
        self, start_ms: int, end_ms: int, scroll_id: str | None, body: dict, size: int | None = None
    ) -> bytes:
        """The raw response body of one page (JSON), after retries."""
        params: dict[str, object] = {
            "startTime": start_ms,
            "endTime": end_ms,
            "size": size or self.settings.page_size,
        }
        if scroll_id:
            params["scrollId"] = scroll_id
        last = ""
        for attempt in range(1, self.settings.max_attempts + 1):
            wait = self._backoff(attempt)
            try:
                response = self.session.post(
                    self.url, params=params, json=body, timeout=self.settings.timeout_seconds
                )
            except requests.RequestException as exc:
                last = f"{type(exc).__name__} reaching {self.url}"
            else:
                status = response.status_code
                if status == 200:
                    return response.content
                if status in (401, 403):
                    hint = (
                        f"the token in ${self.settings.token_env} was refused"
                        if self.has_token
                        else f"${self.settings.token_env} is not set and the server wants a token"
                    )
                    raise AccessRefused(f"DataHub answered {status} {response.reason}: {hint}")
                if status != 429 and status < 500:
                    excerpt = response.text[:200].replace("\n", " ")
                    refused = ScrollRejected if scroll_id else CollectError
                    raise refused(f"DataHub answered {status} {response.reason}: {excerpt}")
                last = f"{status} {response.reason}"
                if status in (429, 503):
                    asked = retry_after_seconds(response.headers.get("Retry-After"), time.time())
                    if asked is not None:
                        wait = min(asked, self.settings.max_backoff_seconds)
            if attempt == self.settings.max_attempts:
                break
            self.report(f"retry {attempt}/{self.settings.max_attempts - 1} in {wait:.1f}s after {last}")
            self.sleep(wait)
        raise CollectError(f"gave up after {self.settings.max_attempts} attempts, last: {last}")


def page_file_name(state: CollectorState, window: list[int], page: int) -> str:
    start, end = window
    return f"audit-{state.key}-{start}-{end}-p{page:05d}.json"


def boundary_file_name(state: CollectorState, window: list[int], boundary_ms: int) -> str:
    start, end = window
    return f"audit-{state.key}-{start}-{end}-b{boundary_ms}.json"


def reread_file_name(state: CollectorState, window: list[int]) -> str:
    start, end = window
    return f"audit-{state.key}-{start}-{end}-r.json"


def event_identity(event: dict) -> tuple:
    return tuple(json.dumps(event.get(field), sort_keys=True) for field in EVENT_IDENTITY)


def _plan(state: CollectorState, start_ms: int, end_ms: int) -> None:
    state.windows = [[start_ms, end_ms]]
    state.page = 0
    state.scroll_id = None


def _advance(state: CollectorState, page: dict) -> None:
    """After page `state.page` of the first window was landed (or found empty)."""
    events = page.get("usageEvents") or []
    next_scroll = page.get("nextScrollId")
    if events and next_scroll:
        last = events[-1].get("timestamp") if isinstance(events[-1], dict) else None
        state.next_page(next_scroll, last if isinstance(last, int) else None)
    else:
        state.paged = True


def recover(folder: Path, path: Path, state: CollectorState, summary: CollectSummary) -> None:
    """Count pages landed by a run killed before it saved the state that counts them."""
    while state.windows and not state.paged:
        landed = folder / page_file_name(state, state.windows[0], state.page)
        if not landed.exists():
            return
        _advance(state, json.loads(landed.read_bytes()))
        summary.recovered += 1
        save_state(path, state)


class DataHubAuditCollector:
    """`collect()` brings the landing folder up to date with the server, resumably."""

    def __init__(
        self,
        server: str,
        landing: Path,
        folder_name: str,
        settings: AuditSettings,
        token: str | None,
        event_types: list[str],
        report: Callable[[str], object],
        sleep: Callable[[float], object] = time.sleep,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.folder = landing / folder_name
        self.settings = settings
        self.event_types = sorted(event_types)
        self.state_file = state_path(self.folder, server, self.event_types)
        self.server = server
        self.token = token
        self.report = report
        self.sleep = sleep
        self.clock = clock
        self.losses = LossLog(landing, COLLECTOR)

    def _body(self) -> dict:
        return {"eventTypes": self.event_types, "entityTypes": [], "aspectTypes": [], "actorUrns": []}

    def collect(self, since: dt.datetime | None = None, until: dt.datetime | None = None) -> CollectSummary:
        """Finish the collection in progress, then collect from where the state ends up to `until`
        (default: now less `settle_seconds`) and read the overlap behind the old position again;
        the first collection starts at `since` (default: one day ago, the API's own default
        window). A collect that stops is counted in the loss log (`ops.collector_losses`)."""
        self.state_file.parent.mkdir(parents=True, exist_ok=True)
        with open(self.state_file.with_suffix(".lock"), "a") as lock:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise CollectError(
                    f"another collect of this server and filter is running ({lock.name})"
                ) from None
            try:
                return self._collect(since, until)
            except CollectError as exc:
                self.losses.record(SOURCE, "stopped", str(exc).splitlines()[0])
                raise
            finally:
                self.losses.flush()

    @property
    def overlap_ms(self) -> int:
        return int(self.settings.overlap_minutes * MINUTE_MS)

    def _collect(self, since: dt.datetime | None, until: dt.datetime | None) -> CollectSummary:
        summary = CollectSummary()
        for leftover in self.folder.glob(f"_audit-{collection_key(self.server, self.event_types)}-*.part"):
            leftover.unlink()  # a killed run's unfinished page: it is fetched again
        state = load_state(self.state_file, self.server, self.event_types)
        if state.recent_files is None:
            self._find_recent_files(state)
        recover(self.folder, self.state_file, state, summary)
        now_ms = int(self.clock() * 1000)
        end_ms = now_ms - self.settings.settle_seconds * 1000
        if until is not None:
            end_ms = min(end_ms, to_ms(until))
        client = AuditSearchClient(self.server, self.token, self.settings, self.report, self.sleep)
        try:
            self._page_windows(client, state, summary)
            self._reread(client, state, summary)
            start_ms = state.collected_until_ms
            if start_ms is None:
                start_ms = to_ms(since) if since is not None else now_ms - DAY_MS
                state.first_start_ms = start_ms
            elif since is not None and to_ms(since) > start_ms:
                start_ms = to_ms(since)  # a later --since skips ahead; an earlier one never re-collects
            if end_ms > start_ms:
                if state.collected_until_ms is not None and self.overlap_ms > 0:
                    first = state.first_start_ms if state.first_start_ms is not None else 0
                    reread_start = max(first, state.collected_until_ms - self.overlap_ms)
                    if reread_start < state.collected_until_ms:
                        state.reread = [reread_start, state.collected_until_ms]
                _plan(state, start_ms, end_ms)
                save_state(self.state_file, state)
                self._page_windows(client, state, summary)
                self._reread(client, state, summary)
        finally:
            client.close()
        summary.collected_until_ms = state.collected_until_ms
        return summary

    def _landed_names(self, state: CollectorState, window: list[int]) -> list[str]:
        start, end = window
        return sorted(p.name for p in self.folder.glob(f"audit-{state.key}-{start}-{end}-*.json"))

    def _find_recent_files(self, state: CollectorState) -> None:
        """A state written before files were tracked: find by name the files a re-read may need."""
        reach = (state.collected_until_ms or 0) - self.overlap_ms
        found = []
        for path in self.folder.glob(f"audit-{state.key}-*.json"):
            match = FILE_NAME.match(path.name)
            if match and int(match["end"]) > reach:
                found.append([path.name, int(match["end"])])
        state.recent_files = sorted(found)

    def _reread(self, client: AuditSearchClient, state: CollectorState, summary: CollectSummary) -> None:
        """Read the planned overlap again and land the events no landed file of that time holds."""
        if state.reread is None:
            return
        window = state.reread
        start, end = window
        name = reread_file_name(state, window)
        if not (self.folder / name).exists():
            events = self._read_whole(client, start, end)
            held = Counter(
                event_identity(event)
                for landed, _ in state.recent_files or []
                if (self.folder / landed).exists()
                for event in json.loads((self.folder / landed).read_bytes()).get("usageEvents") or []
                if isinstance(event, dict)
                and isinstance(event.get("timestamp"), int)
                and start <= event["timestamp"] < end
            )
            late = []
            for event in events:
                identity = event_identity(event)
                if held[identity]:
                    held[identity] -= 1
                else:
                    late.append(event)
            if late:
                document = {"count": len(late), "usageEvents": late}
                write_atomically(self.folder / name, json.dumps(document).encode("utf-8"))
                summary.pages += 1
                summary.events += len(late)
                summary.late_events += len(late)
                self.report(f"{iso(start)}..{iso(end)} read again: {len(late)} events indexed late -> {name}")
        if (self.folder / name).exists():
            state.remember([[name, end]])
        state.reread = None
        state.remember([], self.overlap_ms)
        save_state(self.state_file, state)

    def _read_whole(self, client: AuditSearchClient, start: int, end: int) -> list[dict]:
        """Every event of `[start, end)`, each part in one request (no page boundary to skip
        ties at), halved while a part reaches the cap."""
        raw = client.search(start, end, None, self._body(), size=self.settings.total_cap)
        try:
            page = json.loads(raw)
            events = [e for e in page.get("usageEvents") or [] if isinstance(e, dict)]
            total = page.get("total") or 0
        except (ValueError, AttributeError):
            raise CollectError(f"the events of {iso(start)}..{iso(end)} are not a JSON page") from None
        if total >= self.settings.total_cap:
            if end - start > 1:
                middle = start + (end - start) // 2
                return self._read_whole(client, start, middle) + self._read_whole(client, middle, end)
            self._incomplete(start, total)
        return events

    def _incomplete(self, at: int, total: int) -> None:
        reason = f"{iso(at)} holds {total} events or more: the API cannot return all of them"
        self.report(reason)
        self.losses.record(SOURCE, "incomplete", reason)

    def _page_windows(
        self, client: AuditSearchClient, state: CollectorState, summary: CollectSummary
    ) -> None:
        restarts = 0
        while state.windows:
            window = state.windows[0]
            start, end = window
            if state.paged:
                while state.boundaries:
                    self._read_boundary(client, state, window, state.boundaries[0], summary)
                    state.boundaries.pop(0)
                    save_state(self.state_file, state)
                state.finish_window(self._landed_names(state, window))
                state.remember([], self.overlap_ms)
                summary.windows += 1
                save_state(self.state_file, state)
                continue
            try:
                raw = client.search(start, end, state.scroll_id, self._body())
            except ScrollRejected as exc:
                # Page the window again from its start; pages already landed are recognised by
                # name and not written again, so none lands twice.
                restarts += 1
                if restarts > MAX_WINDOW_RESTARTS:
                    raise
                self.report(f"scroll of {iso(start)}..{iso(end)} refused ({exc}); paging the window again")
                state.restart_window()
                save_state(self.state_file, state)
                continue
            try:
                page = json.loads(raw)
            except ValueError:
                raise CollectError(f"page {state.page} of {iso(start)}..{iso(end)} is not JSON") from None
            if not isinstance(page, dict):
                raise CollectError(f"page {state.page} of {iso(start)}..{iso(end)} is not a JSON object")
            events = page.get("usageEvents") or []
            total = page.get("total") or 0
            if state.page == 0 and total >= self.settings.total_cap and end - start > 1:
                middle = start + (end - start) // 2
                self.report(
                    f"window {iso(start)}..{iso(end)} reached the cap of {total}: split at {iso(middle)}"
                )
                state.split_window(middle)
                summary.splits += 1
                save_state(self.state_file, state)
                continue
            if state.page == 0 and total >= self.settings.total_cap:
                self._incomplete(start, total)  # one millisecond at the cap: it cannot be split
            name = page_file_name(state, window, state.page)
            if events and not (self.folder / name).exists():
                write_atomically(self.folder / name, raw)
                summary.pages += 1
                summary.events += len(events)
                self.report(f"page {state.page} of {iso(start)}..{iso(end)}: {len(events)} events -> {name}")
            _advance(state, page)
            save_state(self.state_file, state)

    def _read_boundary(
        self,
        client: AuditSearchClient,
        state: CollectorState,
        window: list[int],
        at: int,
        summary: CollectSummary,
    ) -> None:
        """Read millisecond `at`, where a page of `window` ended, in one request, and land the events
        of it that none of the window's pages held."""
        name = boundary_file_name(state, window, at)
        if (self.folder / name).exists():
            return
        raw = client.search(at, at + 1, None, self._body(), size=self.settings.total_cap)
        try:
            page = json.loads(raw)
            events = list(page.get("usageEvents") or [])
        except (ValueError, AttributeError):
            raise CollectError(f"the events of {iso(at)} are not a JSON page") from None
        if len(events) >= self.settings.total_cap:
            self._incomplete(at, len(events))
        held = Counter(
            event_identity(event)
            for landed in self.folder.glob(f"audit-{state.key}-{window[0]}-{window[1]}-p*.json")
            for event in json.loads(landed.read_bytes()).get("usageEvents") or []
            if isinstance(event, dict) and event.get("timestamp") == at
        )
        missing = []
        for event in events:
            identity = event_identity(event)
            if held[identity]:
                held[identity] -= 1
            else:
                missing.append(event)
        if not missing:
            return
        document = {"count": len(missing), "total": page.get("total"), "usageEvents": missing}
        write_atomically(self.folder / name, json.dumps(document).encode("utf-8"))
        summary.pages += 1
        summary.events += len(missing)
        summary.boundary_events += len(missing)
        self.report(f"{iso(at)}, where a page ended: {len(missing)} events no page held -> {name}")
