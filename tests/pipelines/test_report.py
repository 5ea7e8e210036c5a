"""`lakehouse dq-report`: the HTML report over ops.dq_results, silver.quarantine and ops.runs."""

from __future__ import annotations

import datetime as dt
import json
import shutil
import subprocess
from html.parser import HTMLParser

import pytest

from pipelines.cli import main
from pipelines.ops.bookkeeping import DQ_RESULTS, DQ_SCHEMA, RUNS, RUNS_SCHEMA
from pipelines.quality.report import build_report, write_report
from pipelines.store import open_store

T1 = dt.datetime(2026, 1, 1, 12, 0)
T2 = dt.datetime(2026, 1, 1, 12, 15)
QUARANTINE_SCHEMA = (
    "quarantine_id string, source_table string, event_id string, raw string, failed_checks array<string>, "
    "run_id string, quarantined_at timestamp, source_file string, record_index long"
)
BRONZE_TABLES = {"src_a": "bronze.src_a"}
EVIL = "<script>alert(1)</script>"


def dq_row(run, table, name, success, unexpected, total, examples, at, severity="drop"):
    percent = 100.0 * unexpected / total if total else 0.0
    return (
        run,
        table,
        name,
        "expect_column_values_to_not_be_null",
        "event_time",
        severity,
        success,
        unexpected,
        total,
        percent,
        json.dumps(examples),
        at,
    )


def run_row(run, job, table, status, source, rows_in, out, quarantined, duplicates, reconciles=None, at=T1):
    return (
        run,
        job,
        table,
        at,
        at + dt.timedelta(seconds=3),
        status,
        source,
        rows_in,
        out,
        quarantined,
        duplicates,
        1,
        reconciles,
        "",
    )


@pytest.fixture(scope="module")
def warehouse(spark, tmp_path_factory):
    """Two runs: run-1 with a reconciliation mismatch, run-2 (latest) with a failing expectation."""
    path = tmp_path_factory.mktemp("report") / "warehouse"
    store = open_store(spark, path, "delta-rs")
    store.append(
        spark.createDataFrame(
            [
                dq_row("run-1", "silver.a1", "event_id_not_null", True, 0, 5, [], T1, "fail"),
                dq_row("run-1", "silver.a1", "event_time_parsed", False, 1, 5, ["1970"], T1),
                dq_row("run-2", "silver.a1", "event_id_not_null", True, 0, 10, [], T2, "fail"),
                dq_row("run-2", "silver.a1", "event_time_parsed", False, 3, 10, [EVIL, "not-a-date"], T2),
                dq_row("run-2", "silver.b", "actor_present", True, 0, 4, [], T2, "warn"),
            ],
            DQ_SCHEMA,
        ),
        DQ_RESULTS,
    )
    store.append(
        spark.createDataFrame(
            [
                run_row("run-1", "bronze_src_a", "bronze.src_a", "SUCCESS", 5, 5, 5, 0, 0),
                run_row("run-1", "silver_a1", "silver.a1", "SUCCESS", 5, 5, 3, 1, 0, "src_a"),
                run_row("run-2", "bronze_src_a", "bronze.src_a", "SUCCESS", 10, 10, 10, 0, 0, at=T2),
                run_row("run-2", "silver_a1", "silver.a1", "SUCCESS", 10, 10, 6, 3, 1, "src_a", at=T2),
                run_row("run-2", "silver_b", "silver.b", "SUCCESS", 6, 4, 4, 0, 0, at=T2),
            ],
            RUNS_SCHEMA,
        ),
        RUNS,
    )
    store.append(
        spark.createDataFrame(
            [
                ("q1", "silver.a1", "e1", "{}", ["event_time_parsed"], "run-1", T1, "f1", 1),
                ("q2", "silver.a1", "e2", "{}", ["event_time_parsed", "cast:actor"], "run-2", T2, "f2", 1),
                ("q3", "silver.a1", "e3", "{}", ["event_time_parsed"], "run-2", T2, "f2", 2),
                ("q4", "silver.a1", None, "x", ["malformed JSON"], "run-2", T2, "f2", 3),
            ],
            QUARANTINE_SCHEMA,
        ),
        "silver.quarantine",
    )
    return path


