"""OpenMetadata events as the server sends them (no `entityFullyQualifiedName`, `entity` as JSON
text) are keyed by name end to end; a warehouse an older release keyed by entity id is keyed by
name after one ordinary run, with no rebuild asked of its user, and then equals a new warehouse
built from the same landing."""

from __future__ import annotations

import dataclasses
import json

import pytest
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from pipelines.orchestration.runner import run_pipeline
from silver import openmetadata_change_events
from tests.support.engines import engine_store, skip_without_delta_spark, with_engine
from tests.support.openmetadata_forms import full_form, stored_form, table_entity
from tests.support.runs import data_tables
from tests.support.tables import table_differences

pytestmark = [pytest.mark.slow]

TABLE_ID = "c0000000-0000-4000-8000-0000000000cc"
FQN = "pg.crm.public.customers"
DOMAIN = {"id": "d-7", "type": "domain", "name": "Sales", "fullyQualifiedName": "Commercial.Sales"}
CUSTOMERS = table_entity(TABLE_ID, FQN, ["email", "name"], domains=[DOMAIN])
T0 = 1_717_243_200_000  # 2024-06-01T12:00:00Z


def _tag(fqn: str) -> str:
    return json.dumps(
        [{"tagFQN": fqn, "source": "Classification", "labelType": "Manual", "state": "Confirmed"}]
    )


def _event(number: int, event_type: str, minutes: int, version: float, fields: dict | None = None) -> dict:
    return {
        "id": f"5f0c6e1a-0000-4000-8000-00000000010{number}",
        "eventType": event_type,
        "entityType": "table",
        "entityId": TABLE_ID,
        "entityFullyQualifiedName": FQN,
        "previousVersion": round(version - 0.1, 1),
        "currentVersion": version,
        "userName": "alice",
        "timestamp": T0 + minutes * 60_000,
        "domains": [DOMAIN["id"]],
        **({"changeDescription": {"fieldsAdded": [], "fieldsUpdated": [], "fieldsDeleted": [], **fields}} if fields else {}),
    }  # fmt: skip


TAGGED = {**CUSTOMERS, "tags": json.loads(_tag("Tier.Tier1"))}
# One table's life in the forms a warehouse sees: the server's stored form (most events), a
# client's object form without the FQN, and the model's full form.
EVENTS = [
    stored_form(_event(1, "entityCreated", 0, 0.1), CUSTOMERS),
    stored_form(_event(2, "entityUpdated", 1, 0.2, {"fieldsAdded": [{"name": "columns.email.tags", "newValue": _tag("PII.Sensitive")}]}), CUSTOMERS),
    full_form({k: v for k, v in _event(3, "entityUpdated", 2, 0.3, {"fieldsAdded": [{"name": "tags", "newValue": _tag("Tier.Tier1")}]}).items() if k != "entityFullyQualifiedName"}, TAGGED),
    full_form(_event(4, "entityUpdated", 3, 0.4, {"fieldsDeleted": [{"name": "columns.email.tags", "oldValue": _tag("PII.Sensitive")}]}), TAGGED),
    stored_form(_event(5, "entityDeleted", 4, 0.4), TAGGED),
]  # fmt: skip
BOTH_ENGINES = [pytest.param("delta-rs"), pytest.param("delta-spark", marks=pytest.mark.slow)]


def _keyed_by_id(rows: DataFrame) -> DataFrame:
    """What an older release typed: the FQN only from `entityFullyQualifiedName`, else the id (the
    flag it did not have left null, so that this release's suite can read its rows)."""
    fqn = F.get_json_object("raw", "$.entityFullyQualifiedName")
    return rows.withColumns(
        {
            "entity_name_source": F.lit(None).cast("string"),
            "entity_fqn": fqn,
            "entity_key": F.concat(
                F.lit("openmetadata:"), "entity_type", F.lit(":"), F.coalesce(fqn, "entity_id")
            ),
        }
    )


