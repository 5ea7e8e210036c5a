"""`lakehouse receive`: an HTTP endpoint the catalogs push change events to, landing each durably.

Routes (aiohttp): `POST /openmetadata` (or PUT, as the webhook's `httpMethod` says), `POST
/dataworks`, `POST /datahub`, `GET /health`. Every form the supported senders use
(`wire_forms`): OpenMetadata's single ChangeEvent (1.3 on) and its batches (1.2 and older:
`{"data": [...], "paging": ...}`, or a bare array), split into one record per event after the
signature was checked over the whole body; CloudEvents by `Content-Type` as the HTTP binding says
(structured `application/cloudevents+json`, batched `application/cloudevents-batch+json`, else
binary mode when `ce-specversion` is present, its `ce-*` values unquoted and percent-decoded and
turned into the structured form so bronze sees one shape); DataHub entity change events bare, in
an Actions envelope or as a PlatformEvent.

A 200 answer means every record of the body is durably in the landing: each source's records are
appended to its open segment and fsynced by group commit (`group_commit`: the requests pending
when the writer is free are one batch; a lone request never waits), and the segment becomes a
landing file bronze reads once it holds `segment_max_bytes` or is `segment_max_seconds` old, and
at shutdown (`landing_segments`; a segment a killed receiver left open becomes one at the next
start). A body that is not JSON is landed all the same (bronze marks it corrupt and silver
quarantines it, so it is seen). Refusals: an empty body or an unreadable `ce-*` / `Content-Type`
header (not UTF-8, not percent-encoded UTF-8) 400 with the reason, a body over `max_body_bytes`
413 saying the limit and the setting, a missing secret or signature 401, a landing folder that
cannot be written 503. A sender that does not retry loses what is refused, so every refusal is also counted in the collectors' loss log
(`loss_log`), written every `loss_log_seconds` and at shutdown, which the warehouse shows in
`ops.collector_losses`. When the environment variable named by `secret_env` is set, a request
must carry the secret (`Authorization: Bearer <secret>` or `X-Lakehouse-Secret`), or on
`/openmetadata` an `X-OM-Signature` that is the HMAC-SHA256 of the body under the secret (the
webhook's `secretKey`). SIGTERM or Ctrl-C stops accepting, answers the requests in flight once
their batch is landed, rolls the open segments, and exits.
"""

from __future__ import annotations

import asyncio
import hmac
import os
import signal
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from aiohttp import web

from pipelines.collectors.group_commit import GroupCommit
from pipelines.collectors.landing_segments import SegmentWriter, recover
from pipelines.collectors.loss_log import LossLog
from pipelines.collectors.openmetadata_signature import is_test_message, signature_matches
from pipelines.collectors.wire_forms import InvalidHeader, dataworks_records, openmetadata_records

ROUTES = {"/openmetadata": "openmetadata", "/dataworks": "dataworks", "/datahub": "datahub_ece"}
SIGNATURE_HEADER = "X-OM-Signature"
SECRET_HEADER = "X-Lakehouse-Secret"
COMMITS = web.AppKey("commits", dict)
LOSSES = web.AppKey("losses", LossLog)
COLLECTOR = "receiver"


@dataclass(frozen=True)
class ReceiverSettings:
    """`collectors.receiver` in conf/lakehouse.yaml."""

    host: str = "127.0.0.1"
    port: int = 8765
    max_body_bytes: int = 16_777_216
    segment_max_bytes: int = 67_108_864
    segment_max_seconds: float = 60.0
    loss_log_seconds: float = 5.0
    secret_env: str = "LAKEHOUSE_RECEIVER_SECRET"

    @classmethod
    def from_section(cls, section: dict) -> ReceiverSettings:
        return cls(**{name: section[name] for name in cls.__dataclass_fields__ if name in section})


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


def too_large(limit: int, size: int | None) -> str:
    told = f"a body of {size} bytes" if size is not None else "the body"
    return (
        f"{told} is over the receiver's limit of {limit} bytes (collectors.receiver.max_body_bytes); "
        "raise the limit: nothing was landed"
    )