class Cells(HTMLParser):
    """Rows of each <table>, keyed by its class, as lists of cell texts; and tag names seen."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: dict[str, list[dict]] = {}
        self.tags: set[str] = set()
        self._table: list[dict] | None = None
        self._row: dict | None = None
        self._cell: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)
        attrs = dict(attrs)
        if tag == "table":
            self._table = self.tables.setdefault(f"{attrs.get('class')}:{attrs.get('data-table', '')}", [])
        elif tag == "tr" and self._table is not None:
            self._row = {"class": attrs.get("class") or "", "cells": []}
        elif tag in ("td", "th") and self._row is not None:
            self._cell = []

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None and self._row is not None:
            self._row["cells"].append("".join(self._cell).strip())
            self._cell = None
        elif tag == "tr" and self._row is not None and self._table is not None:
            self._table.append(self._row)
            self._row = None
        elif tag == "table":
            self._table = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)


def parse(page: str) -> Cells:
    cells = Cells()
    cells.feed(page)
    return cells


def check_report_page(page: str) -> None:
    """What a reader must see, whether the page comes from the file or from Chromium's DOM."""
    cells = parse(page)
    latest = cells.tables["expectations:silver.a1"][:3]  # header + the latest run's two rows first
    failing = latest[1]
    assert failing["class"] == "fail"
    assert failing["cells"][:7] == [
        "event_time_parsed",
        "expect_column_values_to_not_be_null (event_time)",
        "drop",
        "FAIL",
        "3",
        "10",
        "30.00%",
    ]
    assert EVIL in failing["cells"][7] and "not-a-date" in failing["cells"][7]
    assert latest[2]["cells"][:4] == [
        "event_id_not_null",
        "expect_column_values_to_not_be_null (event_time)",
        "fail",
        "PASS",
    ]
    assert cells.tables["expectations:silver.b"][1]["cells"][3] == "PASS"
    quarantine = {r["cells"][0]: r["cells"][1:] for r in cells.tables["quarantine:silver.a1"][1:]}
    assert quarantine == {
        "event_time_parsed": ["3", "2"],
        "cast:actor": ["1", "1"],
        "malformed JSON": ["1", "1"],
    }
    checks = [r["cells"] for r in cells.tables["reconciliation:"][1:]]
    assert checks == [
        ["run-2", "src_a", "silver.a1", "10", "10", "6", "3", "1", "10", "OK"],
        ["run-1", "src_a", "silver.a1", "5", "5", "3", "1", "0", "4", "MISMATCH"],
    ]
    overview = [r["cells"] for r in cells.tables["overview:"][1:]]
    assert overview == [
        ["silver.a1", "run-2", "2", "1", "30.00%", "4"],
        ["silver.b", "run-2", "1", "0", "0.00%", "0"],
    ]
    assert "svg" in cells.tags and "polyline" in cells.tags
    assert "script" not in cells.tags  # the example value is text, not markup


def test_report_shows_expectations_quarantine_trend_and_reconciliation(spark, warehouse):
    page = build_report(open_store(spark, warehouse, "delta-rs"), BRONZE_TABLES)
    check_report_page(page)
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    for external in ("<script", "<link", " src=", "@import", "url(", 'href="http', "href='http"):
        assert external not in page
    assert 'href="#dq-silver.a1"' in page  # the overview links within the page only
    assert "Previous run run-1" in page  # earlier runs are kept, folded


def test_empty_warehouse_says_there_is_no_data(spark, tmp_path, capsys):
    code = main(["dq-report", "--warehouse", str(tmp_path / "empty")])
    out, err = capsys.readouterr()
    assert (code, err) == (0, "")
    path = tmp_path / "empty" / "reports" / "dq_report.html"
    assert out.strip() == str(path)
    assert "No data yet" in path.read_text(encoding="utf-8")


def chromium() -> str | None:
    return next(
        (shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome") if shutil.which(n)), None
    )


@pytest.mark.slow  # starts a browser, twice
@pytest.mark.skipif(
    chromium() is None, reason="chromium is not installed (apt-get install -y chromium chromium-driver)"
)
def test_report_renders_in_headless_chromium(spark, warehouse, tmp_path):
    path = write_report(open_store(spark, warehouse, "delta-rs"), tmp_path / "dq.html", BRONZE_TABLES)
    flags = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={tmp_path / 'profile'}",
    ]
    result = subprocess.run(
        [chromium(), *flags, "--dump-dom", path.as_uri()], capture_output=True, text=True, timeout=180
    )
    assert result.returncode == 0, result.stderr[-2000:]
    check_report_page(result.stdout)
    shot = tmp_path / "dq.png"
    subprocess.run(
        [chromium(), *flags, f"--screenshot={shot}", "--window-size=1400,1800", path.as_uri()],
        capture_output=True,
        timeout=180,
        check=True,
    )
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
