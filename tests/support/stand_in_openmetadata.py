"""A stand-in for OpenMetadata's change events, its event subscription and their APIs, on loopback HTTP.

Built from OpenMetadata's server code:

- `GET /api/v1/events?entityCreated=&entityUpdated=&entityRestored=&entityDeleted=&timestamp=`
  (`EventResource.get`, `ChangeEventRepository.list`): per event type asked (`*` or a comma list
  of entity types), the events whose time is at or after `timestamp` (`eventTime >= :timestamp`,
  no upper bound, no paging), `entityDeleted` covering soft deletes too, sorted by time, answered
  as `{"data": [...], "paging": {"total": n}}`. `max_answer` makes an answer larger than that
  fail with a 500, as a server that runs out of memory on a long range does.
- `GET /api/v1/metadata/types?category=entity`: the entity types.
- The subscription's consumer as from 1.3 on (`AbstractEventConsumer`): `deliver()` polls the
  events after its offset in batches of `batch_size`, POSTs each one (`JsonUtils.pojoToJson`,
  signed with `X-OM-Signature` when a secret is set) and, when the POST fails (no connection,
  any answer other than 2xx), records a failed event (`consumers_dlq`, keyed by subscription and
  event id) and moves on: the offset passes it either way and nothing re-sends it.
- `GET /api/v1/events/subscriptions/name/{name}/failedEvents?limit=&paginationOffset=`
  (`listFailedEventsById`): `{failingSubscriptionId, changeEvent, reason, source, timestamp}`,
  newest failure first, `limit` default 15; 404 for an unknown name. `failed_events_api=False`
  serves a server from before that API (404 there too).

`now_ms` is the server's clock (failure times). A bearer token is required when one is set.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlparse

import requests

from tests.support.receiver import openmetadata_signature

EVENTS_PATH = "/api/v1/events"
TYPES_PATH = "/api/v1/metadata/types"
FAILED_PREFIX = "/api/v1/events/subscriptions/name/"
ENTITY_TYPES = ("table", "dashboard", "pipeline", "topic", "glossaryTerm")
PARAMS = {
    "entityCreated": ("entityCreated",),
    "entityUpdated": ("entityUpdated",),
    "entityRestored": ("entityRestored",),
    "entityDeleted": ("entityDeleted", "entitySoftDeleted"),
}
EVENT_TYPES = ("entityCreated", "entityUpdated", "entityUpdated", "entitySoftDeleted", "entityDeleted")


def change_event(number: int, timestamp_ms: int) -> dict:
    """A ChangeEvent of OpenMetadata's shape; `id` makes it unique."""
    entity_type = ENTITY_TYPES[number % len(ENTITY_TYPES)]
    event_type = EVENT_TYPES[number % len(EVENT_TYPES)]
    return {
        "id": str(uuid.uuid5(uuid.NAMESPACE_URL, f"om-stand-in-{number}")),
        "eventType": event_type,
        "entityType": entity_type,
        "entityId": str(uuid.uuid5(uuid.NAMESPACE_URL, f"om-entity-{number % 40}")),
        "entityFullyQualifiedName": f"mysql_prod.shop.sales.{entity_type}_{number % 40}",
        "previousVersion": 0.1,
        "currentVersion": 0.2,
        "userName": f"user{number % 9}",
        "timestamp": timestamp_ms,
        "changeDescription": {
            "fieldsAdded": [{"name": "description", "newValue": f"change {number}"}],
            "fieldsUpdated": [],
            "fieldsDeleted": [],
            "previousVersion": 0.1,
        },
    }


