"""`lakehouse receive`: an HTTP endpoint the catalogs push change events to, landing each durably.

Routes (aiohttp): `POST /openmetadata` (OpenMetadata's Generic Webhook: one ChangeEvent per
request, POST or PUT as the webhook's `httpMethod` says), `POST /dataworks` (DataWorks OpenEvent
through EventBridge: a CloudEvent in structured mode, or in binary mode with `ce-*` headers,
percent-decoded as the CloudEvents HTTP binding says and turned into the structured form so
bronze sees one shape), `POST /datahub` (DataHub entity change events, bare, in a DataHub
Actions envelope or as a PlatformEvent), `GET /health`.

A 200 answer means the body is in a landing file under its final name, fsynced: bodies are
grouped into batch files per source (`landing_writer.BatchFileWriter`), a batch is written when
it reaches `batch_max_bytes` or its first body has waited `batch_max_seconds`, and every request
of the batch is answered after the rename. A killed receiver therefore loses only unanswered
requests, which the sender retries. A body that is not JSON is landed all the same (bronze
marks it corrupt and silver quarantines it, so it is seen); an empty body gets 400, a body over
`max_body_bytes` 413. When the environment variable named by `secret_env` is set, a request
must carry the secret (`Authorization: Bearer <secret>` or `X-Lakehouse-Secret`), or on
`/openmetadata` an `X-OM-Signature` that is the HMAC-SHA256 of the body under the secret (the
webhook's `secretKey`); others get 401. SIGTERM or Ctrl-C stops accepting, answers the requests
in flight once their batch is landed, and exits.
"""

from __future__ import annotations

import asyncio
import base64
import hmac
import json
import os
import signal
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote

from aiohttp import web

from pipelines.collectors.landing_writer import BatchFileWriter
from pipelines.collectors.openmetadata_signature import is_test_message, signature_matches

ROUTES = {"/openmetadata": "openmetadata", "/dataworks": "dataworks", "/datahub": "datahub_ece"}
CLOUDEVENTS_HEADER_PREFIX = "ce-"
SIGNATURE_HEADER = "X-OM-Signature"
SECRET_HEADER = "X-Lakehouse-Secret"
BATCHERS = web.AppKey("batchers", dict)


@dataclass(frozen=True)
class ReceiverSettings:
    """`collectors.receiver` in conf/lakehouse.yaml."""

    host: str = "127.0.0.1"
    port: int = 8765
    max_body_bytes: int = 1_048_576
    batch_max_bytes: int = 4_194_304
    batch_max_seconds: float = 0.05
    secret_env: str = "LAKEHOUSE_RECEIVER_SECRET"

    @classmethod
    def from_section(cls, section: dict) -> ReceiverSettings:
        return cls(**{name: section[name] for name in cls.__dataclass_fields__ if name in section})