def _older_release(patch: pytest.MonkeyPatch) -> None:
    spec = openmetadata_change_events.SPEC
    older = dataclasses.replace(spec, transform=lambda df: _keyed_by_id(spec.transform(df)), revision="")
    patch.setattr(openmetadata_change_events, "SPEC", older)


def _land(root) -> str:
    landing = root / "landing"
    folder = landing / "openmetadata" / "2024-06-01"
    folder.mkdir(parents=True)
    (folder / "events.jsonl").write_text("".join(json.dumps(e) + "\n" for e in EVENTS))
    return str(landing)


def _run(config, spark):
    summary = run_pipeline(config, spark=spark)
    assert not [k for k, r in summary.results.items() if r.status == "FAILED"]
    return summary


def _names(store) -> dict:
    history = store.read("gold.change_history").where("source = 'openmetadata'")
    governance = store.read("gold.entity_governance_timeline").where("source = 'openmetadata'")
    tags = store.read("gold.tag_timeline").where("source = 'openmetadata'")
    return {
        "entity_urns": {r.entity_urn for r in history.collect()},
        "entity_names": {r.entity_name for r in history.collect()},
        "platforms": {r.platform for r in governance.collect()},
        "tagged": {(r.entity_urn, r.tag_urn, r.end_reason) for r in tags.collect()},
    }


KEY = f"openmetadata:table:{FQN}"
COLUMN = f"openmetadata:column:{FQN}.email"
BY_NAME = {
    "entity_urns": {KEY, COLUMN},
    "entity_names": {FQN, f"{FQN}.email"},
    "platforms": {"pg"},
    "tagged": {(COLUMN, "PII.Sensitive", "REMOVED"), (KEY, "Tier.Tier1", "ENTITY_DELETED")},
}


@pytest.mark.parametrize("engine", BOTH_ENGINES)
def test_a_warehouse_keyed_by_id_is_keyed_by_name_after_one_run(config, spark, tmp_path, engine):
    skip_without_delta_spark(engine)

    landing = _land(tmp_path)  # one landing for both warehouses: their records' lineage is the same

    def settings(name: str):
        return with_engine(config.with_overrides(landing=landing, warehouse=str(tmp_path / name)), engine)

    old_settings = settings("old")
    with pytest.MonkeyPatch.context() as patch:
        _older_release(patch)
        _run(old_settings, spark)
    old = engine_store(spark, old_settings.warehouse, engine)
    before = _names(old)
    assert f"openmetadata:table:{TABLE_ID}" in before["entity_urns"]  # what the older release did
    assert TABLE_ID in before["platforms"]

    retyped = _run(old_settings, spark).results  # the next ordinary run, nothing new landed

    assert _names(old) == BY_NAME
    typed = retyped["silver_openmetadata_change_events"]  # the run reconciles: every bronze row typed again
    assert (
        typed.source_rows
        == typed.rows_in
        == typed.rows_out
        == old.read("bronze.openmetadata_change_events").count()
    )
    silver = old.read("silver.openmetadata_change_events").collect()
    assert {(r.entity_key, r.entity_name_source) for r in silver} == {(KEY, "event"), (KEY, "entity")}
    assert {r.entity_key for r in old.read("silver.openmetadata_field_changes").collect()} == {KEY}
    idle = _run(old_settings, spark).results  # corrected once: the run after it types nothing again
    assert {
        idle[t].status for t in ("silver_openmetadata_change_events", "silver_openmetadata_field_changes")
    } == {"SKIPPED"}

    new_settings = settings("new")
    _run(new_settings, spark)
    new = engine_store(spark, new_settings.warehouse, engine)
    assert _names(new) == BY_NAME
    differences = {}
    for table in data_tables(new):
        columns = [c for c in new.columns(table) if c in old.columns(table)]
        found = table_differences(new.read(table).select(*columns), old.read(table).select(*columns))
        if found:
            differences[table] = found
    assert not differences, "\n".join(f"{t}: {d}" for t, d in differences.items())
