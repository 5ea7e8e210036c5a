"""One DataWorks entity-key rule: gold's key of an envelope row is its family table's `entity_key`."""

from __future__ import annotations

import importlib

from gold import change_history
from silver import dataworks_catalog as catalog
from tests.support.dataworks_samples import SAMPLES, events


def test_gold_keys_every_sample_event_as_its_family_table_does(spark):
    frame = events(spark, SAMPLES).cache()
    gold = {r["change_id"]: r["entity_urn"] for r in change_history._dataworks_events(frame).collect()}
    silver: dict[str, set[str]] = {}
    for table in catalog.FAMILY_TABLES:
        for row in importlib.import_module(table).SPEC.transform(frame).collect():
            event = row["parent_event_id"] if "parent_event_id" in row else row["event_id"]
            silver.setdefault(event, set()).add(row["entity_key"])
    frame.unpersist()
    compared = {event: keys.pop() for event, keys in silver.items() if len(keys) == 1}
    assert len(compared) >= len(catalog.FAMILY_TABLES)
    assert {event: gold[event] for event in compared} == compared


def test_status_names_come_from_the_catalog(spark):
    """ "instance-status-changes status: ... 5 failed, 6 succeeded, 7 sent to data quality"; the
    names are the catalog's enums (FAILURE, CHECKING), in silver and gold alike."""
    import json

    from tests.support.gold import source

    batch = source(
        spark,
        "silver.dataworks_events",
        *[
            dict(
                event_id=f"{code}-{status}",
                event_time="10:00",
                event_code=code,
                data=json.dumps({"status": status}),
            )
            for code in ("instance-status-changes", "dag-status-changes")
            for status in (5, 6, 7)
        ],
    )
    names = {
        r["change_id"]: r["details"].get("status_name")
        for r in change_history._dataworks_events(batch).collect()
    }
    instance, dag = catalog.status_names("instance_status"), catalog.status_names("dag_status")
    assert names == {
        "instance-status-changes-5": instance[5],
        "instance-status-changes-6": instance[6],
        "instance-status-changes-7": instance[7],
        "dag-status-changes-5": dag[5],
        "dag-status-changes-6": dag[6],
        "dag-status-changes-7": None,
    }
    assert (instance[5], instance[7]) == ("FAILURE", "CHECKING")