class Batcher:
    """Groups one source's bodies into batch files; `land` returns once its body is durable."""

    def __init__(self, writer: BatchFileWriter, max_bytes: int, max_seconds: float) -> None:
        self.writer = writer
        self.max_bytes = max_bytes
        self.max_seconds = max_seconds
        self._pending: list[tuple[bytes, bool, asyncio.Future]] = []
        self._pending_bytes = 0
        self._timer: asyncio.TimerHandle | None = None
        self._batches: asyncio.Queue = asyncio.Queue()
        self._flusher = asyncio.get_running_loop().create_task(self._flush_batches())
        self.bodies = 0
        self.files = 0

    async def land(self, body: bytes, parses: bool) -> None:
        future = asyncio.get_running_loop().create_future()
        self._pending.append((body, parses, future))
        self._pending_bytes += len(body) + 1
        if self._pending_bytes >= self.max_bytes:
            self._close_batch()
        elif self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(self.max_seconds, self._close_batch)
        await future

    def _close_batch(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._pending:
            self._batches.put_nowait(self._pending)
            self._pending, self._pending_bytes = [], 0

    async def _flush_batches(self) -> None:
        while True:
            batch = await self._batches.get()
            if batch is None:
                return
            try:
                files = await asyncio.to_thread(
                    self.writer.write, [(body, parses) for body, parses, _ in batch]
                )
            except OSError as exc:
                for *_, future in batch:
                    if not future.done():
                        future.set_exception(exc)
                continue
            self.bodies += len(batch)
            self.files += len(files)
            for *_, future in batch:
                if not future.done():
                    future.set_result(None)

    async def close(self) -> None:
        """Land what is pending, then stop."""
        self._close_batch()
        self._batches.put_nowait(None)
        await self._flusher


def parses_as_json(body: bytes) -> bool:
    try:
        json.loads(body)
    except (ValueError, RecursionError):
        return False
    return True


class InvalidCloudEvent(ValueError):
    """A binary-mode CloudEvent whose `ce-*` header cannot be read; the message names it."""


def cloudevent_header_value(name: str, value: str) -> str:
    """A `ce-*` header's value percent-decoded as UTF-8, as the CloudEvents HTTP binding says
    (a sender percent-encodes space, `"`, `%` and everything outside printable ASCII)."""
    try:
        return unquote(value, encoding="utf-8", errors="strict")
    except UnicodeDecodeError:
        raise InvalidCloudEvent(f"header {name} is not percent-encoded UTF-8") from None


def structured_cloudevent(headers, body: bytes) -> bytes:
    """A binary-mode CloudEvent (attributes in `ce-*` headers, data in the body) in structured
    JSON form: the attributes (percent-decoded) as members, `datacontenttype` from Content-Type,
    and `data` the body when it is JSON, else `data_base64` (as the CloudEvents JSON format says)."""
    event: dict[str, object] = {}
    for name, value in headers.items():
        lowered = name.lower()
        if lowered.startswith(CLOUDEVENTS_HEADER_PREFIX):
            event[lowered[len(CLOUDEVENTS_HEADER_PREFIX) :]] = cloudevent_header_value(name, value)
    if headers.get("Content-Type"):
        event["datacontenttype"] = headers["Content-Type"]
    try:
        event["data"] = json.loads(body)
    except (ValueError, RecursionError):
        event["data_base64"] = base64.b64encode(body).decode("ascii")
    return json.dumps(event, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def header_bytes(value: str) -> bytes:
    """A header value as bytes for a constant-time comparison, whatever characters it holds
    (aiohttp hands bytes that are not UTF-8 over as surrogate escapes; they must not raise)."""
    try:
        return value.encode("utf-8", errors="surrogateescape")
    except UnicodeEncodeError:
        return value.encode("utf-8", errors="replace")


def _secret_given(request: web.Request, secret: str) -> bool:
    bearer = request.headers.get("Authorization", "")
    candidates = [request.headers.get(SECRET_HEADER, "")]
    if bearer.lower().startswith("bearer "):
        candidates.append(bearer[7:].strip())
    expected = secret.encode("utf-8")
    return any(c and hmac.compare_digest(header_bytes(c), expected) for c in candidates)


def build_app(
    landing: Path, folders: dict[str, str], settings: ReceiverSettings, secret: str | None
) -> web.Application:
    """The aiohttp application; `folders` maps each source to its landing folder name."""
    app = web.Application(client_max_size=settings.max_body_bytes)
    batchers: dict[str, Batcher] = {}

    async def start_batchers(app: web.Application) -> None:
        for source in ROUTES.values():
            folder = landing / folders[source]
            folder.mkdir(parents=True, exist_ok=True)  # `lakehouse run` wants the landing folder to exist
            writer = BatchFileWriter(folder)
            batchers[source] = Batcher(writer, settings.batch_max_bytes, settings.batch_max_seconds)

    async def stop_batchers(app: web.Application) -> None:
        for batcher in batchers.values():
            await batcher.close()

    def receive(source: str, path: str) -> Callable:
        async def handler(request: web.Request) -> web.Response:
            authorized = secret is None or _secret_given(request, secret)
            if not authorized and not (path == "/openmetadata" and request.headers.get(SIGNATURE_HEADER)):
                return web.json_response({"error": "missing or wrong secret"}, status=401)
            body = await request.read()  # over client_max_size: 413 from aiohttp
            if not authorized and not signature_matches(
                secret, body, header_bytes(request.headers[SIGNATURE_HEADER])
            ):
                return web.json_response({"error": f"{SIGNATURE_HEADER} does not match the body"}, status=401)
            if not body.strip():
                return web.json_response({"error": "empty body"}, status=400)
            if path == "/openmetadata" and is_test_message(body):
                return web.json_response({"landed": False, "test_message": True}, status=200)
            if path == "/dataworks" and request.headers.get("ce-specversion"):
                try:
                    body = structured_cloudevent(request.headers, body)
                except InvalidCloudEvent as exc:
                    return web.json_response({"error": str(exc)}, status=400)
            try:
                await batchers[source].land(body, parses_as_json(body))
            except OSError as exc:
                return web.json_response({"error": f"not landed: {exc.strerror}"}, status=503)
            return web.json_response({"landed": True}, status=200)

        return handler

    async def health(request: web.Request) -> web.Response:
        counts = {source: {"bodies": b.bodies, "files": b.files} for source, b in batchers.items()}
        return web.json_response({"status": "ok", "landed": counts})

    for path, source in ROUTES.items():
        app.router.add_post(path, receive(source, path))
    app.router.add_put("/openmetadata", receive(ROUTES["/openmetadata"], "/openmetadata"))
    app.router.add_get("/health", health)
    app.on_startup.append(start_batchers)
    app.on_cleanup.append(stop_batchers)
    app[BATCHERS] = batchers
    return app


async def serve(
    landing: Path,
    folders: dict[str, str],
    settings: ReceiverSettings,
    secret: str | None,
    report: Callable[[str], object],
) -> None:
    """Serve until SIGTERM or SIGINT, then land what is pending and return."""
    app = build_app(landing, folders, settings, secret)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, settings.host, settings.port)
    await site.start()
    host, port = runner.addresses[0][:2]
    report(f"receiving on http://{host}:{port}  landing={landing}  secret={'on' if secret else 'off'}")
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    await stop.wait()
    await runner.cleanup()  # stops accepting, lets requests in flight finish, then lands the rest
    landed = ", ".join(f"{s}={b.bodies} bodies in {b.files} files" for s, b in app[BATCHERS].items())
    report(f"stopped; landed {landed}")


def run_receiver(
    landing: Path, folders: dict[str, str], settings: ReceiverSettings, report: Callable[[str], object]
) -> int:
    secret = os.environ.get(settings.secret_env) or None
    asyncio.run(serve(landing, folders, settings, secret, report))
    return 0
