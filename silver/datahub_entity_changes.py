"""silver.datahub_entity_changes: typed DataHub Entity Change Events, one row per bronze ECE record.

Every bronze row lands here except parseable proposals (entityType actionRequest, see
`silver/datahub_action_requests.py`); corrupt rows are kept with their `bronze_corrupt` error so the
runner quarantines them and the reconciliation (bronze = entity changes + action requests) holds.
Parameter columns come from the catalog (`conf/catalogs/datahub_ece.yaml`), not from a list here.
"""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from pipelines.core.table_specs import ERRORS_COLUMN, SilverTableSpec
from pipelines.runtime.sql_expressions import column, name
from silver.common import lineage
from silver.datahub_catalog import (
    ece_envelope,
    ece_errors,
    load_catalog,
    schema_field_parent_text,
    typed_parameters,
)

TABLE = "silver.datahub_entity_changes"
PARENT_COLUMN = "parent_urn"  # the catalog's `parentUrn` key feeds it (after the schemaField's dataset)


def transform(bronze: DataFrame) -> DataFrame:
    """Type bronze ECE rows: envelope columns, typed parameters, parameters_extra, `_errors`."""
    catalog = load_catalog()
    envelope = ece_envelope(bronze).where(~F.col("is_action_request"))
    typed = typed_parameters(name("parameters"), name("category"), catalog.category_parameters())
    columns = dict(typed.columns)
    parent = f"coalesce({schema_field_parent_text(name('entity_urn'))}, {columns.pop(PARENT_COLUMN)})"
    return envelope.select(
        "event_id",
        "event_time",
        "event_date",
        "event_time_unit",
        "entity_urn",
        "entity_type",
        "category",
        "operation",
        "modifier",
        "actor",
        "impersonator",
        "event_version",
        column(parent, PARENT_COLUMN),
        "parameters",
        column(typed.extra, "parameters_extra"),
        *[column(text, alias) for alias, text in columns.items()],
        *lineage(),
        ece_errors(typed).alias(ERRORS_COLUMN),
    )


SPEC = SilverTableSpec(
    table=TABLE,
    source="bronze.datahub_entity_change_events",
    transform=transform,
    reconciles="datahub_ece",
)
