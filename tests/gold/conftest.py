"""Gold tests build from a few hand-written rows: they run as the pipeline runs a small input."""

from __future__ import annotations

import pytest

from tests.support.gold import source

DH = "silver.datahub_entity_changes"
OM_FIELDS = "silver.openmetadata_field_changes"
OM_EVENTS = "silver.openmetadata_change_events"


@pytest.fixture(autouse=True)
def _small_input(small_input):
    yield


@pytest.fixture
def sources(spark):
    """sources(datahub=[...], fields=[...], events=[...]): a batch of the association timelines'
    three silver sources, each from dict records (`tests.support.gold.source`)."""

    def make(datahub=(), fields=(), events=()):
        return {
            DH: source(spark, DH, *datahub),
            OM_FIELDS: source(spark, OM_FIELDS, *fields),
            OM_EVENTS: source(spark, OM_EVENTS, *events),
        }

    return make
