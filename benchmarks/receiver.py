"""`python -m benchmarks.receiver`: the events a second `lakehouse receive` acknowledges on
loopback, and the landing files it leaves for them.

Why: DataHub Actions and OpenMetadata's webhook (1.3 on) post one event at a time and wait for
each answer, so the time to a durable answer is a sender's whole pace, and every landing file
is one more for bronze to list and open. A `lakehouse receive` process of its own (the settings
of `--conf`, else the defaults) is fed real events made from the bundled samples, each its own:

- **one sequential sender**: `--events` OpenMetadata ChangeEvents posted to `/openmetadata` one
  after another on one keep-alive connection, each waiting for its answer (as OpenMetadata's
  webhook and DataHub Actions do): events/s and the latency of an answer (median, 99th
  percentile);
- **DataHub Actions' action**: `--events` entity change events delivered to `/datahub` by the
  action this package ships for Actions (`LakehouseReceiverAction.act`, one at a time, as an
  Actions pipeline calls it; Actions' Kafka source is not part of it): events/s;
- **concurrent senders**: `--senders` sequential senders side by side (aiohttp, in one event
  loop, so the senders' own cost stays small beside the receiver's), `--events` ChangeEvents
  each: events/s together;
- then SIGTERM (the receiver rolls its open segments): the landing files bronze discovers per 100
  acknowledged events, and whether every acknowledged event is in them exactly once.

Targets: one sender >= 200 events/s, the concurrent senders >= 1,000 events/s, at most one
landing file per 100 events. The last line is one JSON object with every figure.

    python -m benchmarks.receiver                              # 2,000 sequential, 2,000 through the action, 8 x 2,000 concurrent
    python -m benchmarks.receiver --events 500 --senders 4 --conf my.yaml
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from pipelines.core.config import PROJECT_ROOT

SAMPLES = PROJECT_ROOT / "samples" / "landing"
OPENMETADATA_SAMPLE = SAMPLES / "openmetadata" / "2024-03-04" / "change_events.jsonl"
DATAHUB_SAMPLE = SAMPLES / "datahub_ece" / "2024-03" / "example_table_story.jsonl"
ROUTE = "/openmetadata"
FOLDERS = ("openmetadata", "datahub_ece")  # where the two routes land
TARGETS = {
    "sequential_events_per_s": (">=", 200),
    "concurrent_events_per_s": (">=", 1_000),
    "files_per_100_events": ("<=", 1.0),
}


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.receiver", description=__doc__.splitlines()[0]
    )
    parser.add_argument(
        "--events", type=int, default=2_000, help="posts of the sequential sender, and of each concurrent one"
    )
    parser.add_argument("--senders", type=int, default=8, help="concurrent senders")
    parser.add_argument("--warm-up", type=int, default=50, help="posts before the clock starts")
    parser.add_argument(
        "--conf", help="a configuration file for the receiver (e.g. collectors.receiver.segment_max_seconds)"
    )
    parser.add_argument("--workdir", help="keep the landing folder here (default: a temporary one, deleted)")
    return parser.parse_args(argv)


def bodies(count: int, first: int = 0) -> list[bytes]:
    """`count` distinct ChangeEvents made from the bundled sample's first one."""
    template = json.loads(OPENMETADATA_SAMPLE.read_text(encoding="utf-8").splitlines()[0])
    made = []
    for n in range(first, first + count):
        event = dict(template, id=f"bench-receiver-{n:08d}", timestamp=template["timestamp"] + n)
        made.append(json.dumps(event, separators=(",", ":")).encode("utf-8"))
    return made


@dataclass(frozen=True)
class Envelope:
    """An event as an Actions pipeline hands it to its action (`as_json()`)."""

    event: dict
    offset: int

    def as_json(self) -> str:
        meta = {"kafka": {"topic": "PlatformEvent_v1", "partition": 0, "offset": self.offset}}
        return json.dumps({"event_type": "EntityChangeEvent_v1", "event": self.event, "meta": meta})