class StandInOpenMetadata:
    """`with StandInOpenMetadata() as server:` serves on `server.url` in a thread."""

    def __init__(
        self, token: str | None = None, max_answer: int | None = None, failed_events_api: bool = True
    ):
        self.token = token
        self.max_answer = max_answer
        self.failed_events_api = failed_events_api
        self.events: list[dict] = []  # the change_event table, in offset order
        self.subscription = {"id": str(uuid.uuid4()), "name": "lakehouse", "offset": 0, "batch_size": 10}
        self.dlq: dict[str, dict] = {}  # consumers_dlq by extension
        self.delivered: list[str] = []  # ids answered 2xx
        self.requests: list[tuple[str, dict]] = []
        self.faults: dict[int, int] = {}  # request number -> status answered instead
        self.now_ms = lambda: int(time.time() * 1000)
        self.lock = threading.Lock()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> StandInOpenMetadata:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def change(self, timestamps_ms: list[int]) -> list[dict]:
        """Entities change: their events are written to the change_event table."""
        with self.lock:
            start = len(self.events)
            added = [change_event(start + i, t) for i, t in enumerate(timestamps_ms)]
            self.events += added
        return added

    # -- the subscription's consumer, as from 1.3 on ---------------------------------------------
    def deliver(self, endpoint: str, secret: str | None = None) -> None:
        """Run the consumer until it reached the latest offset: one POST per event, no retry."""
        while self.subscription["offset"] < len(self.events):
            offset = self.subscription["offset"]
            batch = self.events[offset : offset + self.subscription["batch_size"]]
            for event in batch:
                body = json.dumps(event, ensure_ascii=False, separators=(",", ":"))
                headers = {"Content-Type": "application/json"}
                if secret:
                    headers["X-OM-Signature"] = openmetadata_signature(secret, body)
                try:
                    answer = requests.post(endpoint, data=body.encode("utf-8"), headers=headers, timeout=10)
                    failure = (
                        None
                        if 200 <= answer.status_code < 300
                        else f"Status {answer.status_code}: {answer.text[:100]}"
                    )
                except requests.RequestException as exc:
                    failure = f"Connection error: {type(exc).__name__}"
                if failure is None:
                    self.delivered.append(event["id"])
                else:
                    self.dlq[f"eventSubscription.failedEvent-{event['id']}"] = {
                        "failingSubscriptionId": self.subscription["id"],
                        "changeEvent": event,
                        "retriesLeft": 3,
                        "reason": failure,
                        "timestamp": self.now_ms(),
                        "source": "PUBLISHER",
                    }
            self.subscription["offset"] = offset + len(batch)  # committed whatever the outcome

    # -- the APIs --------------------------------------------------------------------------------
    def list_events(self, params: dict) -> tuple[int, dict]:
        since = int(params.get("timestamp") or 0)
        found = []
        with self.lock:
            events = list(self.events)
        for param, event_types in PARAMS.items():
            wanted = params.get(param)
            if not wanted:
                continue
            entity_types = None if wanted == "*" else set(wanted.split(","))
            found += sorted(
                (
                    e
                    for e in events
                    if e["eventType"] in event_types
                    and (entity_types is None or e["entityType"] in entity_types)
                    and e["timestamp"] >= since
                ),
                key=lambda e: e["timestamp"],
            )
        if self.max_answer is not None and len(found) > self.max_answer:
            return 500, {"code": 500, "message": "java.lang.OutOfMemoryError: Java heap space"}
        found.sort(key=lambda e: e["timestamp"])
        return 200, {"data": found, "paging": {"total": len(found)}}

    def failed_events(self, name: str, params: dict) -> tuple[int, object]:
        if not self.failed_events_api:
            return 404, {"code": 404, "message": "HTTP 404 Not Found"}
        if name != self.subscription["name"]:
            return 404, f"Event subscription not found for name: {name}"
        limit = int(params.get("limit") or 15)
        offset = int(params.get("paginationOffset") or 0)
        rows = sorted(self.dlq.values(), key=lambda r: r["timestamp"], reverse=True)[offset : offset + limit]
        return 200, [
            {k: r[k] for k in ("failingSubscriptionId", "changeEvent", "reason", "source", "timestamp")}
            for r in rows
        ]

    def _handler(self):
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def _answer(self, status: int, body: object) -> None:
                data = (body if isinstance(body, str) else json.dumps(body)).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                url = urlparse(self.path)
                params = {k: v[0] for k, v in parse_qs(url.query).items()}
                with server.lock:
                    server.requests.append((url.path, params))
                    number = len(server.requests)
                if server.token and self.headers.get("Authorization") != f"Bearer {server.token}":
                    return self._answer(401, {"code": 401, "message": "Not Authorized! Token not present"})
                if number in server.faults:
                    return self._answer(
                        server.faults[number], {"code": server.faults[number], "message": "scripted"}
                    )
                if url.path == EVENTS_PATH:
                    return self._answer(*server.list_events(params))
                if url.path == TYPES_PATH:
                    return self._answer(
                        200, {"data": [{"name": t} for t in ENTITY_TYPES], "paging": {"total": 5}}
                    )
                if url.path.startswith(FAILED_PREFIX) and url.path.endswith("/failedEvents"):
                    name = unquote(url.path[len(FAILED_PREFIX) : -len("/failedEvents")])
                    return self._answer(*server.failed_events(name, params))
                return self._answer(404, {"code": 404, "message": "HTTP 404 Not Found"})

        return Handler
