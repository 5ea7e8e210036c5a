"""DataHub Actions delivering to the receiver: its defaults lose events, the documented options do not."""

from __future__ import annotations

import json
import socket

import pytest

from pipelines.collectors.datahub_action import LakehouseReceiverAction, NotLanded, ReceiverActionConfig
from tests.support import FIXTURES
from tests.support.receiver import landed_files, landed_lines, running_receiver
from tests.support.stand_in_datahub_actions import PipelineException, StandInActions

EVENTS = [
    json.loads(line) for line in (FIXTURES / "envelopes" / "datahub_bare.jsonl").read_text().splitlines()
]


def landed_events(landing) -> list[dict]:
    return [json.loads(line)["event"] for line in landed_lines(landing, "datahub_ece").elements()]


def action(url: str) -> LakehouseReceiverAction:
    return LakehouseReceiverAction(
        ReceiverActionConfig(url=url, timeout_seconds=5), sleep=lambda seconds: None
    )


def a_closed_port() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{probe.getsockname()[1]}/datahub"


def test_with_default_options_an_event_sent_while_the_receiver_is_down_is_lost(tmp_path):
    actions = StandInActions(EVENTS, tmp_path / "actions")
    actions.run(action(a_closed_port()))  # down: every event fails once and is acknowledged
    with running_receiver(tmp_path) as url:
        actions.run(action(url + "/datahub"))  # up again: nothing is delivered again
    assert actions.committed == len(EVENTS) and len(actions.failed_lines) == len(EVENTS)
    assert landed_events(tmp_path) == []


def test_with_retries_and_failure_mode_throw_the_pipeline_stops_and_a_restart_delivers_every_event_once(
    tmp_path,
):
    actions = StandInActions(EVENTS, tmp_path / "actions")
    with pytest.raises(PipelineException):
        actions.run(action(a_closed_port()), retry_count=3, failure_mode="THROW")
    assert actions.committed == 0  # the event that failed was not acknowledged
    with running_receiver(tmp_path) as url:
        actions.run(action(url + "/datahub"), retry_count=3, failure_mode="THROW")
    assert actions.committed == len(EVENTS)
    assert landed_events(tmp_path) == EVENTS


def test_a_thousand_events_delivered_one_at_a_time_land_once_in_order_in_one_landing_file(tmp_path):
    events = [dict(EVENTS[n % len(EVENTS)], version=n) for n in range(1_000)]
    actions = StandInActions(events, tmp_path / "actions")
    with running_receiver(tmp_path) as url:
        actions.run(action(url + "/datahub"), retry_count=3, failure_mode="THROW")
    assert actions.committed == 1_000 and actions.failed_lines == []
    assert landed_events(tmp_path) == events
    assert len(landed_files(tmp_path, "datahub_ece")) == 1


def test_the_action_raises_on_an_answer_other_than_2xx(tmp_path):
    with running_receiver(tmp_path, secret="not-sent") as url:
        with pytest.raises(NotLanded, match="401"):
            action(url + "/datahub").act(type("E", (), {"as_json": lambda self: json.dumps(EVENTS[0])})())
    assert (
        LakehouseReceiverAction.create({"url": "http://x/datahub"}).config.secret_env
        == "LAKEHOUSE_RECEIVER_SECRET"
    )
