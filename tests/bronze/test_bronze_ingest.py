"""Bronze lands every record of every supported file shape, once, with lineage."""

from __future__ import annotations

import datetime as dt
import gzip
import json
import os
import shutil
import socket

import pytest
from pyspark.sql import functions as F

from bronze.datahub_entity_change_events import SPEC as ece_spec
from pipelines.core.context import RunContext
from pipelines.executors import bronze as bronze_executor
from pipelines.landing import ingestion_log
from pipelines.landing.discovery import landing_key
from pipelines.orchestration.runner import run_pipeline

ECE = "bronze.datahub_entity_change_events"


@pytest.fixture
def landing(tmp_path):
    root = tmp_path / "landing"
    for source in ("datahub_ece", "datahub_audit", "openmetadata", "dataworks"):
        (root / source).mkdir(parents=True)
    return root


def _run(config, spark, landing, warehouse):
    return run_pipeline(
        config.with_overrides(landing=str(landing), warehouse=str(warehouse)), ("bronze",), spark=spark
    )


def _bronze(store, table=ECE):
    return store.read(table)


def _by_file(store, name, table=ECE):
    rows = _bronze(store, table).where(F.col("source_file").endswith(name)).orderBy("record_index").collect()
    return [(r.record_index, r.line_number, r.raw, r.is_corrupt, r.corrupt_reason) for r in rows]


def test_every_file_shape_and_corrupt_record_is_kept(config, spark, landing, warehouse, store):
    ece = landing / "datahub_ece"
    (ece / "lines.jsonl").write_bytes(
        b'{"a":1}\r\n\r\n{"a": 2, "nested": {"x": [1, 2]}}\n{"a": tru\nnot json\n\xff\xfe\x00bad\n\t\n42\n'
    )
    (ece / "array.json").write_text('[{"b":1}, {"b":2}, 3]')
    (ece / "pretty.json").write_text('{\n  "c": 1,\n  "d": [\n    {"e": 2}\n  ]\n}\n')
    (ece / "bom.jsonl").write_bytes('\ufeff{"f":1}\n'.encode())
    with gzip.open(ece / "z.jsonl.gz", "wt") as handle:
        handle.write('{"g":1}\n{"g":2}\n')
    (ece / "empty.jsonl").write_text("")
    (ece / "empty_array.json").write_text("[]")
    (ece / "broken_doc.json").write_text('{\n  "h": 1,\n  "i": \n')
    (ece / "deep.jsonl").write_text('{"a":' * 3000 + "1" + "}" * 3000 + "\n")
    big = json.dumps({"big": "x" * (10 * 1024 * 1024)})
    (ece / "big.jsonl").write_text(big + "\n")

    _run(config, spark, landing, warehouse)

    assert _by_file(store, "lines.jsonl") == [
        (0, 0, '{"a":1}', False, None),
        (1, 2, '{"a": 2, "nested": {"x": [1, 2]}}', False, None),
        (2, 3, '{"a": tru', True, "malformed JSON"),
        (3, 4, "not json", True, "not a JSON object"),
        (4, 5, "\ufffd\ufffd\x00bad", True, "invalid UTF-8"),
        (5, 7, "42", True, "not a JSON object"),
    ]
    invalid = _bronze(store).where(F.col("corrupt_reason") == "invalid UTF-8").first()
    assert invalid.raw_base64 == "//4AYmFk"  # the original bytes ff fe 00 'bad'
    assert [r[2:4] for r in _by_file(store, "array.json")] == [
        ('{"b":1}', False),
        ('{"b":2}', False),
        ("3", True),
    ]
    assert _by_file(store, "pretty.json")[0][3] is False
    assert _by_file(store, "bom.jsonl") == [(0, 0, '{"f":1}', False, None)]
    assert [r[2] for r in _by_file(store, "z.jsonl.gz")] == ['{"g":1}', '{"g":2}']
    assert _by_file(store, "empty.jsonl") == [] and _by_file(store, "empty_array.json") == []
    assert [r[3:] for r in _by_file(store, "broken_doc.json")] == [(True, "malformed JSON document")]
    assert [r[3:] for r in _by_file(store, "deep.jsonl")] == [(True, "malformed JSON document")]
    assert _bronze(store).where(F.col("source_file").endswith("big.jsonl")).select(F.length("raw")).first()[
        0
    ] == len(big)

    logged = {r.path.rsplit("/", 1)[-1]: r.records for r in store.read(ingestion_log.TABLE).collect()}
    assert logged["lines.jsonl"] == 6 and logged["empty.jsonl"] == 0 and logged["array.json"] == 3
    assert sum(logged.values()) == _bronze(store).count()


