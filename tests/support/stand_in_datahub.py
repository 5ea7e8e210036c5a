"""A stand-in for DataHub's Audit Events Search API (v1), served on real loopback HTTP.

Built from the API's documentation: `POST /openapi/v1/events/audit/search` with query
parameters `startTime` / `endTime` (ms; -1 or absent: one day ago / now), `size` (default 10),
`scrollId`, and a JSON filter body (`eventTypes`, `entityTypes`, `aspectTypes`, `actorUrns`:
OR within a list, AND between lists, empty = all). The answer is `{nextScrollId, count, total,
usageEvents}` with `total` counted only up to 10,000. A bearer token is required when one is set.

Pages exactly as DataHub's `DataHubUsageServiceImpl` does: hits in `[startTime, endTime)` (an
`endTime` of 0 or less is now) sorted by timestamp descending, then event type and actor
ascending; a full page (`size` hits) carries a `nextScrollId` encoding its last hit's sort values,
and the next request continues strictly after them (search-after), with the window and filter of
that request. So events that tie on all three sort keys across a page boundary are skipped, as
DataHub's own server skips them; a client must not rely on the scroll alone there.
Indexing lag: DataHub's audit search reads an Elasticsearch index fed through Kafka, so an event
is searchable only once indexed. `add_events(times, indexed_at_ms=...)` indexes events at a later
moment of the index clock `index_now` (ms); until then no search shows them.
`faults` scripts answers by request number (e.g. `{3: (503, None), 7: (429, "1")}`) to test
retries; `served` records every page answered as (start, end, after, count), `after` the sort
values it continued from (None for a first page), for "no page twice" checks.
"""

from __future__ import annotations

import base64
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

SEARCH_PATH = "/openapi/v1/events/audit/search"
TOTAL_CAP = 10_000
DAY_MS = 86_400_000
EVENT_TYPES = (
    "EntityEvent",
    "UpdateAspectEvent",
    "LogInEvent",
    "CreateAccessTokenEvent",
    "DeleteEntityEvent",
)
EVENT_SOURCES = ("RESTLI", "OPENAPI", "GRAPHQL", "SSO_SCIM")


def audit_event(number: int, timestamp_ms: int) -> dict:
    """One audit event of the documented shape; `telemetryTraceId` makes it unique."""
    event_type = EVENT_TYPES[number % len(EVENT_TYPES)]
    event = {
        "eventType": event_type,
        "timestamp": timestamp_ms,
        "actorUrn": f"urn:li:corpuser:user{number % 7}",
        "sourceIP": f"10.0.{number % 250}.{number % 199}",
        "eventSource": EVENT_SOURCES[number % len(EVENT_SOURCES)],
        "userAgent": "Mozilla/5.0 (stand-in)",
        "telemetryTraceId": f"trace-{number:07d}",
    }
    if event_type == "LogInEvent":
        event["loginSource"] = "PASSWORD_LOGIN"
    else:
        event.update(
            entityUrn=f"urn:li:dataset:(urn:li:dataPlatform:hive,db.t{number % 50},PROD)",
            entityType="dataset",
            aspectName="ownership",
        )
    return event


class StandInAuditServer:
    """`with StandInAuditServer(token) as server:` serves on `server.url` in a thread."""

    def __init__(self, token: str | None = None, delay_seconds: float = 0.0) -> None:
        self.token = token
        self.delay_seconds = delay_seconds
        self.events: list[dict] = []
        self.faults: dict[int, tuple[int, str | None]] = {}
        self.requests = 0
        self.served: list[tuple[int, int, tuple | None, int]] = []  # (start, end, after, count) per page
        self.statuses: list[int] = []
        self.indexed_at: dict[str, int] = {}
        self.index_now = lambda: int(time.time() * 1000)
        self.authorizations: list[str | None] = []
        self.lock = threading.Lock()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def add_events(self, timestamps_ms: list[int], indexed_at_ms: int | None = None) -> list[dict]:
        """New events at these times, indexed at once or at `indexed_at_ms` of `index_now`; returns them."""
        with self.lock:
            start = len(self.events)
            added = [audit_event(start + i, t) for i, t in enumerate(timestamps_ms)]
            if indexed_at_ms is not None:
                self.indexed_at.update((e["telemetryTraceId"], indexed_at_ms) for e in added)
            self.events = sorted(self.events + added, key=sort_values)
        return added

    def __enter__(self) -> StandInAuditServer:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def search(self, params: dict, body: dict) -> tuple[int, dict]:
        now = int(time.time() * 1000)
        size = int(params.get("size", 10))
        start = int(params.get("startTime", -1))
        end = int(params.get("endTime", -1))
        start = now - DAY_MS if start < 0 else start
        end = now if end <= 0 else end
        after = None
        if params.get("scrollId"):
            try:
                after = tuple(json.loads(base64.urlsafe_b64decode(params["scrollId"]))["sort"])
            except (ValueError, KeyError, TypeError):
                return 400, {"error": "unreadable scrollId"}
        with self.lock:
            indexed_by = self.index_now()
            events = [e for e in self.events if self.indexed_at.get(e["telemetryTraceId"], 0) <= indexed_by]
        matching = [e for e in events if start <= e["timestamp"] < end and _matches(e, body)]
        remaining = [e for e in matching if after is None or sort_values(e) > after]
        page = remaining[:size]
        answer = {"count": len(page), "total": min(len(matching), TOTAL_CAP), "usageEvents": page}
        if len(page) == size:
            position = {"sort": list(sort_values(page[-1]))}
            answer["nextScrollId"] = base64.urlsafe_b64encode(json.dumps(position).encode()).decode()
        with self.lock:
            self.served.append((start, end, after, len(page)))
        return 200, answer

    def _handler(self):
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:  # quiet tests
                pass

            def _answer(self, status: int, body: dict, headers: dict | None = None) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)
                with server.lock:
                    server.statuses.append(status)

            def do_POST(self) -> None:
                url = urlparse(self.path)
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                with server.lock:
                    server.requests += 1
                    number = server.requests
                    server.authorizations.append(self.headers.get("Authorization"))
                if server.delay_seconds:
                    time.sleep(server.delay_seconds)
                if url.path != SEARCH_PATH:
                    return self._answer(404, {"error": "not found"})
                if server.token and self.headers.get("Authorization") != f"Bearer {server.token}":
                    return self._answer(401, {"error": "Unauthorized"})
                fault = server.faults.get(number)
                if fault:
                    status, retry_after = fault
                    return self._answer(
                        status, {"error": "scripted"}, {"Retry-After": retry_after} if retry_after else None
                    )
                params = {k: v[0] for k, v in parse_qs(url.query).items()}
                body = json.loads(raw or b"{}")
                status, answer = server.search(params, body)
                return self._answer(status, answer)

        return Handler


def sort_values(event: dict) -> tuple:
    """DataHub's sort of audit hits as one ascending key: timestamp descending, then event type
    and actor ascending."""
    return (-event["timestamp"], event["eventType"], event["actorUrn"])


def _matches(event: dict, body: dict) -> bool:
    for field, key in (
        ("eventTypes", "eventType"),
        ("entityTypes", "entityType"),
        ("aspectTypes", "aspectName"),
        ("actorUrns", "actorUrn"),
    ):
        wanted = body.get(field) or []
        if wanted and event.get(key) not in wanted:
            return False
    return True
