"""The synthetic generator, the bundled samples and the reference model (pure Python, no Spark)."""

from __future__ import annotations

import argparse
import datetime as dt
import gzip
import json
import re
from collections import Counter
from pathlib import Path

import pytest

from pipelines.core.config import PROJECT_ROOT
from pipelines.synthetic import common
from pipelines.synthetic import generator as gen
from pipelines.synthetic.arguments import add_arguments
from pipelines.synthetic.common import END_MS, OWNER_TYPES, START_MS, split_events
from pipelines.synthetic.datahub import AUDIT_TYPES
from tests.support import FIXTURES
from tests.support.reference_model import (
    expected_current_deprecations,
    expected_current_owners,
    expected_current_schema_fields,
    expected_current_statuses,
    expected_current_structured_properties,
    expected_current_tags,
    expected_entity_version_counts,
    expected_finished_runs_per_node,
    expected_instance_final_statuses,
    iter_records,
    landing_files,
)

SAMPLES = PROJECT_ROOT / "samples"
# the examples of the DataHub Entity Change Event documentation, one JSON object per line
DOCUMENTED_EXAMPLES = FIXTURES / "datahub_ece_documented_examples.jsonl"
SOURCES = ("datahub_ece", "datahub_audit", "openmetadata", "dataworks")
EVENTS = 6000


@pytest.fixture(scope="module")
def landing(tmp_path_factory) -> tuple[Path, dict[str, int]]:
    out = tmp_path_factory.mktemp("generated")
    return out, gen.generate(out, EVENTS, seed=11)


def _records(folder: Path) -> list:
    return [record for path in landing_files(folder) for record in iter_records(path)]


def _raw_lines(folder: Path) -> list[str]:
    """Every JSON Lines line of a folder (gunzipped), blank lines dropped."""
    lines = []
    for path in landing_files(folder):
        if ".jsonl" in path.name:
            data = path.read_bytes()
            text = (gzip.decompress(data) if path.name.endswith(".gz") else data).decode()
            lines += [line for line in text.splitlines() if line.strip()]
    return lines


def _ece_events(folder: Path) -> list[dict]:
    """Valid ECE records, exact repeats dropped, in event-time order."""
    unique = {json.dumps(r, sort_keys=True): r for r in _records(folder) if isinstance(r, dict)}
    return sorted(unique.values(), key=lambda r: r["auditStamp"]["time"])


def _association(event: dict) -> tuple | None:
    params = event.get("parameters") or {}
    category = event["category"]
    if category == "TAG":
        return ("tag", event["entityUrn"], params["tagUrn"])
    if category == "GLOSSARY_TERM":
        return ("term", event["entityUrn"], params["termUrn"])
    if category == "DOMAIN":
        return ("domain", event["entityUrn"], params["domainUrn"])
    if category in ("OWNER", "OWNERSHIP"):
        return ("owner", event["entityUrn"], params["ownerUrn"], params["ownerType"])
    return None


# generator ---------------------------------------------------------------------------


def test_same_seed_writes_identical_files(tmp_path):
    first, second, other = tmp_path / "a", tmp_path / "b", tmp_path / "c"
    assert gen.generate(first, 2500, seed=5) == gen.generate(second, 2500, seed=5)
    gen.generate(other, 2500, seed=6)

    def snapshot(folder: Path) -> dict[str, bytes]:
        return {str(p.relative_to(folder)): p.read_bytes() for p in landing_files(folder)}

    assert snapshot(first) == snapshot(second)
    assert snapshot(first) != snapshot(other)


def test_returned_counts_match_records_written(landing):
    out, counts = landing
    assert set(counts) == set(SOURCES)
    assert sum(counts.values()) == EVENTS
    assert counts["datahub_ece"] > counts["dataworks"] > 0
    for source in SOURCES:
        assert len(_records(out / source)) == counts[source], source


