"""Synthetic landing data for `lakehouse generate --out DIR --events N [--seed S]`.

Why: load tests and end-to-end checks need more events than the bundled samples,
with the dirt real feeds carry at known rates, and a story that is consistent
(no REMOVE before its ADD, nothing after a HARD_DELETE) so a reference model can
say what gold must contain. Pure Python, deterministic for a seed, no Spark.

Layout under DIR (every source gets exactly the planned number of records):
    datahub_ece/part-00000.jsonl, part-00002.jsonl.gz, ...   Entity Change Events
    datahub_audit/page-00000.json, ...                       audit search-response pages (nextScrollId chain)
    openmetadata/part-*.jsonl[.gz]                           OpenMetadata ChangeEvents
    dataworks/part-*.jsonl[.gz]                              DataWorks EventBridge CloudEvents
    dataworks/fc/msg-*.json                                  DataWorks Function Compute messages
    <source>/late/part-*.jsonl                               late arrivals (older event times), written last;
                                                             for audit also the malformed records
Rates: about 2% exact duplicates (same line again, sometimes in a later file),
1% late arrivals, 0.1% malformed records (truncated JSON or non-JSON text).
Event times are epoch milliseconds in 2024-2025 (`--start`, `--end` move the window), strictly
increasing per source.
"""

from __future__ import annotations

import argparse
import base64
import bisect
import functools
import gzip
import heapq
import itertools
import json
import random
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
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

_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
_CST = timezone(timedelta(hours=8))
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


class _Bag:
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


def _uuid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def _weighted(rng: random.Random, actions: list[tuple[Callable, float]]) -> Callable[[], Iterator[str]]:
    """A picker that returns one action per call, with the given relative weights."""
    funcs = [a for a, _ in actions]
    cumulative = list(itertools.accumulate(w for _, w in actions))
    total = cumulative[-1]
    return lambda: funcs[bisect.bisect_right(cumulative, rng.random() * total)]


