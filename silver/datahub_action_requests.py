"""silver.datahub_action_requests: DataHub proposals (ECE rows with entityType actionRequest).

Creation events (CREATE / CREATED) and DataHub Cloud status changes (PENDING / COMPLETED with
actionRequestStatus / actionRequestResult) are rows of this one table, so `gold.proposals` can
fold a proposal's life from it. The JSON-text parameters (domains, owners, structuredProperties)
are decoded to arrays; which keys a proposal type carries comes from the catalog.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from pipelines.core.table_specs import ERRORS_COLUMN, SilverTableSpec
from pipelines.runtime.sql_expressions import column, literal, name
from silver.common import lineage
from silver.datahub_catalog import ece_envelope, ece_errors, load_catalog, typed_parameters

TABLE = "silver.datahub_action_requests"


def may_be_proposal(entity_type: str) -> Column:
    """A cheap superset of the proposal rows, tested on the raw text before any JSON parsing.

    A record whose `entityType` is `entity_type` has that text in `raw` unless one of its
    letters is written as a `\\uXXXX` escape (the only escape JSON has for a letter), so
    nothing is missed; a few per cent of the feed are proposals, and the rest need not have
    their envelope, parameters and event id parsed only to be dropped.
    """
    raw = F.col("raw")
    return ~F.col("is_corrupt") & (raw.contains(entity_type) | raw.contains("\\u"))


def transform(bronze: DataFrame) -> DataFrame:
    """Type the parseable actionRequest rows of bronze ECE; the rest belong to datahub_entity_changes."""
    catalog = load_catalog()
    candidates = bronze.where(may_be_proposal(catalog.proposal_entity_type))
    envelope = ece_envelope(candidates).where(F.col("is_action_request"))
    typed = typed_parameters(
        name("parameters"),
        f"{name('parameters')}[{literal('actionRequestType')}]",
        catalog.proposal_type_parameters(),
        always=catalog.proposal_parameters,
    )
    return envelope.select(
        "event_id",
        "event_time",
        "event_date",
        "event_time_unit",
        F.col("entity_urn").alias("proposal_urn"),
        "entity_type",
        "category",
        "operation",
        "modifier",
        "actor",
        "impersonator",
        "event_version",
        *[column(text, alias) for alias, text in typed.columns.items()],
        "parameters",
        column(typed.extra, "parameters_extra"),
        *lineage(),
        ece_errors(typed).alias(ERRORS_COLUMN),
    )


SPEC = SilverTableSpec(
    table=TABLE,
    source="bronze.datahub_entity_change_events",
    transform=transform,
    reconciles="datahub_ece",
    # the catalog's proposal types: a table typed before workflow form requests were typed
    # (their keys in `parameters_extra`) is typed again once
    revision="workflow-form-requests-1",
)