def test_files_of_every_kind_are_written(landing):
    out, _ = landing
    assert list((out / "datahub_audit").glob("page-*.json"))
    assert list((out / "dataworks" / "fc").glob("msg-*.json"))
    for source in SOURCES:
        assert list((out / source / "late").glob("part-*.jsonl")), source


def test_files_are_bounded_gzipped_and_paged(tmp_path, monkeypatch):
    monkeypatch.setattr(common, "AUDIT_PAGE_SIZE", 100)
    counts = gen.generate(tmp_path, 3000, seed=1, records_per_file=300)
    ece = tmp_path / "datahub_ece"
    assert list(ece.glob("part-*.jsonl.gz"))
    assert len(_records(ece)) == counts["datahub_ece"]
    assert all(len(list(iter_records(p))) <= 300 for p in landing_files(ece))
    pages = [json.loads(p.read_text()) for p in sorted((tmp_path / "datahub_audit").glob("page-*.json"))]
    assert len(pages) >= 3
    assert all(page["nextScrollId"] for page in pages[:-1]) and pages[-1]["nextScrollId"] is None
    assert len({page["nextScrollId"] for page in pages}) == len(pages)
    assert all(page["count"] == len(page["usageEvents"]) <= 100 for page in pages)


def test_no_remove_precedes_its_add(landing):
    out, _ = landing
    open_now: set[tuple] = set()
    removes = 0
    for event in _ece_events(out / "datahub_ece"):
        key = _association(event)
        if key is None or event["entityType"] == "actionRequest":
            if event["operation"] == "HARD_DELETE":
                doomed = event["entityUrn"]
                open_now = {
                    k
                    for k in open_now
                    if k[1] != doomed and not k[1].startswith(f"urn:li:schemaField:({doomed},")
                }
            continue
        if event["operation"] == "ADD":
            open_now.add(key)
        elif event["operation"] == "REMOVE":
            assert key in open_now, f"REMOVE before ADD: {event}"
            open_now.discard(key)
            removes += 1
    assert removes > 0


def test_nothing_happens_to_a_dataset_after_its_hard_delete(landing):
    out, _ = landing
    deleted_at: dict[str, int] = {}
    events = _ece_events(out / "datahub_ece")
    for event in events:
        if event["category"] == "LIFECYCLE" and event["operation"] == "HARD_DELETE":
            deleted_at[event["entityUrn"]] = event["auditStamp"]["time"]
    assert deleted_at
    for event in events:
        params = event.get("parameters") or {}
        touched = {
            event["entityUrn"],
            params.get("parentUrn"),
            params.get("resourceUrn"),
            params.get("asserteeUrn"),
        }
        for dataset in touched & deleted_at.keys():
            assert event["auditStamp"]["time"] <= deleted_at[dataset], event


def test_ece_story_has_every_feature(landing):
    out, _ = landing
    events = _ece_events(out / "datahub_ece")
    categories = Counter((e["category"], e["operation"]) for e in events)
    for needed in [
        ("TAG", "ADD"),
        ("TAG", "REMOVE"),
        ("OWNERSHIP", "ADD"),
        ("OWNER", "ADD"),
        ("LIFECYCLE", "CREATE"),
        ("LIFECYCLE", "HARD_DELETE"),
        ("LIFECYCLE", "COMPLETED"),
        ("RUN", "STARTED"),
        ("RUN", "COMPLETED"),
    ]:
        assert categories[needed] > 0, needed
    owners = [e for e in events if e["category"] in ("OWNER", "OWNERSHIP")]
    assert all(e["parameters"]["ownerType"] in OWNER_TYPES for e in owners)
    field_tags = [e for e in events if e["category"] == "TAG" and e["entityType"] == "schemaField"]
    assert field_tags
    for event in field_tags:
        parent, path = event["parameters"]["parentUrn"], event["parameters"]["fieldPath"]
        assert event["entityUrn"] == f"urn:li:schemaField:({parent},{path})"
    results = {
        e["parameters"]["actionRequestResult"]
        for e in events
        if e["entityType"] == "actionRequest" and e["operation"] == "COMPLETED"
    }
    assert results == {"ACCEPTED", "REJECTED"}