def test_wrappers_yield_their_records_with_page_columns(config, spark, landing, warehouse, store):
    page = {
        "nextScrollId": "s2",
        "count": 2,
        "total": 7,
        "usageEvents": [{"eventType": "A"}, {"eventType": "B"}],
    }
    (landing / "datahub_audit" / "page.json").write_text(json.dumps(page))
    fc = {
        "messageId": "m-1",
        "eventType": "upload-data-to-table",
        "blockBusiness": True,
        "messageBody": {"eventCode": "x"},
    }
    (landing / "dataworks" / "fc.json").write_text(json.dumps(fc))
    _run(config, spark, landing, warehouse)

    audit = store.read("bronze.datahub_audit_events").orderBy("record_index").collect()
    assert [json.loads(r.raw)["eventType"] for r in audit] == ["A", "B"]
    assert {(r.next_scroll_id, r.page_total) for r in audit} == {("s2", 7)}
    dw = store.read("bronze.dataworks_events").first()
    assert json.loads(dw.raw) == {"eventCode": "x"}
    assert json.loads(dw.container)["messageId"] == "m-1"


def test_rerun_lands_nothing_new_and_new_files_only_add(config, spark, landing, warehouse, store):
    (landing / "datahub_ece" / "one.jsonl").write_text('{"a":1}\n{"a":2}\n')
    _run(config, spark, landing, warehouse)
    version = store.version(ECE)
    _run(config, spark, landing, warehouse)
    assert store.version(ECE) == version and _bronze(store).count() == 2

    (landing / "datahub_ece" / "two.jsonl").write_text('{"a":3}\n')
    (landing / "datahub_ece" / "copy_of_one.jsonl").write_text('{"a":1}\n{"a":2}\n')  # same content, new name
    _run(config, spark, landing, warehouse)
    assert _bronze(store).count() == 5


def test_pending_rows_weigh_the_files_not_ingested_by_their_size(config, spark, landing, warehouse, store):
    """What the runner weighs a bronze task by (`pipelines.orchestration.runner`): new files' bytes, no file opened."""
    settings = config.with_overrides(landing=str(landing), warehouse=str(warehouse))
    ctx = RunContext(spark, store, settings, "run-test", dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc))
    (landing / "datahub_ece" / "one.jsonl").write_text('{"a":1}\n' * 600)  # 4,800 bytes
    with gzip.open(landing / "datahub_ece" / "two.jsonl.gz", "wt") as handle:
        handle.write('{"b":2}\n' * 600)
    packed = (landing / "datahub_ece" / "two.jsonl.gz").stat().st_size
    expected = (4800 + packed * bronze_executor.GZIP_RATIO) // bronze_executor.LANDING_BYTES_PER_RECORD
    assert bronze_executor.pending_rows(ece_spec, ctx) == expected

    _run(config, spark, landing, warehouse)
    assert bronze_executor.pending_rows(ece_spec, ctx) == 0

    (landing / "datahub_ece" / "three.jsonl").write_text('{"c":3}\n' * 64)
    assert bronze_executor.pending_rows(ece_spec, ctx) == 512 // bronze_executor.LANDING_BYTES_PER_RECORD


def test_file_names_with_glob_characters_are_read_as_themselves(config, spark, landing, warehouse, store):
    ece = landing / "datahub_ece"
    names = ["a[1].jsonl", "b{x,y}.jsonl", "c*.jsonl", "c?.jsonl", "d space+plus%41.jsonl"]
    for number, name in enumerate(names):
        (ece / name).write_text(f'{{"n":{number}}}\n')
    _run(config, spark, landing, warehouse)
    rows = _bronze(store).select("source_file", "raw").collect()
    assert sorted((r.source_file.rsplit("/", 1)[1], r.raw) for r in rows) == sorted(
        (name, f'{{"n":{number}}}') for number, name in enumerate(names)
    )