def envelopes(count: int) -> list[Envelope]:
    """`count` entity change events from the bundled sample, each at its own Kafka offset."""
    events = []
    for line in DATAHUB_SAMPLE.read_text(encoding="utf-8").splitlines():
        try:
            events.append(json.loads(line))
        except ValueError:
            continue  # the sample's deliberately malformed lines
    return [Envelope(events[n % len(events)], n) for n in range(count)]


def event_key(line: bytes) -> str:
    """What tells one landed event from another: a ChangeEvent's `id`, an envelope's offset."""
    record = json.loads(line)
    return record["id"] if "id" in record else f"offset-{record['meta']['kafka']['offset']}"


def start_receiver(landing: Path, conf: str | None) -> tuple[subprocess.Popen, str]:
    """`lakehouse receive` on a free loopback port; returns the process and its base URL."""
    lakehouse = Path(sys.executable).with_name("lakehouse")
    command = [str(lakehouse), "receive", "--landing", str(landing), "--port", "0"]
    if conf:
        command += ["--conf", str(Path(conf).resolve())]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = process.stdout.readline()
    match = re.search(r"receiving on (http://\S+)", line)
    if not match:
        process.kill()
        raise SystemExit(f"lakehouse receive did not start: {line}{process.stderr.read()}")
    return process, match.group(1)


def sequential(url: str, posts: list[bytes]) -> tuple[float, list[float], int]:
    """One sender, one keep-alive connection: (seconds, answer latencies in s, 200 answers)."""
    import requests

    latencies = []
    acknowledged = 0
    with requests.Session() as session:
        started = time.perf_counter()
        for body in posts:
            sent = time.perf_counter()
            answer = session.post(url + ROUTE, data=body, timeout=30)
            latencies.append(time.perf_counter() - sent)
            acknowledged += answer.status_code == 200
        seconds = time.perf_counter() - started
    return seconds, latencies, acknowledged


def concurrent(url: str, per_sender: list[list[bytes]]) -> tuple[float, int]:
    """Senders side by side, each posting its bodies one after another: (seconds, 200 answers)."""
    import aiohttp

    async def run() -> tuple[float, int]:
        acknowledged = Counter()
        connector = aiohttp.TCPConnector(limit=len(per_sender))
        async with aiohttp.ClientSession(connector=connector) as session:

            async def sender(posts: list[bytes]) -> None:
                for body in posts:
                    async with session.post(url + ROUTE, data=body) as answer:
                        await answer.read()
                        acknowledged[answer.status] += 1

            started = time.perf_counter()
            await asyncio.gather(*(sender(posts) for posts in per_sender))
            return time.perf_counter() - started, acknowledged[200]

    return asyncio.run(run())


def through_the_action(url: str, events: list[Envelope]) -> tuple[float, int]:
    """The shipped Actions action delivering event after event: (seconds, events it delivered)."""
    from pipelines.collectors.datahub_action import LakehouseReceiverAction, ReceiverActionConfig

    action = LakehouseReceiverAction(ReceiverActionConfig(url=url + "/datahub"))
    started = time.perf_counter()
    try:
        for event in events:
            action.act(event)  # raises unless the receiver answered 2xx
    finally:
        action.close()
    return time.perf_counter() - started, len(events)


def landed(landing: Path) -> tuple[int, Counter]:
    """The landing files bronze discovers, and how often each event is in them."""
    from pipelines.landing import discover

    files = [file for folder in FOLDERS for file in discover(landing / folder)]
    keys: Counter = Counter()
    for file in files:
        for line in Path(file.path).read_bytes().splitlines():
            keys[event_key(line)] += 1
    return len(files), keys


