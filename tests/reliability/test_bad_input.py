"""Hostile landing files: nothing crashes, nothing is lost, every bad record is quarantined for its reason.

The corpus is generated here (it holds invalid bytes and a 10 MB line): for each source, one
JSON Lines file of records that are each wrong in one way, plus file-level oddities (a BOM,
CRLF line ends, an empty file, an empty array, the same file again under a new name). Every
record carries a `_case` marker in its text so its bronze rows can be followed into silver or
silver.quarantine. Bronze and silver run once over the whole corpus.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from pipelines.core.graph import load_graph
from pipelines.orchestration.runner import run_pipeline
from pipelines.store import TableStore, open_store
from tests.support.runs import SOURCES

pytestmark = pytest.mark.slow

DROP = object()  # as a value in an override: remove the key
BIG = 10 * 1024 * 1024
MARCH_2024_MS = 1709280000000
BRONZE = {
    "datahub_ece": "bronze.datahub_entity_change_events",
    "datahub_audit": "bronze.datahub_audit_events",
    "openmetadata": "bronze.openmetadata_change_events",
    "dataworks": "bronze.dataworks_events",
}


@dataclass(frozen=True)
class Kept:
    """The record lands in `table` (once), with these column values."""

    table: str
    values: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Quarantined:
    """The record lands in silver.quarantine, `failed_checks` holding at least these names."""

    checks: frozenset[str]


def _merged(base: dict, override: dict) -> dict:
    record = dict(base)
    for key, value in override.items():
        if value is DROP:
            record.pop(key, None)
        elif isinstance(value, dict) and isinstance(record.get(key), dict):
            record[key] = _merged(record[key], value)
        else:
            record[key] = value
    return record


def _line(record: dict) -> bytes:
    return json.dumps(record, separators=(",", ":")).encode()


def _broken_lines(source: str) -> dict[str, tuple[bytes, Quarantined]]:
    """Lines bronze cannot read as a JSON object, each with the marker in its text."""
    return {
        f"{source}_truncated": (
            b'{"_case":"' + source.encode() + b'_truncated","entityUrn":"urn:li:x',
            Quarantined(frozenset({"bronze_corrupt:malformed JSON"})),
        ),
        f"{source}_not_json": (
            b'<html>"_case":"' + source.encode() + b'_not_json" 502 Bad Gateway</html>',
            Quarantined(frozenset({"bronze_corrupt:not a JSON object"})),
        ),
        f"{source}_invalid_utf8": (
            b'{"_case":"' + source.encode() + b'_invalid_utf8","x":"\xff\xfe\xc3"}',
            Quarantined(frozenset({"bronze_corrupt:invalid UTF-8"})),
        ),
    }


# --- per-source records, each wrong in one way ------------------------------------------------


def _ece_cases() -> dict[str, tuple[dict, object]]:
    table = "silver.datahub_entity_changes"
    base = {
        "entityType": "dataset",
        "category": "TAG",
        "operation": "ADD",
        "modifier": "urn:li:tag:t",
        "parameters": {"tagUrn": "urn:li:tag:t"},
        "auditStamp": {"actor": "urn:li:corpuser:tester", "time": MARCH_2024_MS},
        "version": 0,
    }
    schema_field = {
        "category": "TECHNICAL_SCHEMA",
        "parameters": {"fieldUrn": "urn:li:schemaField:(urn:li:dataset:x,f)", "fieldPath": "f"},
    }
    cases = {
        "ece_ok": ({}, Kept(table, {"event_time_unit": "milliseconds"})),
        "ece_time_yesterday": (
            {"auditStamp": {"time": "yesterday"}},
            Quarantined(frozenset({"cast:auditStamp.time"})),
        ),
        "ece_audit_stamp_text": ({"auditStamp": "now"}, Quarantined(frozenset({"cast:auditStamp"}))),
        "ece_version_text": ({"version": "v1"}, Quarantined(frozenset({"cast:version"}))),
        "ece_parameters_list": ({"parameters": ["tagUrn"]}, Quarantined(frozenset({"cast:parameters"}))),
        "ece_nullable_maybe": (
            _merged(schema_field, {"parameters": {"nullable": "maybe"}}),
            Quarantined(frozenset({"cast:parameters.nullable"})),
        ),
        "ece_nullable_false": (
            _merged(schema_field, {"parameters": {"nullable": False}}),
            Kept(table, {"nullable": False}),
        ),
        "ece_property_values_text": (
            {
                "category": "STRUCTURED_PROPERTY",
                "parameters": {"propertyUrn": "urn:li:structuredProperty:p", "propertyValues": "value1"},
            },
            Quarantined(frozenset({"cast:parameters.propertyValues"})),
        ),
        "ece_property_values_object": (
            {
                "category": "STRUCTURED_PROPERTY",
                "parameters": {"propertyUrn": "urn:li:structuredProperty:p", "propertyValues": {"v": 1}},
            },
            Quarantined(frozenset({"cast:parameters.propertyValues"})),
        ),
        "ece_unknown_category": ({"category": "DATA_CONTRACT"}, Kept(table, {"category": "DATA_CONTRACT"})),
        "ece_unknown_operation": ({"operation": "TRANSMOGRIFY"}, Kept(table, {"operation": "TRANSMOGRIFY"})),
        "ece_no_entity_urn": ({"entityUrn": DROP}, Quarantined(frozenset({"entity_urn_present"}))),
        "ece_no_audit_stamp": (
            {"auditStamp": DROP},
            Quarantined(frozenset({"actor_present", "event_time_present"})),
        ),
        "ece_time_in_seconds": (
            {"auditStamp": {"time": MARCH_2024_MS // 1000}},
            Kept(table, {"event_time_unit": "seconds", "event_date": "2024-03-01"}),
        ),
        "ece_time_far_future": (
            {"auditStamp": {"time": 32503680000000}},  # year 3000
            Quarantined(frozenset({"event_time_plausible"})),
        ),
        "ece_time_negative": (
            {"auditStamp": {"time": -1}},
            Quarantined(frozenset({"event_time_plausible"})),
        ),
        "ece_time_beyond_timestamps": (
            {"auditStamp": {"time": 9_000_000_000_000_000_000}},
            Quarantined(frozenset({"cast:auditStamp.time"})),
        ),
        "ece_deep_but_parseable": (
            {"parameters": {"context": _nested(200)}},
            Kept(table, {"event_time_unit": "milliseconds"}),
        ),
        "ece_ten_megabytes": (
            {
                "category": "DOCUMENTATION",
                "modifier": DROP,
                "parameters": {"description": "d" * BIG},
            },
            Kept(table, {"category": "DOCUMENTATION"}),
        ),
    }
    records = {}
    for n, (name, (override, expected)) in enumerate(cases.items()):
        record = _merged(
            {"entityUrn": f"urn:li:dataset:(urn:li:dataPlatform:hive,bad.t{n},PROD)", **base}, override
        )
        records[name] = ({"_case": name, **record}, expected)
    return records


def _nested(depth: int) -> dict:
    value: dict = {"leaf": 1}
    for _ in range(depth):
        value = {"n": value}
    return value


def _audit_cases() -> dict[str, tuple[dict, object]]:
    table = "silver.datahub_audit_events"
    base = {
        "eventType": "LogInEvent",
        "timestamp": MARCH_2024_MS,
        "actorUrn": "urn:li:corpuser:tester",
        "sourceIP": "198.51.100.7",
        "eventSource": "GRAPHQL",
        "loginSource": "PASSWORD_LOGIN",
    }
    cases = {
        "audit_ok": ({}, Kept(table, {"event_time_unit": "milliseconds"})),
        "audit_time_yesterday": ({"timestamp": "yesterday"}, Quarantined(frozenset({"cast:timestamp"}))),
        "audit_time_object": ({"timestamp": {"ms": 1}}, Quarantined(frozenset({"cast:timestamp"}))),
        "audit_no_actor": ({"actorUrn": DROP}, Quarantined(frozenset({"actor_present"}))),
        "audit_no_event_type": ({"eventType": DROP}, Quarantined(frozenset({"event_type_present"}))),
        "audit_unknown_event_type": (
            {"eventType": "TeleportEvent"},
            Kept(table, {"event_type": "TeleportEvent"}),
        ),
        "audit_time_in_seconds": (
            {"timestamp": MARCH_2024_MS // 1000},
            Kept(table, {"event_time_unit": "seconds", "event_date": "2024-03-01"}),
        ),
        "audit_time_far_future": (
            {"timestamp": 32503680000000},
            Quarantined(frozenset({"event_time_plausible"})),
        ),
        "audit_time_negative": ({"timestamp": -5}, Quarantined(frozenset({"event_time_plausible"}))),
    }
    return {
        name: ({"_case": name, **_merged({**base, "telemetryTraceId": name}, override)}, expected)
        for name, (override, expected) in cases.items()
    }


def _openmetadata_cases() -> dict[str, tuple[dict, object]]:
    table = "silver.openmetadata_change_events"
    base = {
        "eventType": "entityUpdated",
        "entityType": "table",
        "entityFullyQualifiedName": "svc.db.schema.bad",
        "previousVersion": 0.1,
        "currentVersion": 0.2,
        "userName": "tester",
        "timestamp": MARCH_2024_MS,
        "changeDescription": {"fieldsAdded": [], "fieldsUpdated": [], "fieldsDeleted": []},
    }
    cases = {
        "om_ok": ({}, Kept(table, {"event_time_unit": "milliseconds"})),
        "om_time_yesterday": ({"timestamp": "yesterday"}, Quarantined(frozenset({"cast:timestamp"}))),
        "om_version_text": ({"currentVersion": "v2"}, Quarantined(frozenset({"cast:currentVersion"}))),
        "om_no_entity": (
            {"entityType": DROP, "entityFullyQualifiedName": DROP},
            Quarantined(frozenset({"entity_key_present"})),
        ),
        "om_no_event_type": ({"eventType": DROP}, Quarantined(frozenset({"event_type_present"}))),
        "om_unknown_event_type": (
            {"eventType": "entityTeleported"},
            Kept(table, {"event_type": "entityTeleported"}),
        ),
        "om_time_in_seconds": (
            {"timestamp": MARCH_2024_MS // 1000},
            Kept(table, {"event_time_unit": "seconds", "event_date": "2024-03-01"}),
        ),
        "om_time_far_future": (
            {"timestamp": 32503680000000},
            Quarantined(frozenset({"event_time_in_range"})),
        ),
        "om_time_negative": ({"timestamp": -5}, Quarantined(frozenset({"event_time_in_range"}))),
    }
    return {
        name: (
            {"_case": name, "id": f"00000000-0000-4000-8000-{n:012d}", **_merged(base, override)},
            expected,
        )
        for n, (name, (override, expected)) in enumerate(cases.items())
    }


def _dataworks_cases() -> dict[str, tuple[dict, object]]:
    table = "silver.dataworks_events"
    base = {
        "id": None,
        "source": "acs.dataworks",
        "specversion": "1.0",
        "type": "dataworks:NodeChange:NodeChangeCreated",
        "time": "2024-07-12T11:08:00+08:00",
        "data": {
            "eventCode": "node-change-created",
            "tenantId": 283789910656,
            "projectId": 91234,
            "operator": "1904567812345735",
            "nodeId": 700012003,
            "nodeName": "n",
        },
    }
    cases = {
        "dw_ok": ({}, Kept(table, {"event_code": "node-change-created"})),
        "dw_project_masked": (
            {"data": {"projectId": "9***4"}},
            Quarantined(frozenset({"cast:data.projectId"})),
        ),
        "dw_tenant_text": ({"data": {"tenantId": "acme"}}, Quarantined(frozenset({"cast:data.tenantId"}))),
        "dw_time_yesterday": ({"time": "yesterday"}, Quarantined(frozenset({"cast:time"}))),
        "dw_unknown_event_code": (
            {"type": "dataworks:Teleport:TeleportNode", "data": {"eventCode": "teleport-node"}},
            Kept(table, {"event_code": "teleport-node"}),
        ),
        "dw_no_event_code": (
            {"type": DROP, "data": {"eventCode": DROP}},
            Quarantined(frozenset({"event_code_present"})),
        ),
        "dw_time_far_future": (
            {"time": "3000-01-01T00:00:00Z"},
            Quarantined(frozenset({"event_time_in_range"})),
        ),
        "dw_time_before_2000": (
            {"time": "1969-12-31T23:59:59Z"},
            Quarantined(frozenset({"event_time_in_range"})),
        ),
    }
    return {
        name: (
            {"_case": name, **_merged(base, {"id": f"539fd8f4-bad0-4000-8000-{n:012d}", **override})},
            expected,
        )
        for n, (name, (override, expected)) in enumerate(cases.items())
    }


CASES = {
    "datahub_ece": _ece_cases,
    "datahub_audit": _audit_cases,
    "openmetadata": _openmetadata_cases,
    "dataworks": _dataworks_cases,
}
HEALTHY = {
    "datahub_ece": "ece_ok",
    "datahub_audit": "audit_ok",
    "openmetadata": "om_ok",
    "dataworks": "dw_ok",
}


@dataclass
class Corpus:
    landing: Path
    records: dict[str, int]  # source -> records landed
    expected: dict[str, tuple[str, object]]  # marker -> (source, Kept | Quarantined)
    copies: dict[str, int]  # marker -> bronze rows expected (2 for records landed twice)


def _write_corpus(landing: Path) -> Corpus:
    records: dict[str, int] = {}
    expected: dict[str, tuple[str, object]] = {}
    copies: dict[str, int] = {}
    for source, build in CASES.items():
        folder = landing / source
        folder.mkdir(parents=True)
        cases = build()
        broken = _broken_lines(source)
        lines = [_line(record) for record, _ in cases.values()]
        lines[1:1] = [b"", b"   "]  # blank lines are not records
        lines += [line for line, _ in broken.values()]
        (folder / "bad_records.jsonl").write_bytes(b"\n".join(lines) + b"\n")
        expected.update({name: (source, outcome) for name, (_r, outcome) in cases.items()})
        expected.update({name: (source, outcome) for name, (_l, outcome) in broken.items()})
        count = len(cases) + len(broken)

        healthy, kept = cases[HEALTHY[source]]
        for variant in ("bom", "crlf_1", "crlf_2", "dup_1", "dup_2"):
            marker = f"{source}_{variant}"
            expected[marker] = (source, kept)
        bom = _variant(healthy, f"{source}_bom")
        (folder / "bom.jsonl").write_bytes(b"\xef\xbb\xbf" + _line(bom) + b"\n")
        crlf = [_line(_variant(healthy, f"{source}_crlf_{i}")) for i in (1, 2)]
        (folder / "crlf.jsonl").write_bytes(b"\r\n".join(crlf) + b"\r\n")
        dup = [_variant(healthy, f"{source}_dup_{i}") for i in (1, 2)]
        (folder / "first.json").write_text(json.dumps(dup, indent=2))
        (folder / "first_renamed.json").write_text(json.dumps(dup, indent=2))  # same file, new name
        (folder / "empty.jsonl").write_bytes(b"")
        (folder / "empty_array.json").write_text("[]")
        (folder / "whitespace.jsonl").write_text("\n \r\n\t\n")
        copies.update({f"{source}_dup_{i}": 2 for i in (1, 2)})
        records[source] = count + 1 + 2 + 2 * len(dup)

    page = {"nextScrollId": None, "count": 0, "total": 0, "usageEvents": []}
    (landing / "datahub_audit" / "empty_page.json").write_text(json.dumps(page))
    return Corpus(landing, records, expected, copies)


def _variant(record: dict, marker: str) -> dict:
    """The healthy record as a distinct event (its own id / entity / trace) under a new marker."""
    changed = {**record, "_case": marker}
    if "entityUrn" in changed:
        changed["entityUrn"] = f"urn:li:dataset:(urn:li:dataPlatform:hive,{marker},PROD)"
    if "telemetryTraceId" in changed:
        changed["telemetryTraceId"] = marker
    if "entityFullyQualifiedName" in changed:
        changed["entityFullyQualifiedName"] = f"svc.db.schema.{marker}"
    if "id" in changed:
        changed["id"] = f"id-{marker}"
    return changed


@dataclass
class Landed:
    corpus: Corpus
    store: TableStore
    outcomes: DataFrame  # one row per bronze row: source, marker, silver_table, failed_checks


def _reconciled_tables() -> dict[str, list[str]]:
    """source -> the silver tables that account for its bronze rows (per the task graph)."""
    tables: dict[str, list[str]] = {}
    for task in load_graph().tasks:
        if task.layer == "silver":
            spec = task.spec()
            if spec.reconciles:
                tables.setdefault(spec.reconciles, []).append(spec.table)
    return tables


@pytest.fixture(scope="module")
def landed(config, spark, tmp_path_factory) -> Iterator[Landed]:
    root = tmp_path_factory.mktemp("bad_input")
    corpus = _write_corpus(root / "landing")
    settings = config.with_overrides(landing=str(corpus.landing), warehouse=str(root / "warehouse"))
    run_pipeline(settings, ("bronze", "silver"), spark=spark)
    store = open_store(spark, settings.warehouse, "delta-rs")
    marker = F.regexp_extract("raw", r'"_case":"([a-z0-9_]+)"', 1)
    frames = []
    quarantine = store.read("silver.quarantine")
    for source, silver_tables in _reconciled_tables().items():
        bronze = store.read(BRONZE[source]).select(
            F.lit(source).alias("source"), marker.alias("marker"), "source_file", "record_index"
        )
        landed_in = [
            store.read(t).select("source_file", "record_index", F.lit(t).alias("silver_table"))
            for t in silver_tables
            if store.exists(t)
        ]
        silver = landed_in[0]
        for other in landed_in[1:]:
            silver = silver.unionByName(other)
        held = quarantine.where(F.col("source_table").isin(silver_tables)).select(
            "source_file", "record_index", "failed_checks", F.col("source_table").alias("quarantined_from")
        )
        frames.append(
            bronze.join(silver, ["source_file", "record_index"], "left").join(
                held, ["source_file", "record_index"], "left"
            )
        )
    outcomes = frames[0]
    for frame in frames[1:]:
        outcomes = outcomes.unionByName(frame)
    yield Landed(corpus, store, outcomes.persist())
    outcomes.unpersist()


def test_every_landed_record_is_in_bronze(landed: Landed):
    for source in SOURCES:
        assert landed.store.read(BRONZE[source]).count() == landed.corpus.records[source], source


def test_every_bronze_row_ends_in_silver_quarantine_or_as_a_counted_duplicate(landed: Landed):
    rows = landed.outcomes
    both = rows.where(F.col("silver_table").isNotNull() & F.col("failed_checks").isNotNull())
    assert both.count() == 0, both.collect()[:3]
    assert rows.groupBy("source", "source_file", "record_index").count().where("count > 1").count() == 0
    runs = landed.store.read("ops.runs").where(F.col("reconciles").isNotNull())
    assert runs.where(F.col("status") != "SUCCESS").count() == 0
    totals = {
        r.reconciles: r
        for r in runs.groupBy("reconciles")
        .agg(*[F.sum(c).alias(c) for c in ("rows_in", "rows_out", "rows_quarantined", "rows_duplicate")])
        .collect()
    }
    for source in SOURCES:
        mine = rows.where(F.col("source") == source)
        run = totals[source]
        assert run.rows_in == run.rows_out + run.rows_quarantined + run.rows_duplicate, source
        assert run.rows_in == landed.store.read(BRONZE[source]).count(), source
        assert mine.where(F.col("silver_table").isNotNull()).count() == run.rows_out, source
        assert mine.where(F.col("failed_checks").isNotNull()).count() == run.rows_quarantined, source
        unaccounted = mine.where(F.col("silver_table").isNull() & F.col("failed_checks").isNull())
        assert unaccounted.count() == run.rows_duplicate == 2, (source, unaccounted.collect())


def test_every_quarantined_row_names_a_reason(landed: Landed):
    held = landed.store.read("silver.quarantine")
    assert held.where(F.col("failed_checks").isNull() | (F.size("failed_checks") == 0)).count() == 0
    assert held.where(F.col("raw").isNull() & F.col("source_file").isNull()).count() == 0


def test_each_bad_record_has_its_expected_outcome(landed: Landed):
    found: dict[str, list] = {}
    for row in landed.outcomes.where(F.col("marker") != "").collect():
        found.setdefault(row.marker, []).append(row)
    problems = []
    for marker, (_source, expected) in landed.corpus.expected.items():
        rows = found.get(marker, [])
        if len(rows) != landed.corpus.copies.get(marker, 1):
            problems.append(f"{marker}: {len(rows)} bronze rows")
            continue
        kept = [r for r in rows if r.silver_table]
        if isinstance(expected, Quarantined):
            checks = set(rows[0].failed_checks or [])
            if kept or not expected.checks <= checks:
                problems.append(
                    f"{marker}: expected quarantine with {sorted(expected.checks)}, got {rows[0]}"
                )
        elif len(kept) != 1 or kept[0].silver_table != expected.table:
            problems.append(f"{marker}: expected one row in {expected.table}, got {rows}")
    assert not problems, "\n".join(problems)


def test_kept_records_are_typed_as_expected(landed: Landed):
    problems = []
    for marker, (_source, expected) in landed.corpus.expected.items():
        if not isinstance(expected, Kept) or not expected.values:
            continue
        row = (
            landed.store.read(expected.table)
            .where(F.col("raw").contains(f'"_case":"{marker}"'))
            .select(*[F.col(c).cast("string").alias(c) for c in expected.values])
            .first()
        )
        got = None if row is None else row.asDict()
        if got != {k: str(v).lower() if isinstance(v, bool) else str(v) for k, v in expected.values.items()}:
            problems.append(f"{marker}: expected {expected.values}, got {got}")
    assert not problems, "\n".join(problems)


def test_the_ten_megabyte_record_survives_whole(landed: Landed):
    row = (
        landed.store.read("silver.datahub_entity_changes")
        .where(F.col("raw").contains('"_case":"ece_ten_megabytes"'))
        .select(F.length("description").alias("chars"))
        .first()
    )
    assert row is not None and row.chars == BIG


def test_nesting_beyond_the_parser_limit_is_quarantined_not_fatal(config, spark, tmp_path):
    """3000 levels: Python's json and Spark's parser both give up; bronze keeps it as a corrupt record."""
    landing = tmp_path / "landing"
    for source in SOURCES:
        (landing / source).mkdir(parents=True)
    deep = {
        "_case": "ece_deep",
        "entityUrn": "urn:li:dataset:(urn:li:dataPlatform:hive,deep,PROD)",
        "category": "TAG",
        "operation": "ADD",
        "auditStamp": {"actor": "urn:li:corpuser:tester", "time": MARCH_2024_MS},
    }
    text = (
        json.dumps(deep, separators=(",", ":"))[:-1]
        + ',"parameters":{"context":'
        + '{"n":' * 3000
        + "1"
        + "}" * 3001
        + "}"
    )
    ok = json.dumps(
        {**deep, "_case": "ece_shallow", "entityUrn": "urn:li:dataset:(urn:li:dataPlatform:hive,ok,PROD)"}
    )
    (landing / "datahub_ece" / "deep.jsonl").write_text(ok + "\n" + text + "\n")
    settings = config.with_overrides(landing=str(landing), warehouse=str(tmp_path / "w"))
    run_pipeline(settings, ("bronze", "silver"), spark=spark)
    store = open_store(spark, settings.warehouse, "delta-rs")
    held = store.read("silver.quarantine").where(F.col("raw").contains('"_case":"ece_deep"')).collect()
    assert len(held) == 1 and any(c.startswith("bronze_corrupt:") for c in held[0].failed_checks)
    assert store.read("silver.datahub_entity_changes").count() == 1