def test_some_tag_proposals_are_applied_later(landing):
    out, _ = landing
    events = _ece_events(out / "datahub_ece")
    proposed = {
        (e["parameters"]["resourceUrn"], e["parameters"]["tagUrn"]): e["auditStamp"]["time"]
        for e in events
        if e["entityType"] == "actionRequest"
        and e["parameters"].get("actionRequestType") == "TAG_ASSOCIATION"
    }
    applied = [
        e
        for e in events
        if e["category"] == "TAG"
        and e["operation"] == "ADD"
        and proposed.get((e["entityUrn"], e["parameters"]["tagUrn"]), e["auditStamp"]["time"])
        < e["auditStamp"]["time"]
    ]
    assert proposed and applied


def test_dirt_is_present_in_every_source(landing):
    out, counts = landing
    for source in SOURCES:
        records = _records(out / source)
        malformed = [r for r in records if not isinstance(r, dict)]
        assert 1 <= len(malformed) <= max(1, round(counts[source] * 0.003)), source
        texts = Counter(json.dumps(r, sort_keys=True) for r in records if isinstance(r, dict))
        duplicates = sum(n - 1 for n in texts.values())
        assert 0.01 * counts[source] <= duplicates <= 0.03 * counts[source], source


def test_late_files_hold_older_events(landing):
    out, _ = landing
    folder = out / "datahub_ece"
    main = [
        r for p in landing_files(folder) if p.parent == folder for r in iter_records(p) if isinstance(r, dict)
    ]
    late = [r for r in iter_records(folder / "late" / "part-00000.jsonl") if isinstance(r, dict)]
    newest_main = max(r["auditStamp"]["time"] for r in main)
    assert late and all(r["auditStamp"]["time"] < newest_main for r in late)
    assert 0.005 * len(main) <= len(late) <= 0.02 * len(main)


def test_event_times_stay_in_2024_and_2025(landing):
    out, _ = landing
    times = [e["auditStamp"]["time"] for e in _ece_events(out / "datahub_ece")]
    times += [
        r["timestamp"]
        for s in ("datahub_audit", "openmetadata")
        for r in _records(out / s)
        if isinstance(r, dict)
    ]
    assert START_MS <= min(times) and max(times) <= END_MS


def test_main_prints_counts(tmp_path, capsys):
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    args = parser.parse_args(["--out", str(tmp_path), "--events", "200", "--seed", "3"])
    assert gen.main(args) == 0
    assert "datahub_ece: 110 records" in capsys.readouterr().out


def test_a_later_window_makes_the_next_batch_of_a_feed(tmp_path):
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    args = parser.parse_args(
        ["--out", str(tmp_path), "--events", "2000", "--start", "2026-01-01", "--end", "2026-01-08T00:00"]
    )
    assert gen.main(args) == 0
    start = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc).timestamp() * 1000
    times = [e["auditStamp"]["time"] for e in _ece_events(tmp_path / "datahub_ece")]
    times += [r["timestamp"] for r in _records(tmp_path / "openmetadata") if isinstance(r, dict)]
    assert start <= min(times) and max(times) <= start + 7 * 86_400_000
    assert max(times) - min(times) > 6 * 86_400_000  # spread over the window, not bunched
    with pytest.raises(SystemExit):
        parser.parse_args(["--out", "x", "--events", "1", "--start", "next week"])
    with pytest.raises(ValueError, match="ends before it starts"):
        gen.generate(tmp_path / "bad", 10, window=(2, 1))


def test_one_million_split_is_exact():
    counts = split_events(1_000_003)
    assert sum(counts.values()) == 1_000_003 and counts["datahub_audit"] == 150_000


# bundled samples ------------------------------------------------------------------------


def _readme_counts() -> dict[str, int]:
    rows = re.findall(r"^\| (\w+) \| (\d+) \|", (SAMPLES / "README.md").read_text(), re.M)
    return {source: int(n) for source, n in rows if source in SOURCES}