def measure(args: argparse.Namespace, landing: Path) -> dict:
    warm = bodies(args.warm_up, first=0)
    first = bodies(args.events, first=len(warm))
    offset = len(warm) + len(first)
    shares = [bodies(args.events, first=offset + n * args.events) for n in range(args.senders)]
    delivered = envelopes(args.events)
    process, url = start_receiver(landing, args.conf)
    try:
        _, _, warm_acknowledged = sequential(url, warm)
        seconds, latencies, one_acknowledged = sequential(url, first)
        action_seconds, action_acknowledged = through_the_action(url, delivered)
        together_seconds, together_acknowledged = concurrent(url, shares)
    finally:
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=60)
    if process.returncode != 0:
        raise SystemExit(f"lakehouse receive exited {process.returncode}: {err.strip()}")
    files, ids = landed(landing)
    acknowledged = warm_acknowledged + one_acknowledged + action_acknowledged + together_acknowledged
    sent = len(warm) + len(first) + len(delivered) + sum(map(len, shares))
    ordered = sorted(latencies)
    return {
        "events_sent": sent,
        "events_acknowledged": acknowledged,
        "events_landed_once": sum(1 for count in ids.values() if count == 1),
        "events_landed_twice_or_more": sum(1 for count in ids.values() if count > 1),
        "sequential_events": len(first),
        "sequential_s": round(seconds, 3),
        "sequential_events_per_s": round(len(first) / seconds, 1),
        "sequential_latency_ms_median": round(statistics.median(ordered) * 1000, 2),
        "sequential_latency_ms_p99": round(ordered[int(0.99 * (len(ordered) - 1))] * 1000, 2),
        "actions_events": len(delivered),
        "actions_s": round(action_seconds, 3),
        "actions_events_per_s": round(len(delivered) / action_seconds, 1),
        "concurrent_senders": args.senders,
        "concurrent_events": sum(map(len, shares)),
        "concurrent_s": round(together_seconds, 3),
        "concurrent_events_per_s": round(sum(map(len, shares)) / together_seconds, 1),
        "landing_files": files,
        "files_per_100_events": round(100 * files / max(1, acknowledged), 4),
        "receiver_said": out.strip().splitlines()[-1] if out.strip() else "",
    }


def verdicts(figures: dict) -> list[dict]:
    checks = []
    for name, (sense, goal) in TARGETS.items():
        value = figures[name]
        passed = value >= goal if sense == ">=" else value <= goal
        checks.append({"target": f"{name} {sense} {goal}", "value": value, "passed": passed})
    every_one_once = figures["events_landed_once"] == figures["events_acknowledged"] == figures["events_sent"]
    every_one_once = every_one_once and figures["events_landed_twice_or_more"] == 0
    checks.append(
        {
            "target": "every acknowledged event landed exactly once",
            "value": every_one_once,
            "passed": every_one_once,
        }
    )
    return checks


def report(figures: dict, checks: list[dict]) -> str:
    lines = [
        f"one sequential sender      {figures['sequential_events']:>7} events in {figures['sequential_s']:7.2f} s"
        f"  {figures['sequential_events_per_s']:>8.1f} events/s  answer median "
        f"{figures['sequential_latency_ms_median']:.2f} ms, p99 {figures['sequential_latency_ms_p99']:.2f} ms",
        f"DataHub Actions' action     {figures['actions_events']:>7} events in {figures['actions_s']:7.2f} s"
        f"  {figures['actions_events_per_s']:>8.1f} events/s",
        f"{figures['concurrent_senders']} concurrent senders       {figures['concurrent_events']:>7} events in "
        f"{figures['concurrent_s']:7.2f} s  {figures['concurrent_events_per_s']:>8.1f} events/s",
        f"landing files              {figures['landing_files']:>7} for {figures['events_acknowledged']} acknowledged "
        f"events: {figures['files_per_100_events']} per 100 events",
        f"landed once                {figures['events_landed_once']:>7} (twice or more: "
        f"{figures['events_landed_twice_or_more']})",
        f"receiver                   {figures['receiver_said']}",
        "",
        "targets",
    ]
    for check in checks:
        lines.append(f"  {'PASS' if check['passed'] else 'FAIL'}  {check['target']}  ({check['value']})")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    workdir = Path(args.workdir) if args.workdir else Path(tempfile.mkdtemp(prefix="bench-receiver-"))
    landing = workdir / "landing"
    if landing.exists():
        shutil.rmtree(landing)
    try:
        figures = measure(args, landing)
    finally:
        if not args.workdir:
            shutil.rmtree(workdir, ignore_errors=True)
    checks = verdicts(figures)
    print(report(figures, checks))
    print(json.dumps({**figures, "targets": checks}))
    return 0 if all(check["passed"] for check in checks) else 1


if __name__ == "__main__":
    sys.exit(main())