def test_changed_file_is_reported_not_duplicated(config, spark, landing, warehouse, store):
    target = landing / "datahub_ece" / "grows.jsonl"
    target.write_text('{"a":1}\n')
    _run(config, spark, landing, warehouse)
    target.write_text('{"a":1}\n{"a":2}\n')
    _run(config, spark, landing, warehouse)
    _run(config, spark, landing, warehouse)
    assert _bronze(store).count() == 1
    statuses = sorted(r.status for r in store.read(ingestion_log.TABLE).collect())
    assert statuses == [ingestion_log.CHANGED_SKIPPED, ingestion_log.INGESTED]


def test_a_moved_landing_folder_is_not_ingested_again(config, spark, landing, warehouse, store, tmp_path):
    (landing / "datahub_ece" / "sub").mkdir()
    (landing / "datahub_ece" / "sub" / "one.jsonl").write_text('{"a":1}\n{"a":2}\n')
    (landing / "datahub_ece" / "two.jsonl").write_text('{"a":3}\n')
    _run(config, spark, landing, warehouse)
    moved = tmp_path / "elsewhere" / "landing"
    shutil.move(landing, moved)  # keeps modification times
    (moved / "datahub_ece" / "three.jsonl").write_text('{"a":4}\n')

    _run(config, spark, moved, warehouse)

    assert sorted(r.raw for r in _bronze(store).collect()) == ['{"a":1}', '{"a":2}', '{"a":3}', '{"a":4}']
    keys = {r.landing_key for r in store.read(ingestion_log.TABLE).collect()}
    assert keys == {"sub/one.jsonl", "two.jsonl", "three.jsonl"}


def test_a_touched_file_is_logged_once_and_not_ingested_again(config, spark, landing, warehouse, store):
    target = landing / "datahub_ece" / "one.jsonl"
    target.write_text('{"a":1}\n')
    _run(config, spark, landing, warehouse)
    later = target.stat().st_mtime + 3600
    os.utime(target, (later, later))  # a copy that did not keep the time, or a `touch`

    _run(config, spark, landing, warehouse)
    _run(config, spark, landing, warehouse)

    assert _bronze(store).count() == 1
    statuses = sorted(r.status for r in store.read(ingestion_log.TABLE).collect())
    assert statuses == [ingestion_log.INGESTED, ingestion_log.SAME_CONTENT]


def test_log_rows_written_before_landing_keys_find_their_moved_files(
    config, spark, landing, warehouse, store, tmp_path
):
    (landing / "datahub_ece" / "sub").mkdir()
    (landing / "datahub_ece" / "sub" / "one.jsonl").write_text('{"a":1}\n')
    _run(config, spark, landing, warehouse)
    legacy = store.read(ingestion_log.TABLE).withColumn("landing_key", F.lit(None).cast("string"))
    store.overwrite(legacy, ingestion_log.TABLE)  # as logged before the column existed
    moved = tmp_path / "elsewhere" / "landing"
    shutil.move(landing, moved)

    _run(config, spark, moved, warehouse)

    assert [r.raw for r in _bronze(store).collect()] == ['{"a":1}']
    folder = tmp_path / "now" / "datahub_ece"
    assert landing_key(str(folder / "sub" / "f.jsonl"), folder) == "sub/f.jsonl"
    assert landing_key("/old/place/datahub_ece/sub/f.jsonl", folder) == "sub/f.jsonl"
    assert landing_key("/old/datahub_ece/x/datahub_ece/f.jsonl", folder) == "f.jsonl"
    assert landing_key("/unrelated/f.jsonl", folder) == "/unrelated/f.jsonl"