def test_sample_counts_match_readme_and_counts_file():
    expected = json.loads((SAMPLES / "expected_counts.json").read_text())
    assert _readme_counts() == expected["records"]
    for source in SOURCES:
        records = _records(SAMPLES / "landing" / source)
        assert len(records) == expected["records"][source], source
        malformed = [r for r in records if not isinstance(r, dict)]
        assert len(malformed) == expected["malformed"][source], (source, malformed)


def test_sample_json_documents_parse_whole():
    """Only JSON Lines files may hold malformed records; every .json file is one valid document."""
    for path in landing_files(SAMPLES / "landing"):
        if path.name.endswith(".json"):
            json.loads(path.read_text())
        else:
            assert ".jsonl" in path.name, path


def test_samples_contain_every_documented_entity_change_example_verbatim():
    blocks = [json.loads(line) for line in DOCUMENTED_EXAMPLES.read_text(encoding="utf-8").splitlines()]
    records = _records(SAMPLES / "landing" / "datahub_ece")
    assert len(blocks) == 24
    for block in blocks:
        assert block in records, block


def test_samples_cover_every_dataworks_event_code():
    data = []
    for record in _records(SAMPLES / "landing" / "dataworks"):
        if isinstance(record, dict):
            data.append(record.get("data", record))
    codes = Counter(d.get("eventCode") for d in data)
    for code in (
        "node-change-created node-change-updated node-change-deleted commit-file deploy-file delete-file run-file "
        "commit-table deploy-table start-diJob batch-start-diJob undeploy-node freeze-node unfreeze-node "
        "backfill-data instance-status-changes freeze-instance unfreeze-instance kill-instance rerun-instance "
        "set-instance-success pre-freeze-instance expired-task-instances-deleted "
        "delete-task-instance-dependencies dag-status-changes workbench-monitor-alert approval-change-created "
        "approval-change-finished approval-create-before dqc-check-finished-event "
        "batch-create-data-quality-rules update-data-quality-rule batch-delete-data-quality-rules "
        "create-data-quality-evaluation-task clone-data-quality-evaluation-task "
        "batch-delete-data-quality-evaluation-tasks create-data-quality-evaluation-task-notification "
        "update-data-quality-evaluation-task-notification delete-project project-deleted download-resources "
        "download-resources-execute upload-data-to-table"
    ).split():
        assert codes[code] > 0, code
    assert codes["start-diJob"] >= 2 and codes["instance-status-changes"] >= 4
    assert {d.get("alarmType") for d in data} >= {"SLA_ALERT", "TOPIC_ALERT", "REMIND_ALERT"}
    assert (
        sum(1 for d in data if d.get("status") == 5 and d.get("eventCode") == "instance-status-changes") >= 2
    )


def test_sample_dataworks_ids_are_unmasked_except_the_deliberate_one():
    masked = [line for line in _raw_lines(SAMPLES / "landing" / "dataworks") if "***" in line]
    assert len(masked) == 1 and '"projectId":"9***4"' in masked[0]


def test_samples_cover_every_audit_event_type():
    types = {r["eventType"] for r in _records(SAMPLES / "landing" / "datahub_audit") if isinstance(r, dict)}
    assert types == {t for t, _ in AUDIT_TYPES}


# reference model ------------------------------------------------------------------------

DS = "urn:li:dataset:(urn:li:dataPlatform:hive,db.t,PROD)"
FIELD = f"urn:li:schemaField:({DS},email)"
OTHER = "urn:li:dataset:(urn:li:dataPlatform:hive,db.other,PROD)"


def _ev(entity, category, operation, time, **params):
    record = {"entityUrn": entity, "entityType": "schemaField" if "schemaField" in entity else "dataset"}
    record.update({"category": category, "operation": operation})
    if params:
        record["parameters"] = params
        record["modifier"] = params.get("tagUrn") or params.get("ownerUrn")
    record["auditStamp"] = {"actor": "urn:li:corpuser:t", "time": time}
    return record


