"""A DataWorks task instance whose whole run is published within one second (one CloudEvent `time`
for every status), landed in reverse order, with event ids that sort against the run: the run
still ends as it ended. From the CloudEvents through silver into `gold.dataworks_instance_runs`."""

from __future__ import annotations

import datetime as dt

import pytest

from gold import dataworks_instance_runs, dataworks_node_reliability_daily
from silver import dataworks_events, dataworks_instance_status_changes
from tests.support.gold import assert_incremental_equals_full, build_all
from tests.support.tables import bronze_frame

STATUS_CHANGES = dataworks_instance_runs.STATUS_CHANGES
SECOND_MS = 1_720_753_680_000  # 2024-07-12T03:08:00Z, the CloudEvent time of every status


def cloud_event(event_id: str, task_id: int, status: int, **times: int) -> dict:
    data = {"eventCode": "instance-status-changes", "tenantId": 283789910656, "appId": 91234,
            "taskId": task_id, "nodeId": 700012003, "dagId": 446555330, "status": status,
            "dagType": 0, "taskType": 0, "createTime": SECOND_MS - 60_000, **times}  # fmt: skip
    return {
        "datacontenttype": "application/json;charset=utf-8",
        "data": data,
        "id": event_id,
        "source": "acs.dataworks",
        "specversion": "1.0",
        "time": "2024-07-12T11:08:00+08:00",
        "type": "dataworks:InstanceStatusChanges:InstanceStatusChanges",
    }


def one_second_runs() -> list[dict]:
    """Instance 1 sends its modifyTime (milliseconds), instance 2 no time at all; both succeed.
    Ids run backwards (`z` first), and the events are listed last status first."""
    running, finished = SECOND_MS + 310, SECOND_MS + 870
    with_times = [
        cloud_event("z-1", 1, 1, modifyTime=SECOND_MS + 50),
        cloud_event("y-1", 1, 2, modifyTime=SECOND_MS + 120),
        cloud_event("x-1", 1, 3, modifyTime=SECOND_MS + 200),
        cloud_event("w-1", 1, 4, modifyTime=running, beginRunningTime=running),
        cloud_event("v-1", 1, 6, modifyTime=finished, beginRunningTime=running, finishTime=finished),
    ]
    without_times = [cloud_event("z-2", 2, 1), cloud_event("y-2", 2, 4), cloud_event("x-2", 2, 6)]
    return list(reversed(with_times + without_times))


@pytest.fixture(scope="module")
def status_changes(spark):
    bronze = bronze_frame(spark, one_second_runs())
    typed = dataworks_instance_status_changes.SPEC.transform(dataworks_events.transform(bronze))
    return typed.where("size(_errors) = 0").drop("_errors").cache()


def test_a_run_published_within_one_second_in_reverse_order_ends_as_it_ended(status_changes):
    assert status_changes.count() == 8
    runs = build_all(dataworks_instance_runs.SPEC, {STATUS_CHANGES: status_changes})
    got = {r.instance_id: r for r in runs.collect()}
    assert [(i, got[i].final_status_name, got[i].is_finished, got[i].status_changes) for i in (1, 2)] == [
        (1, "SUCCESS", True, 5),
        (2, "SUCCESS", True, 3),
    ]
    assert got[1].started_at == dt.datetime(2024, 7, 12, 3, 8, 0, 310_000)
    assert got[1].finished_at == dt.datetime(2024, 7, 12, 3, 8, 0, 870_000)
    assert got[1].duration_seconds == pytest.approx(0.56)
    daily = build_all(dataworks_node_reliability_daily.SPEC, {STATUS_CHANGES: status_changes}).collect()
    assert [(r.runs, r.succeeded, r.failed) for r in daily] == [(2, 2, 0)]


@pytest.mark.slow  # builds gold twice per table
def test_the_run_order_holds_when_the_finish_arrives_before_the_rest(status_changes):
    first = status_changes.where("event_code IS NOT NULL AND status IN (4, 6)")
    second = status_changes.where("NOT (status IN (4, 6))")
    for spec in (dataworks_instance_runs.SPEC, dataworks_node_reliability_daily.SPEC):
        assert_incremental_equals_full(spec, {STATUS_CHANGES: first}, {STATUS_CHANGES: second})
