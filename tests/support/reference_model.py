"""Plain-Python oracle of the current gold tag and ownership state, from DataHub ECE landing files only.

Why: the Spark gold jobs are checked against an independent, obviously-right model
of the contract's timeline rules instead of against themselves:
- events are replayed in event time (`auditStamp.time`); ties are broken by
  operation (ADD, then REMOVE, then HARD_DELETE) and then by the record's
  canonical JSON, so the order of files never matters;
- an exact repeat of a record (entity, category, operation, modifier,
  parameters, actor, time) counts once;
- ADD of an open association and REMOVE of a closed one change nothing;
- LIFECYCLE HARD_DELETE closes every association of the entity and of its
  schema fields `urn:li:schemaField:(<entity>,<path>)`;
- OWNER and OWNERSHIP are one category; owners are keyed by (entity, owner, type).
Field-level associations are keyed by the schemaField urn (the event's entityUrn).
Records that are not JSON objects, or lack a urn, category, operation or an
integer time, are skipped. Only current state is modelled, and simply (meant
for test-sized landing folders): the bundled samples and the generator never
let a tie decide it.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from pathlib import Path

OWNER_CATEGORIES = ("OWNER", "OWNERSHIP")
_OPERATION_RANK = {"ADD": 0, "REMOVE": 1, "HARD_DELETE": 2}


def read_text(path: Path) -> str:
    """A landing file's text (gunzipped when the name ends in .gz)."""
    data = path.read_bytes()
    if path.name.endswith(".gz"):
        data = gzip.decompress(data)
    return data.decode("utf-8", errors="replace")


def iter_records(path: Path) -> Iterator[object]:
    """Every record of one landing file, parsed; a malformed record yields its raw text instead.

    A file is one JSON document (a record, an array of records, an audit search
    page whose `usageEvents` are the records, or a DataWorks FC message whose
    `messageBody` is the record) or else JSON Lines, where blank lines are not records.
    """
    text = read_text(path)
    try:
        document = json.loads(text)
    except ValueError:
        document = None
    if document is not None:
        if isinstance(document, list):
            yield from document
        elif isinstance(document, dict) and isinstance(document.get("usageEvents"), list):
            yield from document["usageEvents"]
        elif isinstance(document, dict) and "messageBody" in document:
            yield document["messageBody"]
        else:
            yield document
        return
    for line in text.splitlines():
        if not line.strip():
            continue
        try:
            yield json.loads(line)
        except ValueError:
            yield line


def landing_files(folder: Path) -> list[Path]:
    """Data files under a folder, recursively, in a fixed order (hidden files skipped)."""
    return sorted(p for p in folder.rglob("*") if p.is_file() and not p.name.startswith((".", "_")))


def _valid_event(record: object) -> bool:
    if not isinstance(record, dict):
        return False
    stamp = record.get("auditStamp")
    time = stamp.get("time") if isinstance(stamp, dict) else None
    return (
        isinstance(record.get("entityUrn"), str)
        and isinstance(record.get("category"), str)
        and isinstance(record.get("operation"), str)
        and isinstance(time, int)
        and not isinstance(time, bool)
    )


def _identity(record: dict) -> str:
    """What makes two records the same event (rule 2), as canonical JSON."""
    return json.dumps(
        [
            record["entityUrn"],
            record["category"],
            record["operation"],
            record.get("modifier"),
            record.get("parameters"),
            record["auditStamp"].get("actor"),
            record["auditStamp"]["time"],
        ],
        sort_keys=True,
    )


def load_events(landing_dir: str | Path) -> list[dict]:
    """Valid, de-duplicated DataHub ECE records under `<landing>/datahub_ece`, in replay order."""
    unique: dict[str, dict] = {}
    for path in landing_files(Path(landing_dir) / "datahub_ece"):
        for record in iter_records(path):
            if _valid_event(record):
                unique.setdefault(_identity(record), record)
    ordered = sorted(
        unique.items(),
        key=lambda item: (
            item[1]["auditStamp"]["time"],
            _OPERATION_RANK.get(item[1]["operation"], 3),
            item[0],
        ),
    )
    return [record for _, record in ordered]


def _belongs_to(entity: str, deleted: str) -> bool:
    """True for the deleted entity itself and for its schema fields."""
    return entity == deleted or entity.startswith(f"urn:li:schemaField:({deleted},")


def _replay(landing_dir: str | Path, key_of) -> set[tuple]:
    """Open associations after replaying every event; `key_of(event)` names an event's association or None."""
    current: set[tuple] = set()
    for event in load_events(landing_dir):
        if event.get("entityType") == "actionRequest":
            continue
        if event["category"] == "LIFECYCLE" and event["operation"] == "HARD_DELETE":
            current = {key for key in current if not _belongs_to(key[0], event["entityUrn"])}
            continue
        key = key_of(event)
        if key is None:
            continue
        if event["operation"] == "ADD":
            current.add(key)
        elif event["operation"] == "REMOVE":
            current.discard(key)
    return current


def _parameters(event: dict) -> dict:
    params = event.get("parameters")
    return params if isinstance(params, dict) else {}


def _tag_key(event: dict) -> tuple | None:
    if event["category"] != "TAG":
        return None
    tag = _parameters(event).get("tagUrn") or event.get("modifier")
    return (event["entityUrn"], tag) if tag else None


def _owner_key(event: dict) -> tuple | None:
    if event["category"] not in OWNER_CATEGORIES:
        return None
    params = _parameters(event)
    owner = params.get("ownerUrn") or event.get("modifier")
    return (event["entityUrn"], owner, params.get("ownerType")) if owner else None


def expected_current_tags(landing_dir: str | Path) -> set[tuple[str, str]]:
    """(entity_urn, tag_urn) pairs that gold.tag_timeline must show as current (source datahub)."""
    return _replay(landing_dir, _tag_key)


def expected_current_owners(landing_dir: str | Path) -> set[tuple[str, str, str]]:
    """(entity_urn, owner_urn, owner_type) triples that gold.ownership_timeline must show as current."""
    return _replay(landing_dir, _owner_key)
