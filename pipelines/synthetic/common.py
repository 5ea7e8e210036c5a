"""What every synthetic source shares: record plans, rates, the event clock, the catalog vocabulary, the file sinks."""

from __future__ import annotations

import base64
import bisect
import gzip
import heapq
import itertools
import json
import random
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import timedelta, timezone
from pathlib import Path

SOURCE_SHARES = (("datahub_ece", 0.55), ("datahub_audit", 0.15), ("openmetadata", 0.15), ("dataworks", 0.15))
DUPLICATE_RATE = 0.02
LATE_RATE = 0.01
MALFORMED_RATE = 0.001
RECORDS_PER_FILE = 20_000
AUDIT_PAGE_SIZE = 1_000
GZIP_EVERY = 3  # every third data file is gzipped
START_MS = 1_704_067_200_000  # 2024-01-01T00:00:00Z
END_MS = 1_767_225_599_999  # 2025-12-31T23:59:59.999Z

dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
CST = timezone(timedelta(hours=8))
_GARBAGE = (
    "<html><body><h1>502 Bad Gateway</h1></body></html>",
    "upstream connect error or disconnect/reset before headers",
    "event: ping",
)

PLATFORMS = ("snowflake", "hive", "bigquery", "postgres", "kafka", "mysql")
DATABASES = ("sales", "marketing", "finance", "hr", "ops", "events")
TABLES = (
    "orders",
    "customers",
    "payments",
    "sessions",
    "clicks",
    "invoices",
    "shipments",
    "refunds",
    "leads",
)
COLUMNS = (
    "id",
    "email",
    "customer_id",
    "created_at",
    "amount",
    "ip_address",
    "phone_number",
    "country",
    "status",
    "updated_at",
)
TAGS = tuple(
    f"urn:li:tag:{t}"
    for t in (
        "pii",
        "PII",
        "Sensitive",
        "gdpr",
        "Legacy",
        "gold",
        "raw",
        "finance",
        "marketing",
        "deprecated",
    )
)
TERMS = tuple(
    f"urn:li:glossaryTerm:{t}"
    for t in ("Classification.Confidential", "Classification.Public", "Finance.Revenue", "Customer.Email")
)
DOMAINS = tuple(f"urn:li:domain:{d}" for d in ("marketing", "finance", "engineering", "sales"))
USERS = ("jdoe", "asmith", "bchen", "mgarcia", "kpatel", "lwang", "ojones", "rkumar", "snguyen", "tbrown")
ACTORS = tuple(f"urn:li:corpuser:{u}" for u in USERS) + ("urn:li:corpuser:datahub",)
# DataHub's accounts that are no person: ingestion (the default `datahub` account, a service
# account) and the server's own system actor
INGESTION_ACTORS = ("urn:li:corpuser:datahub", "urn:li:corpuser:svc_ingestion")
SYSTEM_ACTOR = "urn:li:corpuser:__datahub_system"
OWNERS = tuple(f"urn:li:corpuser:{u}" for u in USERS) + tuple(
    f"urn:li:corpGroup:{g}" for g in ("data-platform", "analytics", "finance-eng", "security")
)
OWNER_TYPES = ("TECHNICAL_OWNER", "BUSINESS_OWNER", "DATA_STEWARD", "NONE")


@dataclass(frozen=True)
class Plan:
    """Which of a source's unique records get a duplicate, go late, or are followed by a malformed one."""

    unique: int
    duplicates: frozenset[int]
    late: frozenset[int]
    malformed: frozenset[int]

    @property
    def total(self) -> int:
        return self.unique + len(self.duplicates) + len(self.malformed)


def plan_records(rng: random.Random, records: int) -> Plan:
    """Split a record budget into unique records plus dirt (at least one of each kind from 20 records on)."""
    floor = 1 if records >= 20 else 0
    dups = max(floor, round(records * DUPLICATE_RATE))
    bad = max(floor, round(records * MALFORMED_RATE))
    unique = records - dups - bad
    late = max(floor, round(unique * LATE_RATE))
    chosen = rng.sample(range(unique), dups + late) if unique else []
    malformed = rng.sample(range(unique), bad) if unique else []
    return Plan(unique, frozenset(chosen[:dups]), frozenset(chosen[dups:]), frozenset(malformed))


