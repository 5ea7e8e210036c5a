"""Helpers for the receiver tests: sample bodies from the bundled landing samples, a receiver
running in a thread of this process, and readers of what it landed."""

from __future__ import annotations

import asyncio
import base64
import gzip
import hashlib
import hmac
import json
import threading
from collections import Counter
from contextlib import contextmanager
from pathlib import Path

import aiohttp
from aiohttp import web

from pipelines.collectors.receiver import ReceiverSettings, build_app

SAMPLES = Path(__file__).resolve().parents[2] / "samples" / "landing"
FOLDERS = {"openmetadata": "openmetadata", "dataworks": "dataworks", "datahub_ece": "datahub_ece"}


def _records(path: Path) -> list[dict]:
    data = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
    text = data.decode("utf-8")
    if path.name.endswith((".jsonl", ".jsonl.gz")):
        records = []
        for line in text.splitlines():
            try:
                records.append(json.loads(line))
            except ValueError:
                continue  # the samples' deliberately malformed lines
        return [r for r in records if isinstance(r, dict)]
    value = json.loads(text)
    return value if isinstance(value, list) else [value]


def sample_events(source: str) -> list[dict]:
    """The bundled sample events of one landing source (valid JSON objects only)."""
    return [r for path in sorted((SAMPLES / source).rglob("*.json*")) for r in _records(path)]


def unique_bodies(route: str, count: int) -> list[bytes]:
    """`count` real sample bodies for `route`, each made unique by a `receiver_test_seq` member."""
    source = {"/openmetadata": "openmetadata", "/dataworks": "dataworks", "/datahub": "datahub_ece"}[route]
    events = [e for e in sample_events(source) if "messageBody" not in e]
    bodies = []
    for n in range(count):
        event = dict(events[n % len(events)])
        event["receiver_test_seq"] = f"{route}-{n}"
        bodies.append(json.dumps(event).encode("utf-8"))
    return bodies


def landed_files(landing: Path, folder: str) -> list[Path]:
    """Landed files as bronze would discover them (no `_`- or `.`-prefixed names)."""
    from pipelines.landing import discover

    return [Path(f.path) for f in discover(landing / folder)]


def logged_losses(landing: Path) -> Counter:
    """The collectors' loss log beside `landing`: counts by (source, status, reason)."""
    from pipelines.collectors.loss_log import LOG_FOLDER

    counts: Counter = Counter()
    for path in sorted((landing / LOG_FOLDER).glob("[!_]*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            entry = json.loads(line)
            counts[(entry["source"], entry["status"], entry["reason"])] += entry["count"]
    return counts


def landed_lines(landing: Path, folder: str) -> Counter:
    lines: Counter = Counter()
    for path in landed_files(landing, folder):
        for line in path.read_bytes().splitlines():
            lines[line] += 1
    return lines


def landed_sequence_numbers(landing: Path, folder: str) -> Counter:
    seen: Counter = Counter()
    for line in landed_lines(landing, folder).elements():
        seen[json.loads(line)["receiver_test_seq"]] += 1
    return seen


@contextmanager
def running_receiver(landing: Path, secret: str | None = None, **settings):
    """A receiver on a free loopback port in a thread of this process; yields its base URL."""
    app = build_app(landing, FOLDERS, ReceiverSettings(port=0, **settings), secret)
    runner = web.AppRunner(app, access_log=None)
    loop = asyncio.new_event_loop()
    ready = threading.Event()

    def serve() -> None:
        asyncio.set_event_loop(loop)
        loop.run_until_complete(runner.setup())
        loop.run_until_complete(web.TCPSite(runner, "127.0.0.1", 0).start())
        ready.set()
        loop.run_forever()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    assert ready.wait(30)
    try:
        yield f"http://127.0.0.1:{runner.addresses[0][1]}"
    finally:
        asyncio.run_coroutine_threadsafe(runner.cleanup(), loop).result(60)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(30)
        loop.close()


async def post_all(url: str, bodies: list[tuple[str, bytes]], concurrency: int, headers=None) -> Counter:
    """POST each (route, body) with at most `concurrency` in flight; the answers' status counts."""
    gate = asyncio.Semaphore(concurrency)
    statuses: Counter = Counter()
    async with aiohttp.ClientSession(headers=headers) as session:

        async def post(route: str, body: bytes) -> None:
            async with gate, session.post(url + route, data=body) as response:
                await response.read()
                statuses[response.status] += 1

        await asyncio.gather(*(post(route, body) for route, body in bodies))
    return statuses


OPENMETADATA_TEST_MESSAGE = (
    '{"message": "This is a test message from OpenMetadata to confirm your webhook destination '
    'is configured correctly."}'
)


def openmetadata_signature(secret: str, event_json: str) -> str:
    """`X-OM-Signature` as OpenMetadata computes it: `sha256=` and the Base64 of the HMAC-SHA256
    of the event's JSON text (UTF-8) under the secret key (UTF-8)."""
    digest = hmac.new(secret.encode("utf-8"), event_json.encode("utf-8"), hashlib.sha256).digest()
    return "sha256=" + base64.b64encode(digest).decode("ascii")
