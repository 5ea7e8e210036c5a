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

The other histories, each replayed the same way from its own landing files:
- status: DataHub LIFECYCLE CREATE / REINSTATE -> ACTIVE, SOFT_DELETE -> SOFT_DELETED,
  HARD_DELETE -> HARD_DELETED; OpenMetadata entityCreated / entityRestored,
  entitySoftDeleted, entityDeleted likewise (entity `openmetadata:<entityType>:<fqn>`);
  the latest event decides;
- deprecation: DEPRECATION with status (`parameters.status`, else the modifier)
  DEPRECATED deprecates, ACTIVE undoes it; a HARD_DELETE ends it;
- schema fields: TECHNICAL_SCHEMA ADD / REMOVE of a `fieldPath` (a MODIFY RENAME adds
  the new path and removes the old one the modifier names); OpenMetadata: the columns of
  entityCreated's `entity` and the `columns` fields added / deleted; a deletion of the
  dataset (HARD_DELETE, entityDeleted) removes them all;
- structured properties: ADD / MODIFY sets a property's values (the `propertyValues`
  list, as compact JSON), REMOVE unsets the property, a HARD_DELETE unsets everything;
- OpenMetadata versions: the distinct `currentVersion`s an entity's events carry;
- DataWorks task instances (`instance-status-changes`, keyed by `taskId`): the status of
  the latest event, by the payload's change time (`modifyTime`, else `finishTime` or
  `beginRunningTime`, milliseconds; else the envelope's `time`), then the envelope's `time`,
  then waiting before running before finished; 5 (FAILURE) and 6 (SUCCESS) finish a run.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from datetime import datetime, timezone
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


# Entity status, deprecation, schema fields, structured properties (DataHub ECE) -----------------

DATAHUB_STATUS = {
    "CREATE": "ACTIVE",
    "REINSTATE": "ACTIVE",
    "SOFT_DELETE": "SOFT_DELETED",
    "HARD_DELETE": "HARD_DELETED",
}
OPENMETADATA_STATUS = {
    "entityCreated": "ACTIVE",
    "entityRestored": "ACTIVE",
    "entitySoftDeleted": "SOFT_DELETED",
    "entityDeleted": "HARD_DELETED",
}
_SCHEMA_FIELD = "urn:li:schemaField:("


def _entity_events(landing_dir: str | Path) -> list[dict]:
    """The replay-ordered DataHub records about entities (proposals are another table's)."""
    return [e for e in load_events(landing_dir) if e.get("entityType") != "actionRequest"]


def _is_hard_delete(event: dict) -> bool:
    return event["category"] == "LIFECYCLE" and event["operation"] == "HARD_DELETE"


def _field_path_of(urn: object) -> str | None:
    """`<path>` of `urn:li:schemaField:(<dataset>,<path>)`."""
    if isinstance(urn, str) and urn.startswith(_SCHEMA_FIELD) and urn.endswith(")"):
        return urn[:-1].rsplit(",", 1)[1]
    return None


def _dataset_of(event: dict) -> str:
    """The dataset an event is about: its parent, the dataset of a schema field, else the entity."""
    parent = _parameters(event).get("parentUrn")
    urn = event["entityUrn"]
    if isinstance(parent, str):
        return parent
    if _field_path_of(urn) is not None:
        return urn[len(_SCHEMA_FIELD) : -1].rsplit(",", 1)[0]
    return urn


def _datahub_statuses(landing_dir: str | Path) -> dict[str, str]:
    status: dict[str, str] = {}
    for event in _entity_events(landing_dir):
        if event["category"] == "LIFECYCLE" and event["operation"] in DATAHUB_STATUS:
            status[event["entityUrn"]] = DATAHUB_STATUS[event["operation"]]
    return status


def expected_current_deprecations(landing_dir: str | Path) -> set[str]:
    """Entities gold.deprecation_timeline must show as deprecated now."""
    deprecated: set[str] = set()
    for event in _entity_events(landing_dir):
        if _is_hard_delete(event):
            deprecated.discard(event["entityUrn"])
        elif event["category"] == "DEPRECATION":
            status = _parameters(event).get("status") or event.get("modifier")
            if not isinstance(status, str):
                continue
            if status.upper() == "DEPRECATED":
                deprecated.add(event["entityUrn"])
            elif status.upper() == "ACTIVE":
                deprecated.discard(event["entityUrn"])
    return deprecated


