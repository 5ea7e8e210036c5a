"""A DataHub Actions action that POSTs each event to `lakehouse receive` and raises unless it is landed.

DataHub Actions acknowledges (commits the Kafka offset of) every event its pipeline is done
with, failed or not: with its default options (`retry_count: 0`, `failure_mode: CONTINUE`) an
action that fails once has its event appended to `failed_events.log` and the pipeline moves on,
so a receiver that is down loses the event. This action raises when the receiver does not answer
2xx (after waiting `backoff_seconds`, so the pipeline's retries are spread out); with the
pipeline's `retry_count` and `failure_mode: THROW` the pipeline then stops on that event without
acknowledging it, and a restart of `datahub actions` delivers it again (the YAML is in
docs/collectors.md). `lakehouse collect datahub-kafka` reads the same events from Kafka with no
such gap and is the durable path.

Pipeline config: `action: {type: "pipelines.collectors.datahub_action:LakehouseReceiverAction",
config: {url: http://receiver:8765/datahub, secret_env: LAKEHOUSE_RECEIVER_SECRET}}`. The class
is an Actions `Action` where `acryl-datahub-actions` is installed (it is in the Actions
process); elsewhere it is a plain class with the same methods.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass

import requests

try:  # the Actions process has it; the lakehouse itself does not need it
    from datahub_actions.action.action import Action as _ActionBase
except ImportError:  # pragma: no cover - depends on the environment
    _ActionBase = object


class NotLanded(Exception):
    """The receiver did not land the event; raising lets the pipeline retry, then stop."""


@dataclass(frozen=True)
class ReceiverActionConfig:
    url: str
    secret_env: str = "LAKEHOUSE_RECEIVER_SECRET"
    timeout_seconds: float = 10.0
    backoff_seconds: float = 2.0

    @classmethod
    def from_dict(cls, config: dict) -> ReceiverActionConfig:
        unknown = set(config) - set(cls.__dataclass_fields__)
        if unknown or "url" not in config:
            raise ValueError(f"action config needs `url`; unknown keys: {sorted(unknown) or 'none'}")
        return cls(**config)


class LakehouseReceiverAction(_ActionBase):
    """POST the event envelope (`event.as_json()`) to the receiver's `/datahub` route."""

    def __init__(self, config: ReceiverActionConfig, sleep: Callable[[float], object] = time.sleep) -> None:
        self.config = config
        self.sleep = sleep
        self.session = requests.Session()
        self.session.headers["Content-Type"] = "application/json"
        secret = os.environ.get(config.secret_env)
        if secret:
            self.session.headers["Authorization"] = f"Bearer {secret}"

    @classmethod
    def create(cls, config_dict: dict, ctx: object = None) -> LakehouseReceiverAction:
        return cls(ReceiverActionConfig.from_dict(config_dict or {}))

    def act(self, event) -> None:
        try:
            answer = self.session.post(
                self.config.url, data=event.as_json().encode("utf-8"), timeout=self.config.timeout_seconds
            )
        except requests.RequestException as exc:
            failure = f"{type(exc).__name__} reaching {self.config.url}"
        else:
            if 200 <= answer.status_code < 300:
                return
            failure = f"{answer.status_code} {answer.reason}: {answer.text[:200]}"
        self.sleep(self.config.backoff_seconds)
        raise NotLanded(f"the receiver did not land the event: {failure}")

    def close(self) -> None:
        self.session.close()
