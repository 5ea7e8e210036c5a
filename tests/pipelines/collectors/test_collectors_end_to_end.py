"""From the catalogs' delivery to silver: what the collectors land reconciles through the pipeline.

landing records = bronze rows = silver rows + quarantined + duplicates, per source; events
collected or received once are in silver once. These run the pipeline (bronze and silver) on the
suite's JVM, so they are slow tests.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import uuid
from pathlib import Path

import pytest
import requests

from pipelines.orchestration.runner import run_pipeline
from pipelines.store import open_store
from tests.support import FIXTURES
from tests.support.audit_collector import T0, T0_MS, collector
from tests.support.engines import with_engine
from tests.support.receiver import landed_files, post_all, running_receiver, sample_events
from tests.support.stand_in_datahub import StandInAuditServer
from tests.support.tables import reconciliation

pytestmark = pytest.mark.slow
ENVELOPES = FIXTURES / "envelopes"


def _landed_records(landing: Path, folder: str) -> int:
    """Records as bronze counts them: lines of JSON Lines files, `usageEvents` of audit pages."""
    total = 0
    for path in landed_files(landing, folder):
        if folder == "datahub_audit":
            total += len(json.loads(path.read_bytes())["usageEvents"])
        else:
            total += sum(1 for line in path.read_bytes().splitlines() if line.strip())
    return total


def _build(config, spark, landing: Path, warehouse: Path):
    conf = with_engine(config.with_overrides(landing=str(landing), warehouse=str(warehouse)), "delta-rs")
    run_pipeline(conf, ("bronze", "silver"), spark=spark)
    return open_store(spark, conf.warehouse, "delta-rs")


def _reconciles(store, source: str, bronze_table: str, landed: int) -> dict:
    counts = reconciliation(store)[source]
    assert store.read(bronze_table).count() == landed == counts["rows_in"]
    assert counts["rows_out"] + counts["rows_quarantined"] + counts["rows_duplicate"] == counts["rows_in"]
    return counts


def test_collected_audit_events_are_each_in_silver_once_across_collects(config, spark, tmp_path):
    landing, warehouse = tmp_path / "landing", tmp_path / "warehouse"
    with StandInAuditServer(token="t") as server:
        first_hour = [T0_MS - 4 * 3_600_000 + i * 170 for i in range(12_000)]
        second_hour = [T0_MS - 2 * 3_600_000 + i * 400 for i in range(8_000)]
        server.add_events(first_hour + second_hour)
        made, _, _ = collector(server, landing, token="t", page_size=1000)
        assert made.collect(since=T0 - dt.timedelta(hours=5)).events == 20_000
        assert made.collect().events == 0
        store = _build(config, spark, landing, warehouse)
        _reconciles(store, "datahub_audit", "bronze.datahub_audit_events", 20_000)
        silver = store.read("silver.datahub_audit_events")
        assert silver.count() == silver.select("telemetry_trace_id").distinct().count() == 20_000

        server.add_events([T0_MS + i * 1_000 for i in range(1, 501)])
        made.clock = lambda: (T0_MS + 30 * 60_000) / 1000
        assert made.collect().events == 500
        store = _build(config, spark, landing, warehouse)
    _reconciles(store, "datahub_audit", "bronze.datahub_audit_events", 20_500)
    silver = store.read("silver.datahub_audit_events")
    assert silver.count() == silver.select("telemetry_trace_id").distinct().count() == 20_500


def _openmetadata_bodies(count: int) -> list[bytes]:
    """`count` distinct ChangeEvents (own `id`, own time) made from the bundled samples."""
    samples = sample_events("openmetadata")
    bodies = []
    for n in range(count):
        event = dict(samples[n % len(samples)])
        event["id"] = str(uuid.uuid5(uuid.NAMESPACE_URL, f"openmetadata-event-{n}"))
        event["timestamp"] = int(event.get("timestamp") or 1709539200000) + n
        bodies.append(json.dumps(event).encode("utf-8"))
    return bodies


def test_received_events_of_every_form_reconcile_from_landing_to_silver(config, spark, tmp_path):
    landing, warehouse = tmp_path / "landing", tmp_path / "warehouse"
    om = _openmetadata_bodies(10_000)
    webhook_body = (ENVELOPES / "openmetadata_webhook_body.json").read_bytes()
    datahub = [
        line.encode("utf-8")
        for name in ("datahub_bare.jsonl", "datahub_actions_envelope.jsonl", "datahub_platform_event.jsonl")
        for line in (ENVELOPES / name).read_text().splitlines()
    ]
    binary = json.loads((ENVELOPES / "dataworks_cloudevent_binary.json").read_text())
    with running_receiver(landing) as url:
        statuses = asyncio.run(
            post_all(
                url,
                [("/openmetadata", b) for b in om + om[:40] + [webhook_body, b'{"id": "broken",']]
                + [("/datahub", b) for b in datahub]
                + [("/dataworks", (ENVELOPES / "dataworks_cloudevent_structured.json").read_bytes())],
                concurrency=64,
            )
        )
        answer = requests.post(
            url + "/dataworks", data=json.dumps(binary["body"]), headers=binary["headers"], timeout=10
        )
    assert statuses == {200: len(om) + 40 + 2 + len(datahub) + 1} and answer.status_code == 200
    store = _build(config, spark, landing, warehouse)

    om_counts = _reconciles(
        store, "openmetadata", "bronze.openmetadata_change_events", _landed_records(landing, "openmetadata")
    )
    assert om_counts["rows_in"] == 10_000 + 40 + 2
    assert om_counts["rows_duplicate"] >= 40 and om_counts["rows_quarantined"] >= 1
    om_ids = {row.event_id for row in store.read("silver.openmetadata_change_events").collect()}
    assert len(om_ids) >= 10_000

    dh_counts = _reconciles(
        store, "datahub_ece", "bronze.datahub_entity_change_events", _landed_records(landing, "datahub_ece")
    )
    bare = len((ENVELOPES / "datahub_bare.jsonl").read_text().splitlines())
    assert dh_counts["rows_in"] == 3 * bare
    assert dh_counts["rows_duplicate"] == 2 * bare  # the two envelopes repeat the bare events

    dw_counts = _reconciles(
        store, "dataworks", "bronze.dataworks_events", _landed_records(landing, "dataworks")
    )
    assert (dw_counts["rows_in"], dw_counts["rows_duplicate"]) == (2, 1)  # binary mode = structured mode


def test_the_receiver_landing_beside_running_bronze_loses_nothing_and_no_file_is_read_half_written(
    config, spark, tmp_path
):
    import threading

    landing, warehouse = tmp_path / "landing", tmp_path / "warehouse"
    bodies = _openmetadata_bodies(3_000)
    acknowledged: list[int] = []
    lock = threading.Lock()
    remaining = iter(range(len(bodies)))

    def sender(url: str) -> None:
        with requests.Session() as session:
            while True:
                with lock:
                    n = next(remaining, None)
                if n is None:
                    return
                if session.post(url + "/openmetadata", data=bodies[n], timeout=30).status_code == 200:
                    with lock:
                        acknowledged.append(n)

    conf = with_engine(config.with_overrides(landing=str(landing), warehouse=str(warehouse)), "delta-rs")
    with running_receiver(landing, segment_max_bytes=50_000) as url:  # segments rolling while bronze reads
        senders = [threading.Thread(target=sender, args=(url,)) for _ in range(16)]
        for thread in senders:
            thread.start()
        runs_during = 0
        while any(thread.is_alive() for thread in senders) or runs_during == 0:
            run_pipeline(conf, ("bronze",), spark=spark)
            runs_during += 1
        for thread in senders:
            thread.join()
    run_pipeline(conf, ("bronze",), spark=spark)
    bronze = open_store(spark, conf.warehouse, "delta-rs").read("bronze.openmetadata_change_events")
    assert runs_during >= 2
    assert sorted(acknowledged) == list(range(len(bodies)))
    assert bronze.where("is_corrupt").count() == 0
    assert bronze.count() == _landed_records(landing, "openmetadata") == len(bodies)
    files = landed_files(landing, "openmetadata")
    assert len(files) > 10  # rolled while bronze ran
    assert bronze.select("source_file").distinct().count() == len(files)