def _datahub_schema_fields(landing_dir: str | Path) -> set[tuple[str, str]]:
    fields: set[tuple[str, str]] = set()
    for event in _entity_events(landing_dir):
        if _is_hard_delete(event):
            fields = {f for f in fields if f[0] != _dataset_of(event)}
            continue
        if event["category"] != "TECHNICAL_SCHEMA":
            continue
        params = _parameters(event)
        path = params.get("fieldPath") or _field_path_of(params.get("fieldUrn") or event.get("modifier"))
        if not isinstance(path, str):
            continue
        dataset, operation = _dataset_of(event), event["operation"]
        if operation == "ADD":
            fields.add((dataset, path))
        elif operation == "REMOVE":
            fields.discard((dataset, path))
        elif operation == "MODIFY" and params.get("modificationCategory") == "RENAME":
            old = _field_path_of(event.get("modifier"))
            if old is not None and old != path:
                fields.discard((dataset, old))
            fields.add((dataset, path))
    return fields


def _property_values(params: dict) -> str | None:
    """The values as gold keeps them: the JSON list, compact; None when not sent."""
    values = params.get("propertyValues")
    if isinstance(values, str):
        try:
            values = json.loads(values)
        except ValueError:
            return None
    if not isinstance(values, list):
        return None
    return json.dumps([str(v) for v in values], separators=(",", ":"), ensure_ascii=False)


def expected_current_structured_properties(landing_dir: str | Path) -> set[tuple[str, str, str | None]]:
    """(entity_urn, property_urn, property_values) gold.structured_property_timeline must show as current."""
    current: dict[tuple[str, str], str | None] = {}
    for event in _entity_events(landing_dir):
        if _is_hard_delete(event):
            current = {k: v for k, v in current.items() if not _belongs_to(k[0], event["entityUrn"])}
            continue
        if event["category"] != "STRUCTURED_PROPERTY":
            continue
        params = _parameters(event)
        prop = params.get("propertyUrn") or event.get("modifier")
        if not isinstance(prop, str):
            continue
        key = (event["entityUrn"], prop)
        if event["operation"] in ("ADD", "MODIFY"):
            current[key] = _property_values(params)
        elif event["operation"] == "REMOVE":
            current.pop(key, None)
    return {(entity, prop, values) for (entity, prop), values in current.items()}


# OpenMetadata change events -------------------------------------------------------------------


def load_openmetadata_events(landing_dir: str | Path) -> list[dict]:
    """OpenMetadata change events with an entity type, a name (fqn, else id) and an integer
    timestamp, under `<landing>/openmetadata`, in time order (exact repeats once)."""
    unique: dict[str, dict] = {}
    for path in landing_files(Path(landing_dir) / "openmetadata"):
        for record in iter_records(path):
            if not isinstance(record, dict):
                continue
            time = record.get("timestamp")
            named = record.get("entityFullyQualifiedName") or record.get("entityId")
            if isinstance(record.get("entityType"), str) and isinstance(named, str):
                if isinstance(time, int) and not isinstance(time, bool):
                    unique.setdefault(json.dumps(record, sort_keys=True), record)
    return [r for _, r in sorted(unique.items(), key=lambda item: (item[1]["timestamp"], item[0]))]


def openmetadata_entity(event: dict) -> str:
    """`openmetadata:<entityType>:<fqn, else id>`, the FQN the event's own or its entity's (an
    object, or its JSON text as the server sends it)."""
    entity = event.get("entity")
    if isinstance(entity, str):
        try:
            entity = json.loads(entity)
        except ValueError:
            entity = None
    named = entity.get("fullyQualifiedName") if isinstance(entity, dict) else None
    fqn = event.get("entityFullyQualifiedName") or (named if isinstance(named, str) else None)
    return f"openmetadata:{event['entityType']}:{fqn or event['entityId']}"


