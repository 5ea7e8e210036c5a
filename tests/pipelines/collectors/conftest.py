"""Fixtures of the collector tests: one real Kafka broker on loopback for the session."""

from __future__ import annotations

import pytest

from tests.support.kafka_broker import BrokerUnavailable, start_broker


@pytest.fixture(scope="session")
def kafka_broker(tmp_path_factory):
    """A KRaft broker started once (its jars fetched from Maven Central on first use); the tests
    that want it skip, saying why, when it cannot be fetched or started."""
    try:
        broker = start_broker(tmp_path_factory.mktemp("kafka"))
    except BrokerUnavailable as exc:
        pytest.skip(str(exc))
    yield broker
    broker.stop()