def test_reference_model_on_a_hand_written_landing(tmp_path):
    folder = tmp_path / "datahub_ece"
    (folder / "late").mkdir(parents=True)
    add_pii = _ev(DS, "TAG", "ADD", 10, tagUrn="urn:li:tag:pii")
    first = [
        add_pii,
        _ev(OTHER, "TAG", "REMOVE", 11, tagUrn="urn:li:tag:never"),  # REMOVE without ADD
        _ev(FIELD, "TAG", "ADD", 12, tagUrn="urn:li:tag:pii", fieldPath="email", parentUrn=DS),
        _ev(OTHER, "TAG", "ADD", 13, tagUrn="urn:li:tag:gold"),
        _ev(OTHER, "OWNER", "ADD", 14, ownerUrn="urn:li:corpuser:a", ownerType="TECHNICAL_OWNER"),
        _ev(OTHER, "OWNERSHIP", "ADD", 15, ownerUrn="urn:li:corpuser:a", ownerType="BUSINESS_OWNER"),
        _ev(DS, "OWNERSHIP", "ADD", 16, ownerUrn="urn:li:corpuser:b", ownerType="DATA_STEWARD"),
    ]
    lines = [json.dumps(r) for r in first] + ["", '{"entityUrn": "urn:li:data', "not json"]
    (folder / "a.jsonl").write_text("\n".join(lines) + "\n")
    later = [
        add_pii,  # duplicate, in another file
        _ev(DS, "LIFECYCLE", "HARD_DELETE", 20),  # closes the dataset's tag and owner and the field tag
        _ev(OTHER, "OWNER", "REMOVE", 21, ownerUrn="urn:li:corpuser:a", ownerType="TECHNICAL_OWNER"),
        _ev(OTHER, "TAG", "ADD", 22, tagUrn="urn:li:tag:gold"),  # already open: nothing new
        {
            **_ev(OTHER, "TAG", "ADD", 23, tagUrn="urn:li:tag:x"),
            "auditStamp": {"actor": "a", "time": "yesterday"},
        },
    ]
    (folder / "b.json").write_text(json.dumps(later, indent=2))
    late = _ev(
        OTHER, "TAG", "REMOVE", 14, tagUrn="urn:li:tag:gold"
    )  # arrives last, happened before the re-ADD
    (folder / "late" / "c.jsonl.gz").write_bytes(gzip.compress((json.dumps(late) + "\n").encode()))
    (folder / "single.json").write_text(json.dumps(_ev(OTHER, "TAG", "ADD", 30, tagUrn="urn:li:tag:silver")))

    assert expected_current_tags(tmp_path) == {(OTHER, "urn:li:tag:gold"), (OTHER, "urn:li:tag:silver")}
    assert expected_current_owners(tmp_path) == {(OTHER, "urn:li:corpuser:a", "BUSINESS_OWNER")}


def test_reference_model_on_the_samples():
    table = "urn:li:dataset:(urn:li:dataPlatform:snowflake,example.table,PROD)"
    assert expected_current_tags(SAMPLES / "landing") == {
        (table, "urn:li:tag:pii"),
        (table, "urn:li:tag:gdpr"),
        (f"urn:li:schemaField:({table},email)", "urn:li:tag:pii"),
    }
    assert expected_current_owners(SAMPLES / "landing") == {
        (table, "urn:li:corpuser:jdoe", "TECHNICAL_OWNER"),
        (table, "urn:li:corpuser:jdoe", "BUSINESS_OWNER"),
    }


EPOCH_MS = 1_710_000_000_000  # 2024-03-09


def _om(fqn, event_type, time, version, change=None, **extra):
    record = {"eventType": event_type, "entityType": "table", "entityId": f"id-{fqn}"}
    record.update({"entityFullyQualifiedName": fqn, "timestamp": EPOCH_MS + 1000 * time})
    record["currentVersion"] = version
    return {**record, "changeDescription": change, **extra}