def build_app(
    landing: Path, folders: dict[str, str], settings: ReceiverSettings, secret: str | None
) -> web.Application:
    """The aiohttp application; `folders` maps each source to its landing folder name."""
    app = web.Application(client_max_size=settings.max_body_bytes)
    commits: dict[str, GroupCommit] = {}
    losses = LossLog(landing, COLLECTOR)

    async def flush_losses_every_while(app: web.Application):
        async def loop() -> None:
            while True:
                await asyncio.sleep(settings.loss_log_seconds)
                await asyncio.to_thread(_flush_quietly, losses)

        task = asyncio.get_running_loop().create_task(loop())
        yield
        task.cancel()
        await asyncio.to_thread(losses.flush)

    async def start_writers(app: web.Application) -> None:
        for source in ROUTES.values():
            folder = landing / folders[source]
            folder.mkdir(parents=True, exist_ok=True)  # `lakehouse run` wants the landing folder to exist
            recover(folder)  # what a receiver that died had acknowledged
            segment = SegmentWriter(folder, settings.segment_max_bytes, settings.segment_max_seconds)
            commits[source] = GroupCommit(segment)

    async def stop_writers(app: web.Application) -> None:
        for commit in commits.values():
            await commit.close()

    def refused(source: str, status: int, reason: str, answer: str | None = None) -> web.Response:
        losses.record(source, status, reason)
        return web.json_response({"error": answer or reason}, status=status)

    def receive(source: str, path: str) -> Callable:
        async def handler(request: web.Request) -> web.Response:
            authorized = secret is None or _secret_given(request, secret)
            if not authorized and not (path == "/openmetadata" and request.headers.get(SIGNATURE_HEADER)):
                return refused(source, 401, "missing or wrong secret")
            if request.content_length is not None and request.content_length > settings.max_body_bytes:
                return refused(source, 413, too_large(settings.max_body_bytes, request.content_length))
            try:
                body = await request.read()
            except web.HTTPRequestEntityTooLarge:
                return refused(source, 413, too_large(settings.max_body_bytes, None))
            if not authorized and not signature_matches(
                secret, body, header_bytes(request.headers[SIGNATURE_HEADER])
            ):
                return refused(source, 401, f"{SIGNATURE_HEADER} does not match the body")
            if not body.strip():
                return refused(source, 400, "empty body")
            if path == "/openmetadata" and is_test_message(body):
                return web.json_response({"landed": False, "test_message": True}, status=200)
            try:
                if path == "/openmetadata":
                    records = openmetadata_records(body)
                elif path == "/dataworks":
                    records = dataworks_records(request.headers, body)
                else:
                    records = [body]
            except InvalidHeader as exc:
                return refused(source, 400, str(exc))
            try:
                await commits[source].land(records)
            except OSError as exc:
                losses.record(source, 503, f"not landed: {exc.strerror}", len(records))
                return web.json_response({"error": f"not landed: {exc.strerror}"}, status=503)
            return web.json_response({"landed": True, "records": len(records)}, status=200)

        return handler

    async def health(request: web.Request) -> web.Response:
        counts = {
            source: {"bodies": c.bodies, "files": c.segment.files, "open_segment_bytes": c.segment.open_bytes}
            for source, c in commits.items()
        }
        return web.json_response({"status": "ok", "landed": counts})

    for path, source in ROUTES.items():
        app.router.add_post(path, receive(source, path))
    app.router.add_put("/openmetadata", receive(ROUTES["/openmetadata"], "/openmetadata"))
    app.router.add_get("/health", health)
    app.on_startup.append(start_writers)
    app.on_cleanup.append(stop_writers)
    app.cleanup_ctx.append(flush_losses_every_while)
    app[COMMITS] = commits
    app[LOSSES] = losses
    return app


def _flush_quietly(losses: LossLog) -> None:
    """A periodic flush that cannot write keeps the counts for the next one (`LossLog.flush`)."""
    try:
        losses.flush()
    except OSError:
        pass


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
    await runner.cleanup()  # stops accepting, lets requests in flight finish, then rolls the segments
    landed = ", ".join(f"{s}={c.bodies} bodies in {c.segment.files} files" for s, c in app[COMMITS].items())
    report(f"stopped; landed {landed}")


def run_receiver(
    landing: Path, folders: dict[str, str], settings: ReceiverSettings, report: Callable[[str], object]
) -> int:
    secret = os.environ.get(settings.secret_env) or None
    asyncio.run(serve(landing, folders, settings, secret, report))
    return 0