def test_commit_without_log_rows_is_recovered_not_reingested(config, spark, landing, warehouse, store):
    (landing / "datahub_ece" / "one.jsonl").write_text('{"a":1}\n')
    _run(config, spark, landing, warehouse)
    # Simulate a run killed after its bronze commit and before its log rows.
    (landing / "datahub_ece" / "two.jsonl").write_text('{"a":2}\n')
    bronze = store.read(ECE)
    crashed = bronze.withColumn("source_file", F.lit(str(landing / "datahub_ece" / "two.jsonl")))
    crashed = crashed.withColumn("ingest_run_id", F.lit("crashed-run")).withColumn("raw", F.lit('{"a":2}'))
    from pipelines.landing.discovery import LandingFile, scan

    info = (landing / "datahub_ece" / "two.jsonl").stat()
    crashed = crashed.withColumn(
        "file_hash",
        F.lit(scan(LandingFile(str(landing / "datahub_ece" / "two.jsonl"), info.st_size, 0)).sha256),
    )
    store.append(crashed, ECE, metadata={"run_id": "crashed-run"})

    _run(config, spark, landing, warehouse)
    assert sorted(r.raw for r in _bronze(store).collect()) == ['{"a":1}', '{"a":2}']
    notes = [r.note for r in store.read(ingestion_log.TABLE).collect() if r.note]
    assert any("recovered" in n for n in notes)


def test_missing_landing_folder_is_a_clear_error(config, spark, tmp_path, warehouse):
    from pipelines.orchestration.runner import RunFailed

    with pytest.raises(RunFailed, match="does not exist"):
        _run(config, spark, tmp_path / "nowhere", warehouse)


def _age(path, seconds=3600):
    then = os.path.getmtime(path) - seconds
    os.utime(path, (then, then))


def _marked(store, source="datahub_ece"):
    """The folders of `source` marked settled in ops.landing_folders."""
    if not store.exists("ops.landing_folders"):
        return []
    return sorted(r.folder for r in store.read("ops.landing_folders").where(f"source = '{source}'").collect())


def _ece_task_note(summary):
    return summary.results["bronze_datahub_entity_change_events"].message


def test_settled_folders_are_not_listed_again_and_new_ones_are_found(
    config, spark, landing, warehouse, store
):
    ece = landing / "datahub_ece"
    for day in ("2024-05-01", "2024-05-02"):
        (ece / day).mkdir()
        (ece / day / "a.jsonl").write_text(f'{{"day":"{day}"}}\n')
        _age(ece / day)
    _age(ece)
    first = _run(config, spark, landing, warehouse)
    assert "2 new files found" in _ece_task_note(first) and "3 folders listed" in _ece_task_note(first)
    assert _marked(store) == ["", "2024-05-01", "2024-05-02"]

    (ece / "2024-05-03").mkdir()
    (ece / "2024-05-03" / "b.jsonl").write_text('{"day":"2024-05-03"}\n')
    second = _run(config, spark, landing, warehouse)
    note = _ece_task_note(second)
    assert "1 new files found" in note and "(2 folders listed, 2 unchanged)" in note, note
    assert sorted(r.raw for r in _bronze(store).collect()) == [
        '{"day":"2024-05-01"}',
        '{"day":"2024-05-02"}',
        '{"day":"2024-05-03"}',
    ]
    third = _run(config, spark, landing, warehouse)
    assert "0 new files found" in _ece_task_note(third) and "2 folders listed" in _ece_task_note(third), (
        "changed within the settle time: listed until settled"
    )


def test_a_folder_holding_a_file_to_try_again_is_not_settled(config, spark, landing, warehouse, store):
    ece = landing / "datahub_ece"
    (ece / "good.jsonl").write_text('{"a":1}\n')
    with socket.socket(socket.AF_UNIX) as unreadable:  # seen, but cannot be opened, whoever runs
        unreadable.bind(str(ece / "socket.jsonl"))
        _age(ece)
        _run(config, spark, landing, warehouse)
        statuses = {r.landing_key: r.status for r in store.read(ingestion_log.TABLE).collect()}
        assert statuses == {"good.jsonl": ingestion_log.INGESTED, "socket.jsonl": ingestion_log.UNREADABLE}
        assert _marked(store) == []
    os.remove(ece / "socket.jsonl")
    _age(ece)
    _run(config, spark, landing, warehouse)
    assert [
        r.folder for r in store.read("ops.landing_folders").where("source = 'datahub_ece'").collect()
    ] == [""]