class _Sink:
    """Writes one source's records into bounded files, adding the planned duplicates, late and malformed records."""

    def __init__(self, folder: Path, plan: Plan, rng: random.Random, stem: str = "part") -> None:
        self.folder, self.plan, self.rng, self.stem = folder, plan, rng, stem
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
                due = index + 1 + int(self.rng.random() * 2 * RECORDS_PER_FILE)
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
        if self.in_file >= RECORDS_PER_FILE:
            self._close_file()

    def _open_file(self) -> None:
        name = f"{self.stem}-{self.files:05d}.jsonl"
        path = self.folder / name
        if self.files % GZIP_EVERY == GZIP_EVERY - 1:
            raw = open(path.with_name(name + ".gz"), "wb")
            self.handle = _GzipText(
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
        for number, start in enumerate(range(0, len(self.late), RECORDS_PER_FILE)):
            chunk = self.late[start : start + RECORDS_PER_FILE]
            (late_dir / f"part-{number:05d}.jsonl").write_text("\n".join(chunk) + "\n", encoding="utf-8")
            self.written += len(chunk)


class _GzipText:
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


class _AuditSink(_Sink):
    """Audit records go into search-response pages chained by nextScrollId; malformed ones into the late JSONL."""

    def __init__(self, folder: Path, plan: Plan, rng: random.Random, seed: int) -> None:
        super().__init__(folder, plan, rng, stem="page")
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
        head = _dumps({"nextScrollId": next_id, "count": len(self.ready), "total": self.total})
        body = head[:-1] + ',"usageEvents":[' + ",".join(self.ready) + "]}\n"
        (self.folder / f"page-{number:05d}.json").write_text(body, encoding="utf-8")
        self.files += 1
        self.ready = None

    def _close_file(self) -> None:
        if self.page:
            self._write_page(last=False)
            self.ready, self.page = self.page, []
        self._write_page(last=True)


# DataHub Entity Change Events ---------------------------------------------------------------


_quote = functools.lru_cache(maxsize=1 << 16)(_dumps)  # URNs repeat a lot: encode each once


def _flat_object(values: dict) -> str:
    """Compact JSON of a flat dict, reusing the cached encodings of its strings."""
    return (
        "{"
        + ",".join(
            [_quote(k) + ":" + (_quote(v) if type(v) is str else _dumps(v)) for k, v in values.items()]
        )
        + "}"
    )


def _ece(
    entity: str,
    entity_type: str,
    category: str,
    operation: str,
    actor: str,
    time: int,
    modifier: str | None = None,
    parameters: dict | None = None,
) -> str:
    """One ECE record as compact JSON (a string template: the hot path of `generate`)."""
    head = f'{{"entityUrn":{_quote(entity)},"entityType":{_quote(entity_type)},"category":{_quote(category)},"operation":{_quote(operation)}'
    if modifier is not None:
        head += ',"modifier":' + _quote(modifier)
    if parameters is not None:
        head += ',"parameters":' + _flat_object(parameters)
    return f'{head},"auditStamp":{{"actor":{_quote(actor)},"time":{time}}},"version":0}}'


class _EceWorld:
    """A consistent DataHub history: associations are removed only while open, deleted datasets stay silent."""

    def __init__(self, rng: random.Random, clock: Callable[[], int], unique: int) -> None:
        self.rng, self.clock = rng, clock
        self.live = _Bag()  # datasets that exist
        self.columns: dict[str, list[str]] = {}
        self.open: set[tuple] = set()  # ("tag"|"term"|"domain"|"owner", entity, value[, owner type])
        self.by_dataset: dict[str, set[tuple]] = {}
        self.domain: dict[str, str] = {}
        self.pending = _Bag()  # proposals (urn, type, resource, key or None)
        self.runs = _Bag()  # started dataProcessInstance runs
        self.target_live = max(8, unique // 80)
        self.serial = 0
        self.pick_action = _weighted(
            rng,
            [
                (self._tag, 16),
                (self._field_tag, 10),
                (self._term, 7),
                (self._domain, 3),
                (self._owner, 12),
                (self._documentation, 4),
                (self._deprecation, 2),
                (self._schema_field, 3),
                (self._structured_property, 2),
                (self._hard_delete, 0.5),
                (self._propose, 4),
                (self._proposal_status, 2),
                (self._proposal_applied, 2),
                (self._run, 5),
                (self._assertion, 2),
            ],
        )

    def records(self) -> Iterator[str]:
        """Endless stream of ECE lines in event-time order."""
        while True:
            if not self.live or (len(self.live) < self.target_live and self.rng.random() < 0.3):
                yield from self._create()
            else:
                yield from self.pick_action()()

    def _choice(self, items: tuple):
        return items[int(self.rng.random() * len(items))]

    def _actor(self) -> str:
        return self._choice(ACTORS)

    def _create(self) -> Iterator[str]:
        self.serial += 1
        rng = self.rng
        name = f"{self._choice(DATABASES)}.{self._choice(TABLES)}_{self.serial}"
        dataset = f"urn:li:dataset:(urn:li:dataPlatform:{self._choice(PLATFORMS)},{name},PROD)"
        self.live.add(dataset)
        self.columns[dataset] = rng.sample(COLUMNS, 3 + int(rng.random() * 5))
        self.by_dataset[dataset] = set()
        yield _ece(dataset, "dataset", "LIFECYCLE", "CREATE", "urn:li:corpuser:datahub", self.clock())

    def _toggle(self, key: tuple, dataset: str) -> str:
        """ADD when the association is closed, REMOVE when open (so REMOVE never precedes its ADD)."""
        if key in self.open:
            self.open.discard(key)
            self.by_dataset[dataset].discard(key)
            return "REMOVE"
        self.open.add(key)
        self.by_dataset[dataset].add(key)
        return "ADD"

    def _tag(self) -> Iterator[str]:
        dataset, tag = self.live.pick(self.rng), self._choice(TAGS)
        operation = self._toggle(("tag", dataset, tag), dataset)
        params = {"tagUrn": tag, "context": "{}"} if self.rng.random() < 0.5 else {"tagUrn": tag}
        yield _ece(
            dataset, "dataset", "TAG", operation, self._actor(), self.clock(), modifier=tag, parameters=params
        )

    def _field_tag(self) -> Iterator[str]:
        dataset = self.live.pick(self.rng)
        column = self._choice(tuple(self.columns[dataset]))
        field, tag = f"urn:li:schemaField:({dataset},{column})", self._choice(TAGS[:5])
        operation = self._toggle(("tag", field, tag), dataset)
        params = {"tagUrn": tag, "fieldPath": column, "parentUrn": dataset}
        yield _ece(
            field,
            "schemaField",
            "TAG",
            operation,
            self._actor(),
            self.clock(),
            modifier=tag,
            parameters=params,
        )

    def _term(self) -> Iterator[str]:
        dataset, term = self.live.pick(self.rng), self._choice(TERMS)
        operation = self._toggle(("term", dataset, term), dataset)
        yield _ece(
            dataset,
            "dataset",
            "GLOSSARY_TERM",
            operation,
            self._actor(),
            self.clock(),
            modifier=term,
            parameters={"termUrn": term},
        )

    def _domain(self) -> Iterator[str]:
        """A dataset has at most one domain: moving it removes the old one first."""
        dataset, actor = self.live.pick(self.rng), self._actor()
        old = self.domain.pop(dataset, None)
        if old is not None:
            self._toggle(("domain", dataset, old), dataset)
            yield _ece(
                dataset,
                "dataset",
                "DOMAIN",
                "REMOVE",
                actor,
                self.clock(),
                modifier=old,
                parameters={"domainUrn": old},
            )
            if self.rng.random() < 0.5:
                return
        new = self._choice(tuple(d for d in DOMAINS if d != old))
        self.domain[dataset] = new
        self._toggle(("domain", dataset, new), dataset)
        yield _ece(
            dataset,
            "dataset",
            "DOMAIN",
            "ADD",
            actor,
            self.clock(),
            modifier=new,
            parameters={"domainUrn": new},
        )

    def _owner(self) -> Iterator[str]:
        """OWNERSHIP (newer servers) or OWNER (older); both name the same association."""
        dataset, owner, kind = self.live.pick(self.rng), self._choice(OWNERS), self._choice(OWNER_TYPES)
        operation = self._toggle(("owner", dataset, owner, kind), dataset)
        if self.rng.random() < 0.7:
            category = "OWNERSHIP"
            params = {
                "ownerUrn": owner,
                "ownerType": kind,
                "ownerTypeUrn": f"urn:li:ownershipType:__system__{kind.lower()}",
            }
        else:
            category, params = "OWNER", {"ownerUrn": owner, "ownerType": kind}
        yield _ece(
            dataset,
            "dataset",
            category,
            operation,
            self._actor(),
            self.clock(),
            modifier=owner,
            parameters=params,
        )

    def _documentation(self) -> Iterator[str]:
        dataset = self.live.pick(self.rng)
        text = f"{dataset.split(',')[1]} as loaded by the nightly job (rev {self.serial})"
        yield _ece(
            dataset,
            "dataset",
            "DOCUMENTATION",
            "MODIFY",
            self._actor(),
            self.clock(),
            parameters={"description": text},
        )

    def _deprecation(self) -> Iterator[str]:
        dataset, status = self.live.pick(self.rng), self._choice(("DEPRECATED", "ACTIVE"))
        yield _ece(
            dataset,
            "dataset",
            "DEPRECATION",
            "MODIFY",
            self._actor(),
            self.clock(),
            modifier=status,
            parameters={"status": status},
        )

    def _schema_field(self) -> Iterator[str]:
        dataset = self.live.pick(self.rng)
        self.serial += 1
        column = f"col_{self.serial}"
        self.columns[dataset].append(column)
        field = f"urn:li:schemaField:({dataset},{column})"
        params = {"fieldUrn": field, "fieldPath": column, "nullable": self.rng.random() < 0.5}
        yield _ece(
            dataset,
            "dataset",
            "TECHNICAL_SCHEMA",
            "ADD",
            "urn:li:corpuser:datahub",
            self.clock(),
            modifier=field,
            parameters=params,
        )

    def _structured_property(self) -> Iterator[str]:
        dataset = self.live.pick(self.rng)
        prop = self._choice(("urn:li:structuredProperty:retention", "urn:li:structuredProperty:tier"))
        values = _dumps([self._choice(("30d", "90d", "1y", "gold", "silver"))])
        yield _ece(
            dataset,
            "dataset",
            "STRUCTURED_PROPERTY",
            self._choice(("ADD", "MODIFY")),
            self._actor(),
            self.clock(),
            modifier=prop,
            parameters={"propertyUrn": prop, "propertyValues": values},
        )

    def _hard_delete(self) -> Iterator[str]:
        """Closes every association of the dataset and its fields; the dataset is never used again."""
        if len(self.live) <= 4:
            yield from self._tag()
            return
        dataset = self.live.pick(self.rng)
        self.live.discard(dataset)
        self.open.difference_update(self.by_dataset.pop(dataset))
        self.domain.pop(dataset, None)
        self.columns.pop(dataset)
        yield _ece(dataset, "dataset", "LIFECYCLE", "HARD_DELETE", self._actor(), self.clock())

    def _propose(self) -> Iterator[str]:
        """An actionRequest CREATE proposing a tag, term, owner, domain or description on a live dataset."""
        rng, dataset = self.rng, self.live.pick(self.rng)
        urn = f"urn:li:actionRequest:{_uuid(rng)}"
        kind = self._choice(
            ("TAG_ASSOCIATION", "TERM_ASSOCIATION", "OWNER_ASSOCIATION", "UPDATE_DESCRIPTION")
        )
        params = {"actionRequestType": kind, "resourceUrn": dataset, "resourceType": "dataset"}
        key = None
        if kind == "TAG_ASSOCIATION":
            params["tagUrn"] = self._choice(TAGS)
            key = ("tag", dataset, params["tagUrn"])
        elif kind == "TERM_ASSOCIATION":
            params["glossaryTermUrn"] = self._choice(TERMS)
            key = ("term", dataset, params["glossaryTermUrn"])
        elif kind == "OWNER_ASSOCIATION":
            owner, owner_type = self._choice(OWNERS), self._choice(OWNER_TYPES)
            typ = f"urn:li:ownershipType:__system__{owner_type.lower()}"
            params["owners"] = _dumps([{"type": owner_type, "typeUrn": typ, "ownerUrn": owner}])
            key = ("owner", dataset, owner, owner_type)
        else:
            params["description"] = "Proposed: describe the grain and the refresh schedule."
        self.pending.add((urn, dataset, key))
        yield _ece(
            urn, "actionRequest", "LIFECYCLE", "CREATE", self._actor(), self.clock(), parameters=params
        )

    def _association_add(self, key: tuple, actor: str) -> str | None:
        """The ADD that makes a proposed association appear, when the dataset lives and it is not open yet."""
        dataset = key[1]
        if dataset not in self.live or key in self.open:
            return None
        self._toggle(key, dataset)
        kind, time = key[0], self.clock()
        if kind == "tag":
            return _ece(
                dataset, "dataset", "TAG", "ADD", actor, time, modifier=key[2], parameters={"tagUrn": key[2]}
            )
        if kind == "term":
            params = {"termUrn": key[2]}
            return _ece(
                dataset, "dataset", "GLOSSARY_TERM", "ADD", actor, time, modifier=key[2], parameters=params
            )
        params = {"ownerUrn": key[2], "ownerType": key[3]}
        return _ece(dataset, "dataset", "OWNERSHIP", "ADD", actor, time, modifier=key[2], parameters=params)

    def _proposal_status(self) -> Iterator[str]:
        """DataHub Cloud status change: COMPLETED with ACCEPTED (then the change appears) or REJECTED."""
        if not self.pending:
            yield from self._propose()
            return
        proposal = self.pending.pick(self.rng)
        self.pending.discard(proposal)
        urn, _, key = proposal
        result = "ACCEPTED" if self.rng.random() < 0.6 else "REJECTED"
        actor = self._actor()
        params = {"actionRequestStatus": "COMPLETED", "actionRequestResult": result}
        yield _ece(urn, "actionRequest", "LIFECYCLE", "COMPLETED", actor, self.clock(), parameters=params)
        if result == "ACCEPTED" and key is not None:
            line = self._association_add(key, actor)
            if line is not None:
                yield line

    def _proposal_applied(self) -> Iterator[str]:
        """No status event (older servers): the proposed association simply appears later."""
        if not self.pending:
            yield from self._propose()
            return
        proposal = self.pending.pick(self.rng)
        self.pending.discard(proposal)
        line = self._association_add(proposal[2], self._actor()) if proposal[2] is not None else None
        if line is None:
            yield from self._tag()
        else:
            yield line

    def _run(self) -> Iterator[str]:
        """A dataProcessInstance run: STARTED now, COMPLETED later."""
        rng = self.rng
        if self.runs and rng.random() < 0.5:
            run, job, attempt = self.runs.pick(rng)
            self.runs.discard((run, job, attempt))
            result = "SUCCESS" if rng.random() < 0.85 else "FAILURE"
            operation, params = "COMPLETED", {"runResult": result, "attempt": attempt}
        else:
            self.serial += 1
            run = f"urn:li:dataProcessInstance:{rng.getrandbits(64):016x}"
            job, attempt = self._choice(TABLES), 1 + int(rng.random() * 2)
            self.runs.add((run, job, attempt))
            operation, params = "STARTED", {"attempt": attempt}
        flow = "urn:li:dataFlow:(airflow,nightly_etl,prod)"
        params.update({"dataFlowUrn": flow, "dataJobUrn": f"urn:li:dataJob:({flow},load_{job})"})
        yield _ece(
            run,
            "dataProcessInstance",
            "RUN",
            operation,
            "urn:li:corpuser:datahub",
            self.clock(),
            parameters=params,
        )

    def _assertion(self) -> Iterator[str]:
        rng, dataset = self.rng, self.live.pick(self.rng)
        result = "SUCCESS" if rng.random() < 0.9 else "FAILURE"
        params = {
            "runResult": result,
            "runId": f"run-{rng.getrandbits(40):010x}",
            "asserteeUrn": dataset,
            "assertionResult": result,
        }
        urn = f"urn:li:assertion:{rng.getrandbits(48):012x}"
        yield _ece(
            urn, "assertion", "RUN", "COMPLETED", "urn:li:corpuser:datahub", self.clock(), parameters=params
        )


# DataHub audit events ---------------------------------------------------------------------

AUDIT_TYPES = (
    ("LogInEvent", 30),
    ("EntityEvent", 24),
    ("UpdateAspectEvent", 14),
    ("FailedLogInEvent", 6),
    ("CreateAccessTokenEvent", 3),
    ("RevokeAccessTokenEvent", 2),
    ("CreateUserEvent", 2),
    ("UpdateUserEvent", 3),
    ("CreatePolicyEvent", 1),
    ("UpdatePolicyEvent", 2),
    ("CreateIngestionSourceEvent", 1),
    ("UpdateIngestionSourceEvent", 3),
    ("DeleteEntityEvent", 1),
)
USER_AGENTS = (
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0 Safari/537.36",
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) Gecko/20100101 Firefox/126.0",
    "python-requests/2.31.0",
    "acryl-datahub/0.14.1",
)
LOGIN_SOURCES = ("PASSWORD_LOGIN", "SSO_LOGIN", "OIDC_IMPLICIT_LOGIN", "FALLBACK_LOGIN", "GUEST_LOGIN")


def _audit_target(rng: random.Random, event_type: str) -> tuple[str, str, str]:
    """(entityUrn, entityType, aspectName) an audit event of this type is about."""
    hex_id = f"{rng.getrandbits(32):08x}"
    if "AccessToken" in event_type:
        return f"urn:li:dataHubAccessToken:{hex_id}", "dataHubAccessToken", "dataHubAccessTokenInfo"
    if "Policy" in event_type:
        return f"urn:li:dataHubPolicy:{hex_id}", "dataHubPolicy", "dataHubPolicyInfo"
    if "IngestionSource" in event_type:
        return (
            f"urn:li:dataHubIngestionSource:{hex_id}",
            "dataHubIngestionSource",
            "dataHubIngestionSourceInfo",
        )
    if "User" in event_type:
        return f"urn:li:corpuser:{USERS[int(rng.random() * len(USERS))]}", "corpuser", "corpUserInfo"
    platform, table = PLATFORMS[int(rng.random() * len(PLATFORMS))], TABLES[int(rng.random() * len(TABLES))]
    aspect = ("ownership", "globalTags", "schemaMetadata", "editableDatasetProperties", "status")[
        int(rng.random() * 5)
    ]
    return f"urn:li:dataset:(urn:li:dataPlatform:{platform},{table},PROD)", "dataset", aspect


def audit_records(rng: random.Random, clock: Callable[[], int]) -> Iterator[str]:
    """Endless audit usage events; failed logins cluster on one suspicious IP."""
    pick = _weighted(rng, [((lambda t=t: t), w) for t, w in AUDIT_TYPES])
    ips = tuple(f"10.20.{i}.{j}" for i in range(3) for j in (11, 42, 77))
    while True:
        event_type = pick()()
        actor = ACTORS[int(rng.random() * len(ACTORS))]
        ip = ips[int(rng.random() * len(ips))]
        if event_type == "FailedLogInEvent" and rng.random() < 0.7:
            ip = "203.0.113.66"
        event = {
            "eventType": event_type,
            "timestamp": clock(),
            "actorUrn": actor,
            "sourceIP": ip,
            "eventSource": ("GRAPHQL", "RESTLI", "OPENAPI", "SSO_SCIM")[int(rng.random() * 4)],
            "userAgent": USER_AGENTS[int(rng.random() * len(USER_AGENTS))],
            "telemetryTraceId": f"{rng.getrandbits(64):016x}",
        }
        if event_type.endswith("LogInEvent"):
            event["loginSource"] = LOGIN_SOURCES[int(rng.random() * len(LOGIN_SOURCES))]
        else:
            event["entityUrn"], event["entityType"], event["aspectName"] = _audit_target(rng, event_type)
        if rng.random() < 0.3:
            raw = {
                "type": event_type,
                "actorUrn": actor,
                "timestamp": event["timestamp"],
                "usageSource": "BACKEND",
            }
            event["rawUsageEvent"] = raw
        yield _dumps(event)


# OpenMetadata ---------------------------------------------------------------------------

OM_TAGS = ("PII.Sensitive", "PII.NonSensitive", "PersonalData.Personal", "Tier.Tier1", "Tier.Tier2")
OM_USERS = ("aaron_johnson0", "adam_matthews2", "alec_kane4", "amanda_york8", "brian_smith7")


def _om_tag(fqn: str) -> dict:
    return {"tagFQN": fqn, "source": "Classification", "labelType": "Manual", "state": "Confirmed"}


def _om_owner(name: str) -> dict:
    display = name.rsplit("_", 1)[0].replace("_", " ").title()
    return {
        "id": str(uuid.uuid5(uuid.NAMESPACE_URL, f"openmetadata:user:{name}")),
        "type": "user",
        "name": name,
        "fullyQualifiedName": name,
        "displayName": display,
        "deleted": False,
    }


class _OmWorld:
    """Tables with tags, column tags, owners and descriptions; nothing is removed that is not there."""

    def __init__(self, rng: random.Random, clock: Callable[[], int]) -> None:
        self.rng, self.clock = rng, clock
        self.tables = _Bag()
        self.state: dict[str, dict] = {}
        self.serial = 0
        self.pick_action = _weighted(
            rng,
            [
                (self._tags, 30),
                (self._column_tags, 20),
                (self._owners, 18),
                (self._description, 12),
                (self._delete, 2),
            ],
        )

    def records(self) -> Iterator[str]:
        while True:
            if len(self.tables) < 5 or self.rng.random() < 0.06:
                yield self._create()
            else:
                yield self.pick_action()()

    def _event(self, fqn: str, event_type: str, change: dict | None, **extra) -> str:
        rng, table = self.rng, self.state[fqn]
        previous = table["version"]
        if change is not None:
            table["version"] = round(previous + 0.1, 1)
        event = {} if rng.random() < 0.05 else {"id": _uuid(rng)}
        event.update(
            {
                "eventType": event_type,
                "entityType": "table",
                "entityId": table["id"],
                "entityFullyQualifiedName": fqn,
                "previousVersion": previous,
                "currentVersion": table["version"],
                "userName": OM_USERS[int(rng.random() * len(OM_USERS))],
                "timestamp": self.clock(),
                "changeDescription": change,
            }
        )
        if change is not None and rng.random() < 0.5:
            event["incrementalChangeDescription"] = change
        event.update(extra)
        return _dumps(event)

    def _create(self) -> str:
        rng = self.rng
        self.serial += 1
        name = f"{TABLES[int(rng.random() * len(TABLES))]}_{self.serial}"
        fqn = f"mysql_prod.shop.{DATABASES[int(rng.random() * len(DATABASES))]}.{name}"
        columns = rng.sample(COLUMNS, 4)
        self.tables.add(fqn)
        self.state[fqn] = {
            "id": _uuid(rng),
            "version": 0.1,
            "tags": [],
            "owners": [],
            "columns": {c: [] for c in columns},
        }
        entity = {"id": self.state[fqn]["id"], "name": name, "fullyQualifiedName": fqn, "version": 0.1}
        entity["columns"] = [{"name": c, "dataType": "VARCHAR"} for c in columns]
        return self._event(fqn, "entityCreated", None, entity=_dumps(entity))

    @staticmethod
    def _change(previous: float, added=(), updated=(), deleted=()) -> dict:
        return {
            "fieldsAdded": list(added),
            "fieldsUpdated": list(updated),
            "fieldsDeleted": list(deleted),
            "previousVersion": previous,
        }

    def _toggle_tag(self, fqn: str, current: list, field: str) -> str:
        tag = OM_TAGS[int(self.rng.random() * len(OM_TAGS))]
        previous = self.state[fqn]["version"]
        if tag in current:
            current.remove(tag)
            item = {"name": field, "oldValue": _dumps([_om_tag(tag)])}
            return self._event(fqn, "entityUpdated", self._change(previous, deleted=[item]))
        current.append(tag)
        item = {"name": field, "newValue": _dumps([_om_tag(tag)])}
        return self._event(fqn, "entityUpdated", self._change(previous, added=[item]))

    def _tags(self) -> str:
        fqn = self.tables.pick(self.rng)
        return self._toggle_tag(fqn, self.state[fqn]["tags"], "tags")

    def _column_tags(self) -> str:
        fqn = self.tables.pick(self.rng)
        columns = self.state[fqn]["columns"]
        column = sorted(columns)[int(self.rng.random() * len(columns))]
        return self._toggle_tag(fqn, columns[column], f"columns.{column}.tags")

    def _owners(self) -> str:
        """Newer servers: `owners` lists added/deleted; older ones: `owner` updated as a single reference."""
        rng, fqn = self.rng, self.tables.pick(self.rng)
        table = self.state[fqn]
        name = OM_USERS[int(rng.random() * len(OM_USERS))]
        previous = table["version"]
        if rng.random() < 0.2:
            old = table["owners"][0] if table["owners"] else None
            table["owners"] = [name]
            item = {"name": "owner", "newValue": _dumps(_om_owner(name))}
            if old is not None:
                item["oldValue"] = _dumps(_om_owner(old))
            return self._event(fqn, "entityUpdated", self._change(previous, updated=[item]))
        if name in table["owners"]:
            table["owners"].remove(name)
            item = {"name": "owners", "oldValue": _dumps([_om_owner(name)])}
            return self._event(fqn, "entityUpdated", self._change(previous, deleted=[item]))
        table["owners"].append(name)
        item = {"name": "owners", "newValue": _dumps([_om_owner(name)])}
        return self._event(fqn, "entityUpdated", self._change(previous, added=[item]))

    def _description(self) -> str:
        fqn = self.tables.pick(self.rng)
        previous = self.state[fqn]["version"]
        old = self.state[fqn].get("description", "")
        new = f"Rows of {fqn.rsplit('.', 1)[1]}, refreshed hourly (v{previous})"
        self.state[fqn]["description"] = new
        item = {"name": "description", "oldValue": old, "newValue": new}
        return self._event(fqn, "entityUpdated", self._change(previous, updated=[item]))

    def _delete(self) -> str:
        fqn = self.tables.pick(self.rng)
        line = self._event(fqn, "entityDeleted", None)
        self.tables.discard(fqn)
        del self.state[fqn]
        return line


# DataWorks ------------------------------------------------------------------------------

DW_TENANT = 283789910656
DW_PROJECTS = (91234, 307303, 256663)
DW_OPERATORS = ("1904567812345735", "1504650005316516", "1107550004253538")
DW_STATUS_PATHS = ((1, 2, 3, 4, 6), (2, 4, 6), (1, 3, 4, 5), (4, 5), (2, 3, 4, 6))


def _cst(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, _CST).isoformat(timespec="milliseconds")


def _utc_z(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def _kebab(name: str) -> str:
    return "".join("-" + c.lower() if c.isupper() else c for c in name).lstrip("-")


class _DwWorld:
    """Nodes, files and task instances; instance status walks a plausible path and finishes."""

    def __init__(self, rng: random.Random, clock: Callable[[], int], fc_budget: int) -> None:
        self.rng, self.clock, self.fc_budget = rng, clock, fc_budget
        self.instances = _Bag()  # (taskId, nodeId, dagId, path, step)
        self.nodes = _Bag()
        self.serial = 0
        self.pick_action = _weighted(
            rng,
            [
                (self._instance_status, 45),
                (self._node_change, 9),
                (self._file_change, 10),
                (self._instance_operation, 5),
                (self._dag_status, 5),
                (self._alert, 4),
                (self._dqc_finished, 6),
                (self._dq_rule, 3),
                (self._backfill, 1),
            ],
        )

    def records(self) -> Iterator[tuple[str, str | None]]:
        """(envelope line, FC message text or None) pairs in event-time order."""
        while True:
            yield self.pick_action()()

    def _pick(self, items: tuple):
        return items[int(self.rng.random() * len(items))]

    def _envelope(self, category: str, action: str, time: int, data: dict) -> str:
        rng = self.rng
        data["eventCode"] = data.get("eventCode") or _kebab(action)
        return _dumps(
            {
                "datacontenttype": "application/json;charset=utf-8",
                "data": data,
                "id": _uuid(rng),
                "source": "acs.dataworks",
                "specversion": "1.0",
                "subject": "",
                "time": _cst(time),
                "type": f"dataworks:{category}:{action}",
                "aliyunaccountid": "1493189603770213",
                "aliyunpublishtime": _utc_z(time + 50 + int(rng.random() * 900)),
                "aliyuneventbusname": "default",
                "aliyunregionid": "cn-hangzhou",
            }
        )

    def _base(self) -> dict:
        return {
            "tenantId": DW_TENANT,
            "projectId": self._pick(DW_PROJECTS),
            "operator": self._pick(DW_OPERATORS),
        }

    def _node_id(self) -> int:
        if not self.nodes or self.rng.random() < 0.1:
            self.serial += 1
            self.nodes.add(700_000_000 + self.serial)
        return self.nodes.pick(self.rng)

    def _instance_status(self) -> tuple[str, None]:
        rng, time = self.rng, self.clock()
        if not self.instances or rng.random() < 0.25:
            self.serial += 1
            path = self._pick(DW_STATUS_PATHS)
            instance = (
                453_000_000_000 + self.serial,
                self._node_id(),
                446_000_000 + self.serial // 20,
                path,
                0,
            )
        else:
            instance = self.instances.pick(rng)
            self.instances.discard(instance)
            instance = instance[:4] + (instance[4] + 1,)
        task_id, node_id, dag_id, path, step = instance
        if step + 1 < len(path):
            self.instances.add(instance)
        data = {
            "beginWaitTimeTime": time - 2000,
            "dagId": dag_id,
            "dagType": 0,
            "eventCode": "instance-status-changes",
            "taskType": 0,
            "modifyTime": time,
            "createTime": time - 86_400_000,
            "appId": self._pick(DW_PROJECTS),
            "tenantId": DW_TENANT,
            "opCode": 31,
            "flowId": 1,
            "nodeId": node_id,
            "taskId": task_id,
            "status": path[step],
        }
        if path[step] in (5, 6):
            data["finishTime"] = time
        return self._envelope("InstanceStatusChanges", "InstanceStatusChanges", time, data), None

    def _node_change(self) -> tuple[str, None]:
        time, node_id = self.clock(), self._node_id()
        action = self._pick(
            ("NodeChangeCreated", "NodeChangeUpdated", "NodeChangeUpdated", "NodeChangeDeleted")
        )
        data = {
            "nodeName": f"ods_{self._pick(TABLES)}_{node_id % 1000}",
            "programType": self._pick(("ODPS_SQL", "DI", "PYODPS3", "SHELL")),
            "cronExpress": "00 04 00 * * ?",
            "blockBusiness": False,
            "schedulerType": "NORMAL",
            "ownerId": self._pick(DW_OPERATORS),
            "priority": self._pick((1, 3, 5, 7, 8)),
            "repeatability": True,
            "modifyTime": time,
            "createTime": time - 3_600_000,
            "nodeId": node_id,
            **self._base(),
        }
        if action == "NodeChangeDeleted":
            self.nodes.discard(node_id)
        return self._envelope("NodeChange", action, time, data), None

    def _file_change(self) -> tuple[str, None]:
        time = self.clock()
        action = self._pick(("CommitFile", "DeployFile", "RunFile", "DeleteFile"))
        data = {
            "fileName": f"ods_{self._pick(TABLES)}",
            "extensionBizId": f"{self.rng.getrandbits(48):012x}",
            "changeType": self._pick(("0", "1", "1")),
            "blockBusiness": False,
            "fileCreateTime": _cst(time - 86_400_000)[:19].replace("T", " "),
            "fileOwner": self._pick(DW_OPERATORS),
            "fileVersion": 1 + int(self.rng.random() * 9),
            "fileType": 10,
            "fileId": 500_000_000 + int(self.rng.random() * 1_000_000),
            "nodeId": self._node_id(),
            **self._base(),
        }
        return self._envelope("FileChange", action, time, data), None

    def _instance_operation(self) -> tuple[str, None]:
        time = self.clock()
        action = self._pick(
            ("FreezeInstance", "UnfreezeInstance", "KillInstance", "RerunInstance", "SetInstanceSuccess")
        )
        data = {
            "projectType": "PROD",
            "taskIds": [523_000_000_000 + int(self.rng.random() * 1e9)],
            **self._base(),
        }
        return self._envelope("InstanceChange", action, time, data), None

    def _dag_status(self) -> tuple[str, None]:
        time = self.clock()
        day = _cst(time - 86_400_000)[:10]
        data = {
            "bizDate": f"{day} 00:00:00",
            "createTime": _cst(time)[:19].replace("T", " "),
            "dagId": 500_000_000_000 + int(self.rng.random() * 1e9),
            "dagName": f"P_backfill_{day.replace('-', '')}",
            "dagType": self._pick((0, 1, 3, 5)),
            "flowId": 1,
            "flowName": "ATCLOUD_FLOW",
            "projectEnv": "PROD",
            "status": self._pick((1, 4, 5, 6, 6)),
            **self._base(),
        }
        return self._envelope("DagStatusChanges", "DagStatusChanges", time, data), None

    def _alert(self) -> tuple[str, None]:
        time = self.clock()
        data = {
            "alarmType": "SLA_ALERT",
            "baselineId": 137_000_723,
            "baselineName": "ods hourly baseline",
            "baselineStatus": self._pick((-1, 1, 2, 3)),
            "bizDate": time - time % 86_400_000,
            "inGroupId": 1 + int(self.rng.random() * 24),
            "nodeId": self._node_id(),
            "taskId": 307_000_000_000 + int(self.rng.random() * 1e9),
            **self._base(),
        }
        return self._envelope("MonitorAlert", "WorkbenchMonitorAlert", time, data), None

    def _dqc_finished(self) -> tuple[str, None]:
        time = self.clock()
        stamp = _cst(time)[:19].replace("T", " ")
        data = {
            "id": 521_000_000 + int(self.rng.random() * 1e6),
            "taskId": f"{self.rng.getrandbits(64):016x}",
            "ruleId": 28_610_334 + int(self.rng.random() * 100),
            "property": "-",
            "bizdate": f"{_cst(time - 86_400_000)[:10]} 00:00:00",
            "dateType": "YMD",
            "blockType": self._pick((0, 1)),
            "checkResult": self._pick((-2, -1, 0, 0, 0, 1, 2)),
            "eventCode": "dqc-check-finished-event",
            "methodName": "table_count",
            "beginTime": stamp,
            "endTime": stamp,
            "projectName": "test_mc_project",
            "tableName": f"ods_{self._pick(TABLES)}",
            "ruleName": "row count above zero",
            **self._base(),
        }
        return self._envelope("DqcCheck", "DqcCheckFinishedEvent", time, data), None

    def _dq_rule(self) -> tuple[str, str | None]:
        """Data-quality rule pre-events carry operationTime, so they can travel as FC messages."""
        time, rng = self.clock(), self.rng
        action = self._pick(
            ("BatchCreateDataQualityRules", "UpdateDataQualityRule", "BatchDeleteDataQualityRules")
        )
        data = {"eventCode": _kebab(action), **self._base(), "operationTime": time}
        if action == "BatchDeleteDataQualityRules":
            data["ids"] = [100_000 + int(rng.random() * 1000)]
        else:
            data.update({"id": 100_001, "name": "row count above zero", "enabled": True, "severity": "High"})
        line = self._envelope("DqcCheck", action, time, data)
        fc = None
        if self.fc_budget > 0 and rng.random() < 0.5:
            self.fc_budget -= 1
            fc = _dumps(
                {
                    "blockBusiness": True,
                    "eventCategoryType": "dqc-check",
                    "eventType": data["eventCode"],
                    "extensionBizId": f"job_{rng.getrandbits(40):010x}",
                    "messageBody": data,
                    "messageId": _uuid(rng),
                }
            )
        return line, fc

    def _backfill(self) -> tuple[str, None]:
        time = self.clock()
        root = self._node_id()
        day = _cst(time)[:10]
        data = {
            "excludeNodeIds": [],
            "rootNodeId": root,
            "startFutureInstanceImmediately": False,
            "useMultipleTimePeriods": False,
            "parallelGroup": 1,
            "rootNodeProjectId": DW_PROJECTS[0],
            "isParallel": False,
            "name": f"P_{day.replace('-', '')}_{root % 10000}",
            "includeNodeIds": [root],
            "order": "asc",
            "extensionBizId": f"{self.rng.getrandbits(40):010x}",
            **self._base(),
        }
        return self._envelope("BackfillDataOperate", "BackfillData", time, data), None


# Driver ---------------------------------------------------------------------------------


def _drive(sink: _Sink, lines: Iterator[str]) -> int:
    for line in itertools.islice(lines, sink.plan.unique):
        sink.emit(line)
    return sink.close()


def _drive_dataworks(sink: _Sink, pairs: Iterator[tuple[str, str | None]]) -> int:
    for number, (line, fc) in enumerate(itertools.islice(pairs, sink.plan.unique)):
        if fc is None:
            sink.emit(line)
        else:
            sink.emit_document(f"fc/msg-{number:07d}.json", fc, line)
    return sink.close()


def generate(
    out_dir: str | Path, events: int, seed: int = 0, window: tuple[int, int] = (START_MS, END_MS)
) -> dict[str, int]:
    """Write `events` landing records split over the four sources under `out_dir`; returns records per source.

    Example: `generate("/tmp/landing", 100_000, seed=7)` -> `{"datahub_ece": 55000, ...}`.
    The same arguments always write byte-identical files. `window`: the (first, last) epoch ms
    of the event times, 2024-2025 by default; a later window makes a feed's next batch.
    """
    if events < 0:
        raise ValueError(f"events must be >= 0, got {events}")
    if window[1] < window[0]:
        raise ValueError(f"the time window ends before it starts: {window}")
    out = Path(out_dir)
    written: dict[str, int] = {}
    for number, (source, count) in enumerate(split_events(events).items()):
        rng = random.Random(seed * 1_000_003 + number)
        plan = plan_records(rng, count)
        clock = make_clock(rng, plan.unique, *window)
        folder = out / source
        if source == "datahub_ece":
            written[source] = _drive(_Sink(folder, plan, rng), _EceWorld(rng, clock, plan.unique).records())
        elif source == "datahub_audit":
            written[source] = _drive(_AuditSink(folder, plan, rng, seed), audit_records(rng, clock))
        elif source == "openmetadata":
            written[source] = _drive(_Sink(folder, plan, rng), _OmWorld(rng, clock).records())
        else:
            fc_budget = min(100, max(1, plan.unique // 100)) if plan.unique >= 20 else 0
            world = _DwWorld(rng, clock, fc_budget)
            written[source] = _drive_dataworks(_Sink(folder, plan, rng), world.records())
    return written


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of `lakehouse generate`."""
    parser.add_argument("--out", required=True, help="landing folder to write (one sub-folder per source)")
    parser.add_argument("--events", required=True, type=int, help="total records to write over all sources")
    parser.add_argument("--seed", type=int, default=0, help="random seed (same seed, same files)")
    parser.add_argument(
        "--start", type=_epoch_ms, default=START_MS, help="first event time, ISO (UTC); default 2024-01-01"
    )
    parser.add_argument(
        "--end", type=_epoch_ms, default=END_MS, help="last event time, ISO (UTC); default end of 2025"
    )


def _epoch_ms(text: str) -> int:
    """Epoch ms of an ISO date or time (UTC unless it names an offset)."""
    try:
        moment = datetime.fromisoformat(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(f"not an ISO date or time: {text!r}") from error
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return int(moment.timestamp() * 1000)


def main(args: argparse.Namespace) -> int:
    """Run `lakehouse generate`; prints records per source and returns the exit code."""
    counts = generate(args.out, args.events, args.seed, window=(args.start, args.end))
    for source, count in counts.items():
        print(f"{source}: {count} records")
    print(f"wrote {sum(counts.values())} records under {Path(args.out).resolve()}")
    return 0


if __name__ == "__main__":
    cli = argparse.ArgumentParser(prog="lakehouse generate", description=__doc__.splitlines()[0])
    add_arguments(cli)
    raise SystemExit(main(cli.parse_args()))
