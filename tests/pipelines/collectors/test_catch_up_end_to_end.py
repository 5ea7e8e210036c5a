"""Senders that give up, then the catch-up pulls: every event once in silver, every refusal in ops.

OpenMetadata from 1.3 on records a failed delivery and moves on; DataHub's audit search shows an
event minutes after its timestamp. Against stand-ins that behave so, a receiver that was down and
refused a body, then `collect openmetadata` and `collect datahub-audit` with its overlap, give
silver every event once, `ops.collector_losses` the refusal and `ops.dq_results` the late-indexed
count. Runs the pipeline on the suite's JVM, so a slow test.
"""

from __future__ import annotations

import datetime as dt
import socket

import pytest

from pipelines.collectors.openmetadata import OpenMetadataPull, OpenMetadataSettings
from pipelines.core.graph import load_graph
from pipelines.orchestration.runner import run_pipeline
from pipelines.quality.report import build_report
from pipelines.store import open_store
from tests.support.audit_collector import T0, T0_MS, collector
from tests.support.engines import with_engine
from tests.support.receiver import running_receiver
from tests.support.stand_in_datahub import StandInAuditServer
from tests.support.stand_in_openmetadata import StandInOpenMetadata

pytestmark = pytest.mark.slow
# the tables these sources feed, and nothing else: each task of a run costs its start-up
TASKS = (
    "bronze_openmetadata_change_events",
    "silver_openmetadata_change_events",
    "bronze_datahub_audit_events",
    "silver_datahub_audit_events",
)


def _build(config, spark, landing, warehouse):
    conf = with_engine(config.with_overrides(landing=str(landing), warehouse=str(warehouse)), "delta-rs")
    run_pipeline(conf, ("bronze", "silver"), spark=spark, graph=load_graph().only(TASKS))
    return open_store(spark, conf.warehouse, "delta-rs")


def test_a_receiver_down_for_a_while_then_the_catch_up_pulls_give_every_event_once_in_silver(
    config, spark, tmp_path
):
    landing, warehouse = tmp_path / "landing", tmp_path / "warehouse"
    minute = 60_000
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        down = f"http://127.0.0.1:{probe.getsockname()[1]}/openmetadata"
    with StandInOpenMetadata() as openmetadata, StandInAuditServer(token="t") as audit:
        missed = openmetadata.change([T0_MS - 50 * minute + i * 2_000 for i in range(300)])
        openmetadata.deliver(down)  # 1.3 on: recorded as failed, never sent again
        delivered = openmetadata.change([T0_MS - 20 * minute + i * 2_000 for i in range(200)])
        delivered[7]["changeDescription"]["fieldsAdded"][0]["newValue"] = (
            "x" * 5_000
        )  # over the receiver's limit
        with running_receiver(landing, max_body_bytes=4_000) as url:
            openmetadata.deliver(url + "/openmetadata")
        pull = OpenMetadataPull(
            openmetadata.url,
            landing,
            "openmetadata",
            OpenMetadataSettings(backoff_seconds=0.0),
            None,
            [],
            report=lambda line: None,
            clock=lambda: T0_MS / 1000,
        )
        assert pull.collect(since=T0 - dt.timedelta(hours=1)).events == 500

        on_time = audit.add_events([T0_MS - 30 * minute + i * 1_000 for i in range(1_500)])
        now = [T0_MS]
        audit.index_now = lambda: now[0]
        late = audit.add_events([T0_MS - 2 * minute + i for i in range(25)], indexed_at_ms=T0_MS + 5 * minute)
        made, _, _ = collector(audit, landing, token="t")
        made.clock = lambda: now[0] / 1000
        made.collect(since=T0 - dt.timedelta(hours=1))
        now[0] = T0_MS + 15 * minute
        assert made.collect().late_events == 25
    store = _build(config, spark, landing, warehouse)

    om = store.read("silver.openmetadata_change_events")
    assert om.count() == om.select("om_event_id").distinct().count() == 500
    assert {r.om_event_id for r in om.select("om_event_id").collect()} == {
        e["id"] for e in missed + delivered
    }
    dh = store.read("silver.datahub_audit_events")
    assert dh.count() == dh.select("telemetry_trace_id").distinct().count() == len(on_time) + len(late)
    losses = store.read("ops.collector_losses").collect()
    assert [(r.collector, r.source, r.status, r["count"]) for r in losses] == [
        ("receiver", "openmetadata", "413", 1)
    ]
    late_metric = store.read("ops.dq_results").where("expectation = 'audit_late_indexed_events'").collect()
    assert [(r.unexpected_count, r.success) for r in late_metric] == [(25, False)]
    page = build_report(store)
    section = page[page.index('id="collector-losses"') :]
    assert "openmetadata" in section and "413" in section and "max_body_bytes" in section
