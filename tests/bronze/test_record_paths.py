"""The line-by-line fast path and the general path of bronze give the same records.

The landing scan sends a file down the fast path only when every line is one
record; these tests hold the scan to that and check both paths row for row.
"""

from __future__ import annotations

import gzip

import pytest
from pyspark.sql import functions as F

from bronze import datahub_audit_events, datahub_entity_change_events, dataworks_events
from bronze.records import extract_records
from pipelines.executors.bronze import INVALID_SCHEMA, _file_texts
from pipelines.landing.discovery import LandingFile, scan

ECE = datahub_entity_change_events.SPEC
AUDIT = datahub_audit_events.SPEC
DATAWORKS = dataworks_events.SPEC


def _landed(tmp_path, name: str, content: bytes) -> LandingFile:
    path = tmp_path / name
    if name.endswith(".gz"):
        with gzip.open(path, "wb") as handle:
            handle.write(content)
    else:
        path.write_bytes(content)
    info = path.stat()
    return LandingFile(str(path), info.st_size, int(info.st_mtime * 1000))


def _scan(tmp_path, content: bytes, spec=ECE, name="f.jsonl"):
    return scan(_landed(tmp_path, name, content), spec.record_arrays + spec.record_objects)


@pytest.mark.parametrize(
    "content",
    [
        b'{"a":1}\n{"a":2}\n',
        b'{"a":1}\r\n{"a":2}',
        '\ufeff{"a":1}\n'.encode(),
        b'{"a": tru\nnot json\n42\n{"a":1}\n',
    ],
)
def test_scan_sends_one_record_per_line_files_down_the_fast_path(tmp_path, content):
    assert _scan(tmp_path, content).one_record_per_line


@pytest.mark.parametrize(
    ("content", "spec"),
    [
        (b'{"a":1}\n\n{"a":2}\n', ECE),  # blank line: record_index != line number
        (b'{"a":1}\n \t\n', ECE),  # whitespace-only line
        (b'{"a":1}\n[{"a":2}, {"a":3}]\n', ECE),  # an array line holds several records
        ('\ufeff [{"a":1}]\n'.encode(), ECE),  # array behind the byte order mark
        (b'{"usageEvents": [{"a":1}], "total": 1}\n', AUDIT),  # a page per line
        (b'{"usage\\u0045vents": [{"a":1}]}\n', AUDIT),  # the wrapper's name escaped
        (b'{"messageBody": {"a": 1}}\n', DATAWORKS),
        (b'{\n  "a": 1\n}\n', ECE),  # a pretty-printed document
    ],
)
def test_scan_sends_other_files_down_the_general_path(tmp_path, content, spec):
    assert not _scan(tmp_path, content, spec).one_record_per_line


LINE_FILES = {
    "plain.jsonl": b'{"a":1}\n{"a": 2, "nested": {"x": [1, 2]}}\n',
    "crlf.jsonl": b'{"a":1}\r\n{"a":2}\r\n',
    "bom.jsonl": '\ufeff{"a":1}\n{"b":2}'.encode(),
    "corrupt.jsonl": b'{"a": tru\nnot json\n42\n"text"\n{"a":1} trailing\n{"ok":true}\n',
    "invalid.jsonl": b'{"a":1}\n{"bad":"\xff\xfe"}\n{"a":3}\n',
    "pages.jsonl": b'{"total": 7, "nextScrollId": "s", "a": 1}\n{"a": 2}\n',
    "z.jsonl.gz": b'{"g":1}\n{"g":2}\n',
}


@pytest.mark.parametrize("spec", [ECE, AUDIT])
def test_both_paths_give_the_same_records(spark, tmp_path, spec):
    scans = [_scan(tmp_path, content, spec, name) for name, content in LINE_FILES.items()]
    assert all(s.one_record_per_line for s in scans)
    invalid = spark.createDataFrame(
        [(s.file.path, line, b64) for s in scans for line, b64 in s.invalid_utf8_lines.items()],
        INVALID_SCHEMA,
    )
    texts = _file_texts(spark, scans)
    fast = extract_records(spec, invalid, line_files=texts)
    general = extract_records(spec, invalid, files=texts)

    def rows(frame):
        return sorted(frame.orderBy("source_file", "record_index").collect(), key=lambda r: tuple(r[:]))

    fast_rows, general_rows = rows(fast), rows(general)
    assert fast.schema.simpleString() == general.schema.simpleString()
    assert fast_rows == general_rows
    assert len(fast_rows) == 19
    # corrupt: "{"a": tru", "not json", "42", '"text"', trailing text, invalid UTF-8
    assert fast.where(F.col("is_corrupt")).count() == 6


def test_a_run_mixes_both_paths_and_keeps_positions(spark, tmp_path):
    regular = _scan(tmp_path, b'{"a":1}\n{"a":2}\n', ECE, "regular.jsonl")
    blanks = _scan(tmp_path, b'\n{"a":1}\n\n{"a":2}\n', ECE, "blanks.jsonl")
    assert regular.one_record_per_line and not blanks.one_record_per_line
    invalid = spark.createDataFrame([], INVALID_SCHEMA)
    records = extract_records(
        ECE, invalid, files=_file_texts(spark, [blanks]), line_files=_file_texts(spark, [regular])
    )
    found = sorted(
        (r.source_file.rsplit("/", 1)[-1], r.record_index, r.line_number, r.raw) for r in records.collect()
    )
    assert found == [
        ("blanks.jsonl", 0, 1, '{"a":1}'),
        ("blanks.jsonl", 1, 3, '{"a":2}'),
        ("regular.jsonl", 0, 0, '{"a":1}'),
        ("regular.jsonl", 1, 1, '{"a":2}'),
    ]


def test_file_findings_are_the_same_inline_or_joined(spark, tmp_path, monkeypatch):
    """Few files carry their scan findings as a literal map, many as a broadcast frame."""
    from pipelines.executors import bronze as bronze_executor

    names = {**LINE_FILES, "it's [odd] ${x}.jsonl": b'{"a":1}\n'}
    scans = [_scan(tmp_path, content, ECE, name) for name, content in names.items()]

    def findings():
        frame = _file_texts(spark, scans)
        return frame.columns, sorted(tuple(r) for r in frame.collect())

    inline = findings()
    monkeypatch.setattr(bronze_executor, "INLINE_FILES", 0)
    assert findings() == inline
    columns, rows = inline
    assert columns == ["source_file", "content", "file_hash", "source_modified_at", "mode"]
    assert sorted(r[0] for r in rows) == sorted(s.file.path for s in scans)
    by_path = sorted(scans, key=lambda s: s.file.path)
    assert [(r[2], r[4]) for r in rows] == [(s.sha256, s.mode) for s in by_path]


def test_no_invalid_line_needs_no_frame_of_them(spark, tmp_path):
    scans = [_scan(tmp_path, b'{"a":1}\nnot json\n', ECE, "valid.jsonl")]
    texts = _file_texts(spark, scans)
    without = extract_records(ECE, None, line_files=texts)
    with_empty = extract_records(ECE, spark.createDataFrame([], INVALID_SCHEMA), line_files=texts)
    assert without.schema == with_empty.schema
    assert sorted(without.collect()) == sorted(with_empty.collect())
    reasons = [r.corrupt_reason for r in without.orderBy("record_index").collect()]
    assert reasons == [None, "not a JSON object"]