def _instance(task, node, status, minute):
    data = {"eventCode": "instance-status-changes", "taskId": task, "nodeId": node, "status": status}
    return {"type": "dataworks:InstanceStatusChanges:InstanceStatusChanges", "data": data,
            "time": f"2024-07-13T10:{minute:02d}:00.000+08:00"}  # fmt: skip


def test_reference_model_of_the_other_histories_on_a_hand_written_landing(tmp_path):
    field = f"urn:li:schemaField:({OTHER},b)"
    schema = {
        "fieldUrn": f"urn:li:schemaField:({OTHER},c)",
        "fieldPath": "c",
        "modificationCategory": "RENAME",
    }
    ece = [
        _ev(DS, "LIFECYCLE", "CREATE", 1),
        _ev(DS, "LIFECYCLE", "SOFT_DELETE", 2),
        _ev(DS, "LIFECYCLE", "REINSTATE", 3),
        _ev(OTHER, "LIFECYCLE", "CREATE", 4),
        _ev(OTHER, "LIFECYCLE", "SOFT_DELETE", 5),
        _ev(DS, "DEPRECATION", "MODIFY", 6, status="DEPRECATED"),
        _ev(DS, "DEPRECATION", "MODIFY", 7, status="ACTIVE"),
        _ev(OTHER, "DEPRECATION", "MODIFY", 8, status="DEPRECATED"),
        _ev(OTHER, "TECHNICAL_SCHEMA", "ADD", 9, fieldPath="a"),
        _ev(OTHER, "TECHNICAL_SCHEMA", "ADD", 10, fieldPath="b"),
        {**_ev(OTHER, "TECHNICAL_SCHEMA", "MODIFY", 11, **schema), "modifier": field},  # b renamed c
        _ev(OTHER, "TECHNICAL_SCHEMA", "REMOVE", 12, fieldPath="a"),
        _ev(OTHER, "STRUCTURED_PROPERTY", "ADD", 13, propertyUrn="p:tier", propertyValues='["gold"]'),
        _ev(OTHER, "STRUCTURED_PROPERTY", "MODIFY", 14, propertyUrn="p:tier", propertyValues='["silver"]'),
        _ev(OTHER, "STRUCTURED_PROPERTY", "ADD", 15, propertyUrn="p:keep", propertyValues='["30d"]'),
        _ev(OTHER, "STRUCTURED_PROPERTY", "REMOVE", 16, propertyUrn="p:keep"),
        _ev(DS, "STRUCTURED_PROPERTY", "ADD", 17, propertyUrn="p:tier", propertyValues='["gold"]'),
        _ev(DS, "TECHNICAL_SCHEMA", "ADD", 18, fieldPath="x"),
        _ev(DS, "LIFECYCLE", "HARD_DELETE", 19),  # ends DS's property and field
    ]
    for record in ece:  # plausible epoch milliseconds, so the pipeline can run on this landing too
        record["auditStamp"]["time"] = EPOCH_MS + 1000 * record["auditStamp"]["time"]
    (tmp_path / "datahub_ece").mkdir()
    (tmp_path / "datahub_ece" / "a.jsonl").write_text("\n".join(json.dumps(r) for r in ece) + "\n")
    columns = json.dumps({"columns": [{"name": "id"}, {"name": "email"}]})
    added = {"fieldsAdded": [{"name": "columns", "newValue": '[{"name":"phone"}]'}]}
    deleted = {"fieldsDeleted": [{"name": "columns", "oldValue": '[{"name":"email"}]'}]}
    om = [
        _om("db.t", "entityCreated", 100, 0.1, entity=columns),
        _om("db.t", "entityUpdated", 101, 0.2, added),
        _om("db.t", "entityUpdated", 102, 0.3, deleted),
        _om("db.gone", "entityCreated", 103, 0.1, entity=columns),
        _om("db.gone", "entityDeleted", 104, 0.1),
    ]
    (tmp_path / "openmetadata").mkdir()
    (tmp_path / "openmetadata" / "a.jsonl").write_text("\n".join(json.dumps(r) for r in om + om[:1]) + "\n")
    runs = [_instance(1, 7, 2, 1), _instance(1, 7, 5, 2), _instance(2, 7, 5, 3), _instance(1, 7, 6, 4)]
    runs += [_instance(3, 8, 4, 5)]
    (tmp_path / "dataworks").mkdir()
    (tmp_path / "dataworks" / "a.jsonl").write_text("\n".join(json.dumps(r) for r in runs[::-1]) + "\n")

    assert expected_current_statuses(tmp_path) == {
        ("datahub", DS, "HARD_DELETED"),
        ("datahub", OTHER, "SOFT_DELETED"),
        ("openmetadata", "openmetadata:table:db.t", "ACTIVE"),
        ("openmetadata", "openmetadata:table:db.gone", "HARD_DELETED"),
    }
    assert expected_current_deprecations(tmp_path) == {OTHER}
    assert expected_current_schema_fields(tmp_path) == {
        ("datahub", OTHER, "c"),
        ("openmetadata", "openmetadata:table:db.t", "id"),
        ("openmetadata", "openmetadata:table:db.t", "phone"),
    }
    assert expected_current_structured_properties(tmp_path) == {(OTHER, "p:tier", '["silver"]')}
    assert expected_entity_version_counts(tmp_path) == {
        "openmetadata:table:db.t": 3,
        "openmetadata:table:db.gone": 1,
    }
    assert expected_instance_final_statuses(tmp_path) == {1: (7, 6), 2: (7, 5), 3: (8, 4)}
    assert expected_finished_runs_per_node(tmp_path) == {7: (2, 1)}


