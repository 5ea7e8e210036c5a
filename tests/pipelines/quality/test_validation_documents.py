"""GX validation documents: one per validated table per run, and `lakehouse vacuum` keeps them bounded.

Real runs on a tiny DataHub audit feed write the documents; their age is set on disk
(`os.utime`), as a schedule running for months would leave them.
"""

from __future__ import annotations

import json
import os
import time

from pipelines.cli import main
from pipelines.core.config import load_config
from pipelines.core.graph import load_graph
from pipelines.orchestration.runner import run_pipeline
from pipelines.quality.validation_documents import DAY_SECONDS, LABEL, expired, table_folder

SILVER = "silver.datahub_audit_events"


def _land(landing, number: int) -> None:
    folder = landing / "datahub_audit"
    folder.mkdir(parents=True, exist_ok=True)
    record = {
        "eventType": "SearchEvent",
        "timestamp": 1767268800000 + number,
        "actorUrn": "urn:li:corpuser:a",
    }
    (folder / f"events-{number}.jsonl").write_text(json.dumps(record) + "\n")


def _age(path, days: float, now: float | None = None) -> None:
    when = (time.time() if now is None else now) - days * DAY_SECONDS
    os.utime(path, (when, when))


def _documents(warehouse) -> list[str]:
    return sorted(p.name for p in table_folder(warehouse, SILVER).glob("*.json"))


def _vacuum(warehouse, capsys, *extra: str) -> int:
    assert main(["vacuum", "--warehouse", str(warehouse), *extra]) == 0
    lines = dict(line.split(": ", 1) for line in capsys.readouterr().out.splitlines() if ": " in line)
    return int(lines[LABEL].split()[0])


def test_vacuum_deletes_documents_past_the_retention_and_keeps_each_tables_newest(spark, tmp_path, capsys):
    settings = load_config(None).with_overrides(
        landing=str(tmp_path / "landing"), warehouse=str(tmp_path / "warehouse")
    )
    audit_tasks = load_graph().up_to(["silver_datahub_audit_events"])  # the feed's bronze and silver tasks
    for number in (1, 2):
        _land(settings.landing, number)
        run_pipeline(settings, graph=audit_tasks, spark=spark)
    first, second = _documents(settings.warehouse)
    summary = json.loads((table_folder(settings.warehouse, SILVER) / second).read_text())
    assert summary["suite_name"] == SILVER and summary["meta"]["run_id"] == second.removesuffix(".json")
    folder = table_folder(settings.warehouse, SILVER)
    _age(folder / first, 100)
    _age(folder / second, 95)
    capsys.readouterr()

    assert _vacuum(settings.warehouse, capsys, "--dry-run") == 1
    assert _documents(settings.warehouse) == [first, second]  # a dry run deletes nothing
    assert _vacuum(settings.warehouse, capsys, "--validation-document-days", "0") == 0
    assert _vacuum(settings.warehouse, capsys) == 1  # the default 90 days
    assert _documents(settings.warehouse) == [second]  # older than 90 days, but the table's newest

    _land(settings.landing, 3)
    run_pipeline(settings, graph=audit_tasks, spark=spark)
    third = next(name for name in _documents(settings.warehouse) if name != second)
    assert _vacuum(settings.warehouse, capsys, "--validation-document-days", "96") == 0
    assert _vacuum(settings.warehouse, capsys) == 1
    assert _documents(settings.warehouse) == [third]


def test_expired_counts_days_per_table_and_never_the_newest(tmp_path):
    now = time.time()
    ages = {"silver.a": {"r1": 40, "r2": 31, "r3": 29}, "silver.b": {"r1": 50}}
    for table, documents in ages.items():
        folder = table_folder(tmp_path, table)
        folder.mkdir(parents=True)
        for run, days in documents.items():
            (folder / f"{run}.json").write_text("{}")
            _age(folder / f"{run}.json", days, now)
    (table_folder(tmp_path, "silver.a") / "notes.txt").write_text("not a document")
    _age(table_folder(tmp_path, "silver.a") / "notes.txt", 100, now)

    names = lambda days: sorted(f"{p.parent.name}/{p.name}" for p in expired(tmp_path, days, now))  # noqa: E731
    assert names(30) == ["silver.a/r1.json", "silver.a/r2.json"]
    assert names(35) == ["silver.a/r1.json"]
    assert names(60) == []
    assert names(0) == []
    assert expired(tmp_path / "no-warehouse", 30) == []