def split_events(events: int) -> dict[str, int]:
    """Records per source for a total of `events` (shares of SOURCE_SHARES; the remainder goes to ECE)."""
    counts = {source: int(events * share) for source, share in SOURCE_SHARES}
    counts["datahub_ece"] += events - sum(counts.values())
    return counts


class Bag:
    """A set with O(1) add, discard and uniform random pick, in a deterministic order."""

    def __init__(self) -> None:
        self.items: list = []
        self.pos: dict = {}

    def add(self, item) -> None:
        if item not in self.pos:
            self.pos[item] = len(self.items)
            self.items.append(item)

    def discard(self, item) -> None:
        index = self.pos.pop(item, None)
        if index is None:
            return
        last = self.items.pop()
        if index < len(self.items):
            self.items[index] = last
            self.pos[last] = index

    def pick(self, rng: random.Random):
        return self.items[int(rng.random() * len(self.items))]

    def __len__(self) -> int:
        return len(self.items)

    def __contains__(self, item) -> bool:
        return item in self.pos


def make_clock(
    rng: random.Random, count: int, start_ms: int = START_MS, end_ms: int = END_MS
) -> Callable[[], int]:
    """Strictly increasing epoch-ms times spread over [start_ms, end_ms] (2024-2025 unless told):
    one jittered slot per record."""
    width = max(1, (end_ms - start_ms) // max(count, 1))
    slots = itertools.count()

    def tick() -> int:
        return start_ms + next(slots) * width + int(rng.random() * width)

    return tick


def random_uuid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def weighted(rng: random.Random, actions: list[tuple[Callable, float]]) -> Callable[[], Iterator[str]]:
    """A picker that returns one action per call, with the given relative weights."""
    funcs = [a for a, _ in actions]
    cumulative = list(itertools.accumulate(w for _, w in actions))
    total = cumulative[-1]
    return lambda: funcs[bisect.bisect_right(cumulative, rng.random() * total)]


class Sink:
    """Writes one source's records into bounded files, adding the planned duplicates, late and malformed records."""

    def __init__(
        self,
        folder: Path,
        plan: Plan,
        rng: random.Random,
        stem: str = "part",
        records_per_file: int = RECORDS_PER_FILE,
    ) -> None:
        self.folder, self.plan, self.rng, self.stem = folder, plan, rng, stem
        self.records_per_file = records_per_file
        self.index = 0  # unique records seen
        self.written = 0
        self.deferred: list[tuple[int, int, str]] = []  # (due index, sequence, line) duplicates for later
        self.late: list[str] = []
        self.files = 0
        self.handle = None
        self.in_file = 0
        folder.mkdir(parents=True, exist_ok=True)

    def emit(self, line: str) -> None:
        """Take the next unique record (in event-time order)."""
        index = self.index
        self.index += 1
        while self.deferred and self.deferred[0][0] <= index:
            self._write(heapq.heappop(self.deferred)[2])
        if index in self.plan.late:
            self.late.append(line)
        else:
            self._write(line)
        if index in self.plan.duplicates:
            if self.rng.random() < 0.5:
                self._write(line)
            else:
                due = index + 1 + int(self.rng.random() * 2 * self.records_per_file)
                heapq.heappush(self.deferred, (due, index, line))
        if index in self.plan.malformed:
            self._write_malformed(self._malformed(line))

    def emit_document(self, name: str, text: str, line: str) -> None:
        """Take the next unique record as a standalone JSON document (a file of its own) when no dirt is planned."""
        index = self.index
        if index in self.plan.late or index in self.plan.duplicates or index in self.plan.malformed:
            self.emit(line)
            return
        self.index += 1
        path = self.folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text + "\n", encoding="utf-8")
        self.written += 1

    def close(self) -> int:
        """Flush deferred duplicates and write the late files; returns the records written."""
        for _, _, line in sorted(self.deferred):
            self._write(line)
        self.deferred = []
        self._close_file()
        self._write_late()
        return self.written

    def _malformed(self, line: str) -> str:
        if self.rng.random() < 0.6:
            return line[: max(1, len(line) // 2)]
        return _GARBAGE[int(self.rng.random() * len(_GARBAGE))]

    def _write_malformed(self, text: str) -> None:
        self._write(text)

    def _write(self, line: str) -> None:
        if self.handle is None:
            self._open_file()
        self.handle.write(line + "\n")
        self.in_file += 1
        self.written += 1
        if self.in_file >= self.records_per_file:
            self._close_file()

    def _open_file(self) -> None:
        name = f"{self.stem}-{self.files:05d}.jsonl"
        path = self.folder / name
        if self.files % GZIP_EVERY == GZIP_EVERY - 1:
            raw = open(path.with_name(name + ".gz"), "wb")
            self.handle = GzipText(
                gzip.GzipFile(filename="", mode="wb", fileobj=raw, compresslevel=5, mtime=0), raw
            )
        else:
            self.handle = open(path, "w", encoding="utf-8", buffering=1 << 20)
        self.files += 1
        self.in_file = 0

    def _close_file(self) -> None:
        if self.handle is not None:
            self.handle.close()
            self.handle = None

    def _write_late(self) -> None:
        if not self.late:
            return
        late_dir = self.folder / "late"
        late_dir.mkdir(exist_ok=True)
        for number, start in enumerate(range(0, len(self.late), self.records_per_file)):
            chunk = self.late[start : start + self.records_per_file]
            (late_dir / f"part-{number:05d}.jsonl").write_text("\n".join(chunk) + "\n", encoding="utf-8")
            self.written += len(chunk)


class GzipText:
    """Text writes into a gzip stream with a fixed header (mtime 0), so equal seeds give equal bytes."""

    def __init__(self, gz: gzip.GzipFile, raw) -> None:
        self.gz, self.raw, self.parts, self.size = gz, raw, [], 0

    def write(self, text: str) -> None:
        self.parts.append(text)
        self.size += len(text)
        if self.size > 1 << 20:
            self._flush()

    def _flush(self) -> None:
        self.gz.write("".join(self.parts).encode("utf-8"))
        self.parts, self.size = [], 0

    def close(self) -> None:
        self._flush()
        self.gz.close()
        self.raw.close()


class AuditSink(Sink):
    """Audit records go into search-response pages chained by nextScrollId; malformed ones into the late JSONL."""

    def __init__(
        self,
        folder: Path,
        plan: Plan,
        rng: random.Random,
        seed: int,
        records_per_file: int = RECORDS_PER_FILE,
    ) -> None:
        super().__init__(folder, plan, rng, stem="page", records_per_file=records_per_file)
        self.seed = seed
        self.page: list[str] = []
        self.ready: list[str] | None = None  # a full page waiting for the next page's scroll id
        self.total = min(plan.total - len(plan.late) - len(plan.malformed), 10_000)

    def _write(self, line: str) -> None:
        self.page.append(line)
        self.written += 1
        if len(self.page) >= AUDIT_PAGE_SIZE:
            self._write_page(last=False)
            self.ready, self.page = self.page, []

    def _write_malformed(self, text: str) -> None:
        self.late.append(text)

    def _write_page(self, last: bool) -> None:
        if self.ready is None:
            return
        number = self.files
        next_id = None if last else base64.b64encode(f"scroll:{self.seed}:{number + 1}".encode()).decode()
        head = dumps({"nextScrollId": next_id, "count": len(self.ready), "total": self.total})
        body = head[:-1] + ',"usageEvents":[' + ",".join(self.ready) + "]}\n"
        (self.folder / f"page-{number:05d}.json").write_text(body, encoding="utf-8")
        self.files += 1
        self.ready = None

    def _close_file(self) -> None:
        if self.page:
            self._write_page(last=False)
            self.ready, self.page = self.page, []
        self._write_page(last=True)