def test_reference_model_of_the_other_histories_on_the_samples():
    landing = SAMPLES / "landing"
    table, tmp = "urn:li:dataset:(urn:li:dataPlatform:snowflake,example.table,PROD)", "openmetadata:table:"
    assert expected_current_statuses(landing) == {
        ("datahub", table, "ACTIVE"),
        ("datahub", "urn:li:dataset:(urn:li:dataPlatform:hive,sales.orders_tmp,PROD)", "HARD_DELETED"),
        ("datahub", "urn:li:dataset:abc", "HARD_DELETED"),
        ("openmetadata", f"{tmp}mysql_prod.shop.sales.orders", "ACTIVE"),
        ("openmetadata", f"{tmp}mysql_prod.shop.sales.customers", "ACTIVE"),
        ("openmetadata", f"{tmp}mysql_prod.shop.sales.orders_tmp", "HARD_DELETED"),
    }
    assert expected_current_deprecations(landing) == set()
    assert expected_current_structured_properties(landing) == set()
    assert {(d, f) for _, d, f in expected_current_schema_fields(landing)} == {
        *((f"{tmp}mysql_prod.shop.sales.orders", c) for c in ("order_id", "email", "amount", "created_at")),
        *((f"{tmp}mysql_prod.shop.sales.customers", c) for c in ("customer_id", "email", "phone")),
    }
    assert expected_entity_version_counts(landing) == {
        f"{tmp}mysql_prod.shop.sales.orders": 8,
        f"{tmp}mysql_prod.shop.sales.customers": 2,
        f"{tmp}mysql_prod.shop.sales.orders_tmp": 1,
    }
    assert sorted(status for _, status in expected_instance_final_statuses(landing).values()) == [5, 6, 6]


def test_reference_model_agrees_with_the_generator_state(tmp_path):
    """On generated data the oracle finds open associations, and only on datasets that still exist."""
    gen.generate(tmp_path, 3000, seed=2)
    deleted = {
        e["entityUrn"]
        for e in _ece_events(tmp_path / "datahub_ece")
        if e["category"] == "LIFECYCLE" and e["operation"] == "HARD_DELETE"
    }
    tags = expected_current_tags(tmp_path)
    owners = expected_current_owners(tmp_path)
    assert tags and owners
    for entity, *_ in tags | owners:
        dataset = (
            entity[len("urn:li:schemaField:(") :].rsplit(",", 1)[0] if "schemaField" in entity else entity
        )
        assert dataset not in deleted