def _json_value(value: object) -> object:
    """A JSON value OpenMetadata may send as text."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return None
    return value


def _column_names(value: object) -> list[str]:
    columns = _json_value(value)
    if not isinstance(columns, list):
        return []
    return [c["name"] for c in columns if isinstance(c, dict) and isinstance(c.get("name"), str)]


def _openmetadata_schema_fields(landing_dir: str | Path) -> set[tuple[str, str]]:
    fields: set[tuple[str, str]] = set()
    for event in load_openmetadata_events(landing_dir):
        entity, kind = openmetadata_entity(event), event.get("eventType")
        if kind == "entityDeleted":
            fields = {f for f in fields if f[0] != entity}
            continue
        if kind == "entityCreated":
            created = _json_value(event.get("entity"))
            if isinstance(created, dict):
                fields |= {(entity, name) for name in _column_names(created.get("columns"))}
        change = event.get("incrementalChangeDescription") or event.get("changeDescription")
        if not isinstance(change, dict):
            continue
        for part, value, opens in (("fieldsAdded", "newValue", True), ("fieldsDeleted", "oldValue", False)):
            for item in change.get(part) or []:
                if isinstance(item, dict) and item.get("name") == "columns":
                    names = {(entity, name) for name in _column_names(item.get(value))}
                    fields = fields | names if opens else fields - names
    return fields


def _openmetadata_statuses(landing_dir: str | Path) -> dict[str, str]:
    status: dict[str, str] = {}
    for event in load_openmetadata_events(landing_dir):
        if event.get("eventType") in OPENMETADATA_STATUS:
            status[openmetadata_entity(event)] = OPENMETADATA_STATUS[event["eventType"]]
    return status


def expected_current_statuses(landing_dir: str | Path) -> set[tuple[str, str, str]]:
    """(source, entity_urn, status) gold.entity_status_timeline must show as current."""
    return {("datahub", e, s) for e, s in _datahub_statuses(landing_dir).items()} | {
        ("openmetadata", e, s) for e, s in _openmetadata_statuses(landing_dir).items()
    }


def expected_current_schema_fields(landing_dir: str | Path) -> set[tuple[str, str, str]]:
    """(source, dataset_urn, field_path) gold.schema_field_timeline must show as current."""
    return {("datahub", d, f) for d, f in _datahub_schema_fields(landing_dir)} | {
        ("openmetadata", d, f) for d, f in _openmetadata_schema_fields(landing_dir)
    }


def expected_entity_version_counts(landing_dir: str | Path) -> dict[str, int]:
    """entity -> how many versions gold.entity_versions must hold for it (distinct `currentVersion`)."""
    versions: dict[str, set[float]] = {}
    for event in load_openmetadata_events(landing_dir):
        version = event.get("currentVersion")
        if isinstance(version, (int, float)) and not isinstance(version, bool):
            versions.setdefault(openmetadata_entity(event), set()).add(float(version))
    return {entity: len(found) for entity, found in versions.items()}


# DataWorks task instances -------------------------------------------------------------------

INSTANCE_STATUS_EVENT = "instance-status-changes"
FAILURE, SUCCESS = 5, 6


def _instance_events(landing_dir: str | Path) -> list[tuple[datetime, str, dict]]:
    """(time, canonical JSON, data) of every instance status change under `<landing>/dataworks`."""
    unique: dict[str, tuple[datetime, dict]] = {}
    for path in landing_files(Path(landing_dir) / "dataworks"):
        for record in iter_records(path):
            if not isinstance(record, dict) or not isinstance(record.get("data"), dict):
                continue
            data = record["data"]
            if data.get("eventCode") != INSTANCE_STATUS_EVENT or not isinstance(record.get("time"), str):
                continue
            if not isinstance(data.get("taskId"), int) or not isinstance(data.get("status"), int):
                continue
            text = json.dumps(record, sort_keys=True)
            unique.setdefault(text, (datetime.fromisoformat(record["time"]), data))
    return sorted(((time, text, data) for text, (time, data) in unique.items()), key=_run_order)


def _run_order(event: tuple[datetime, str, dict]) -> tuple:
    time, text, data = event
    changed = next(
        (data[f] for f in ("modifyTime", "finishTime", "beginRunningTime") if isinstance(data.get(f), int)),
        None,
    )
    changed_at = datetime.fromtimestamp(changed / 1000, timezone.utc) if changed is not None else time
    lifecycle = 2 if data["status"] in (FAILURE, SUCCESS) else 0 if data["status"] in (1, 2, 3) else 1
    return (changed_at, time, lifecycle, text)


def expected_instance_final_statuses(landing_dir: str | Path) -> dict[int, tuple[int | None, int]]:
    """task id -> (node id, status code of its latest event): gold.dataworks_instance_runs' final status."""
    final: dict[int, tuple[int | None, int]] = {}
    for _, _, data in _instance_events(landing_dir):
        final[data["taskId"]] = (data.get("nodeId"), data["status"])
    return final


def expected_finished_runs_per_node(landing_dir: str | Path) -> dict[int, tuple[int, int]]:
    """node id -> (finished runs, failed runs) over every day of gold.dataworks_node_reliability_daily."""
    runs: dict[int, tuple[int, int]] = {}
    for node, status in expected_instance_final_statuses(landing_dir).values():
        if node is None or status not in (FAILURE, SUCCESS):
            continue
        finished, failed = runs.get(node, (0, 0))
        runs[node] = (finished + 1, failed + (status == FAILURE))
    return runs
