"""`gold.proposals`: one row per DataHub proposal (actionRequest) with its current status and why.

Status rules, in order:
1. STATUS_EVENT: the latest DataHub Cloud status change that completed the
   proposal (operation or actionRequestStatus COMPLETED, actionRequestResult
   ACCEPTED | REJECTED) decides; resolved_at/by are that event's.
2. INFERRED_FROM_CHANGE: otherwise APPLIED when a proposed value appears on the
   resource at or after `created_at` (OSS servers emit no status events, so this
   is the only evidence there); resolved_at/by are the first such change's. A
   structured-property proposal is applied by a STRUCTURED_PROPERTY ADD/MODIFY of
   a proposed `propertyUrn` on the resource (values are not compared: newer
   servers omit them); a CREATE_GLOSSARY_TERM proposal by the LIFECYCLE CREATE of
   the glossary term `urn:li:glossaryTerm:<glossaryEntityName>` (a term created
   under a generated id cannot be matched to its proposal and stays PENDING).
3. PENDING otherwise (status_rule null).
Only proposals whose creation event is known get a row. A DataHub Cloud workflow form request
(access request) is one too: its completion carries its `result`; its resource is taken from
whichever of its events names one (older servers name it on none), and what it proposes is the
workflow, the form's answers (`fields`) and the access's expiry.

The review requests of the other catalogs (OpenMetadata tasks, DataWorks permission requests:
`gold.review_requests`) get rows too, each in a group of its own; `source` says whose.
`hours_to_resolution` is the time from creation to resolution, and `status_rule` says how the
resolution is known: recorded by a status event, or inferred from a later change.

Group: the resource (`resource_urn`, else the proposal), so a later entity
change on the resource recomputes its proposals. A status event is grouped by
its own `resourceUrn`: one that lacks it lands in the proposal's group and is
attached only by a rebuild of the resource's group. `linked_groups` rebuilds the
groups linked through proposals together (see there).
"""

from __future__ import annotations

from functools import reduce

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from gold import GROUP, column_names, empty_frame, string_map
from gold import review_requests as reviews
from gold.associations import DOMAIN, GLOSSARY_TERM, OWNERSHIP, TAG
from gold.intervals import root_urn
from pipelines.core.table_specs import GoldTableSpec, RebuildGroups
from pipelines.runtime.sql_expressions import one_of

ACTION_REQUESTS = "silver.datahub_action_requests"
DATAHUB_CHANGES = "silver.datahub_entity_changes"
SOURCES = (ACTION_REQUESTS, DATAHUB_CHANGES, reviews.OM_CHANGE_EVENTS, reviews.DATAWORKS_APPROVALS)
GROUP_COLUMN = "group_urn"

CREATE_OPERATIONS = ("CREATE", "CREATED")
COMPLETED = "COMPLETED"
RESULTS = ("ACCEPTED", "REJECTED")
APPLIED, PENDING = "APPLIED", "PENDING"
STATUS_EVENT, INFERRED_FROM_CHANGE = "STATUS_EVENT", "INFERRED_FROM_CHANGE"

# actionRequestType -> (the change category that applies it, its operations, the ECE value column)
INFERENCE: dict[str, tuple[str, tuple[str, ...], str | None]] = {
    "TAG_ASSOCIATION": ("TAG", ("ADD",), dict(TAG.keys)["tag_urn"]),
    "TERM_ASSOCIATION": ("GLOSSARY_TERM", ("ADD",), dict(GLOSSARY_TERM.keys)["term_urn"]),
    "DOMAIN_ASSOCIATION": ("DOMAIN", ("ADD",), dict(DOMAIN.keys)["domain_urn"]),
    "OWNER_ASSOCIATION": ("OWNERSHIP", ("ADD",), dict(OWNERSHIP.keys)["owner_urn"]),
    "UPDATE_DESCRIPTION": ("DOCUMENTATION", ("ADD", "MODIFY"), "description"),
    "STRUCTURED_PROPERTY_ASSOCIATION": ("STRUCTURED_PROPERTY", ("ADD", "MODIFY"), "propertyUrn"),
    "CREATE_GLOSSARY_TERM": ("LIFECYCLE", ("CREATE",), None),  # the value is the created term's id
}
CREATE_GLOSSARY_TERM = "CREATE_GLOSSARY_TERM"
GLOSSARY_TERM_PREFIX = "urn:li:glossaryTerm:"
_CATEGORY_ALIASES = {kind_category: "OWNERSHIP" for kind_category in OWNERSHIP.categories}

SCHEMA = (
    "proposal_urn string, action_request_type string, resource_urn string, resource_type string, "
    "sub_resource_type string, sub_resource string, created_by string, created_at timestamp, status string, "
    "status_rule string, resolved_at timestamp, resolved_by string, resolved_event_id string, "
    "proposed map<string,string>, group_urn string, source string, assignees array<string>, "
    "hours_to_resolution double"
)
COLUMNS = column_names(SCHEMA)


def proposal_group() -> Column:
    return F.coalesce(F.col("resource_urn"), F.col("proposal_urn"))


def _term_created() -> Column:
    return F.col("entity_urn").startswith(GLOSSARY_TERM_PREFIX)


def _changes_filter() -> Column:
    category = _normalised_category(F.col("category"))
    conditions = [
        (category == c)
        & F.col("operation").isin(*ops)
        & (_term_created() if c == "LIFECYCLE" else F.lit(True))
        for c, ops, _ in INFERENCE.values()
    ]
    out = conditions[0]
    for condition in conditions[1:]:
        out = out | condition
    return out


def _normalised_category(category: Column) -> Column:
    out = category
    for alias, name in _CATEGORY_ALIASES.items():
        out = F.when(category == alias, F.lit(name)).otherwise(out)
    return out


def relevant(source_table: str, rows: DataFrame) -> DataFrame:
    """Every proposal event (group: its resource), and the entity changes that can apply one."""
    if source_table == ACTION_REQUESTS:
        return rows.withColumn(GROUP, proposal_group())
    if source_table == DATAHUB_CHANGES:
        return rows.filter(_changes_filter()).withColumn(GROUP, root_urn())
    if source_table in (reviews.OM_CHANGE_EVENTS, reviews.DATAWORKS_APPROVALS):
        return reviews.relevant(source_table, rows)
    raise ValueError(f"gold.proposals: unknown source table {source_table!r}")


def proposed_term_urn() -> Column:
    """The glossary term a CREATE_GLOSSARY_TERM creation proposes (null for other rows)."""
    is_term_creation = (F.col("action_request_type") == CREATE_GLOSSARY_TERM) & F.col("operation").isin(
        *CREATE_OPERATIONS
    )
    return F.when(is_term_creation, F.concat(F.lit(GLOSSARY_TERM_PREFIX), F.col("glossaryEntityName")))


def _links(requests: DataFrame) -> DataFrame:
    """(proposal_urn, _group): every group a proposal's rows sit in, and the group of the glossary
    term a term creation proposes (one pass over the requests)."""
    groups = F.filter(F.array(F.col(GROUP), proposed_term_urn()), lambda g: g.isNotNull())
    return requests.select("proposal_urn", F.explode(groups).alias(GROUP))


def _linked(touched, groups_of, proposals_of, union):
    """The two hops, written once for frames and for values. A touched proposal group (where a
    resource-less decision sits) brings in the groups of its proposal's rows (its resource, a
    proposed glossary term); then every group so far brings in the groups of all proposals
    linked to it (a resource's other proposals with their resource-less decisions, a created
    term's proposal), which the rebuilt groups need."""
    resources = union(touched, groups_of(touched))
    return union(resources, proposals_of(resources))


def linked_groups(touched: DataFrame, relevant_sources: dict[str, DataFrame]) -> DataFrame:
    """Touched groups plus the groups linked through a proposal (`_linked`)."""
    requests = relevant_sources.get(ACTION_REQUESTS)
    if requests is None:
        return touched
    links = _links(requests)

    def groups_of(proposals: DataFrame) -> DataFrame:
        return links.join(
            proposals.withColumnRenamed(GROUP, "proposal_urn"), "proposal_urn", "left_semi"
        ).select(GROUP)

    def proposals_of(groups: DataFrame) -> DataFrame:
        return links.join(groups, GROUP, "left_semi").select(F.col("proposal_urn").alias(GROUP))

    return _linked(touched, groups_of, proposals_of, DataFrame.unionByName)


def linked_group_values(touched: list[str], relevant_sources: dict[str, DataFrame]) -> set[str]:
    """`linked_groups` for touched groups known as values: each hop a filtering scan, collected."""
    requests = relevant_sources.get(ACTION_REQUESTS)
    if requests is None:
        return set(touched)
    links = _links(requests)

    def collected(column: str, where: set[str], keep: str) -> set[str]:
        rows = links.where(one_of(column, sorted(where, key=str))).select(keep).distinct().collect()
        return {row[0] for row in rows}

    def groups_of(proposals: set[str]) -> set[str]:
        return collected("proposal_urn", proposals, GROUP)

    def proposals_of(groups: set[str]) -> set[str]:
        return collected(GROUP, groups, "proposal_urn")

    return _linked(set(touched), groups_of, proposals_of, set.union)


def _first(df: DataFrame, partition: str, *order: Column) -> DataFrame:
    window = Window.partitionBy(partition).orderBy(*order)
    return df.withColumn("_n", F.row_number().over(window)).filter(F.col("_n") == 1).drop("_n")


def proposed_values() -> Column:
    """map<string,string> of what the proposal proposes (JSON text for lists)."""
    return string_map(
        {
            "tagUrn": F.col("tagUrn"),
            "glossaryTermUrn": F.col("glossaryTermUrn"),
            "description": F.col("description"),
            "parentNodeUrn": F.col("parentNodeUrn"),
            "glossaryEntityName": F.col("glossaryEntityName"),
            "domains": F.when(F.size("domains") > 0, F.to_json("domains")),
            "owners": F.when(F.size("owners") > 0, F.to_json("owners")),
            "structuredProperties": F.when(
                F.size("structuredProperties") > 0, F.to_json("structuredProperties")
            ),
            "workflowUrn": F.col("workflowUrn"),
            "fields": F.when(F.size("fields") > 0, F.to_json("fields")),
            "expiresAtMs": F.col("expiresAtMs"),
        }
    )


def _named_resources(action_requests: DataFrame) -> DataFrame:
    """Each proposal's resource as its earliest event naming one gives it (a workflow form
    request's creation may not: its completion does, on newer servers)."""
    named = action_requests.filter(F.col("resource_urn").isNotNull())
    return _first(named, "proposal_urn", F.col("event_time"), F.col("event_id")).select(
        "proposal_urn",
        F.col("resource_urn").alias("_named_urn"),
        F.col("resource_type").alias("_named_type"),
    )


def creations(action_requests: DataFrame) -> DataFrame:
    """The first creation event of each proposal, its resource named by any of its events."""
    created = action_requests.filter(F.col("operation").isin(*CREATE_OPERATIONS))
    first = _first(created, "proposal_urn", F.col("event_time"), F.col("event_id"))
    return first.join(_named_resources(action_requests), "proposal_urn", "left").select(
        "proposal_urn",
        "action_request_type",
        F.coalesce("resource_urn", "_named_urn").alias("resource_urn"),
        F.when(F.col("resource_urn").isNull(), F.col("_named_type"))
        .otherwise(F.col("resource_type"))
        .alias("resource_type"),
        "sub_resource_type",
        "sub_resource",
        F.col("actor").alias("created_by"),
        F.col("event_time").alias("created_at"),
        F.col("event_id").alias("created_event_id"),
        proposed_values().alias("proposed"),
        proposal_group().alias(GROUP_COLUMN),
        "tagUrn",
        "glossaryTermUrn",
        "domains",
        "owners",
        "description",
        "structuredProperties",
        "glossaryEntityName",
        proposed_term_urn().alias("proposed_term_urn"),
    )


def is_decision() -> Column:
    completed = (F.col("operation") == COMPLETED) | (F.col("action_request_status") == COMPLETED)
    return completed & F.col("action_request_result").isin(*RESULTS)


def decisions(action_requests: DataFrame) -> DataFrame:
    """The latest completing status event of each proposal (its result decides the status)."""
    decided = action_requests.filter(is_decision())
    return _first(decided, "proposal_urn", F.col("event_time").desc(), F.col("event_id").desc()).select(
        "proposal_urn",
        F.col("action_request_result").alias("decided_status"),
        F.col("event_time").alias("decided_at"),
        F.col("actor").alias("decided_by"),
        F.col("event_id").alias("decided_event_id"),
    )


def _expected_values(created: DataFrame) -> DataFrame:
    """One row per (proposal, change category, proposed value) that would show it was applied."""
    kind = F.col("action_request_type")
    values = F.when(kind == "TAG_ASSOCIATION", F.array("tagUrn"))
    values = values.when(kind == "TERM_ASSOCIATION", F.array("glossaryTermUrn"))
    values = values.when(kind == "DOMAIN_ASSOCIATION", F.col("domains"))
    values = values.when(kind == "OWNER_ASSOCIATION", F.transform("owners", lambda o: o["ownerUrn"]))
    values = values.when(kind == "UPDATE_DESCRIPTION", F.array("description"))
    values = values.when(
        kind == "STRUCTURED_PROPERTY_ASSOCIATION",
        F.transform("structuredProperties", lambda p: p["propertyUrn"]),
    )
    values = values.when(kind == CREATE_GLOSSARY_TERM, F.array("glossaryEntityName"))
    category = F.lit(None).cast("string")
    for request_type, (change_category, _, _) in INFERENCE.items():
        category = F.when(kind == request_type, F.lit(change_category)).otherwise(category)
    return created.select(
        "proposal_urn",
        F.coalesce("proposed_term_urn", "resource_urn").alias("target_urn"),
        F.when(F.col("proposed_term_urn").isNull(), F.col("sub_resource")).alias("sub_resource"),
        "created_at",
        category.alias("match_category"),
        F.explode(values).alias("match_value"),
    ).filter(F.col("match_value").isNotNull() & F.col("target_urn").isNotNull())


def _applying_changes(changes: DataFrame) -> DataFrame:
    """Entity changes that can apply a proposal, as (root, field path, category, value)."""
    category = _normalised_category(F.col("category"))
    value = F.lit(None).cast("string")
    for change_category, _, column in INFERENCE.values():
        if column is not None:
            # newer servers send a description change as `documentation`
            given = (
                F.coalesce(F.col(column), F.col("documentation"))
                if column == "description"
                else F.col(column)
            )
            value = F.when(category == change_category, F.coalesce(given, F.col("modifier"))).otherwise(value)
    created_term = F.regexp_extract("entity_urn", f"^{GLOSSARY_TERM_PREFIX}(.+)$", 1)
    value = F.when(category == "LIFECYCLE", created_term).otherwise(value)
    field_path = F.coalesce(F.col("fieldPath"), F.regexp_extract("entity_urn", r",([^,]*)\)$", 1))
    return changes.filter(_changes_filter()).select(
        root_urn().alias("change_root"),
        "entity_urn",
        F.when(F.col("parent_urn").isNotNull(), field_path).alias("change_field"),
        category.alias("match_category"),
        value.alias("match_value"),
        "event_time",
        "actor",
        "event_id",
    )


def applications(created: DataFrame, changes: DataFrame) -> DataFrame:
    """The first change at/after creation that puts a proposed value on the proposal's resource."""
    expected = _expected_values(created)
    applying = _applying_changes(changes)
    on_target = F.when(F.col("sub_resource").isNull(), F.col("entity_urn") == F.col("target_urn")).otherwise(
        F.col("change_field") == F.col("sub_resource")
    )
    matched = expected.join(
        applying.withColumnRenamed("change_root", "target_urn"),
        ["target_urn", "match_category", "match_value"],
    ).filter(on_target & (F.col("event_time") >= F.col("created_at")))
    return _first(matched, "proposal_urn", F.col("event_time"), F.col("event_id")).select(
        "proposal_urn",
        F.col("event_time").alias("applied_at"),
        F.col("actor").alias("applied_by"),
        F.col("event_id").alias("applied_event_id"),
    )


def build_proposals(action_requests: DataFrame, changes: DataFrame | None) -> DataFrame:
    """Proposal rows (`COLUMNS`) from proposal events and the entity changes of their resources."""
    created = creations(action_requests)
    decided = decisions(action_requests)
    joined = created.join(decided, "proposal_urn", "left")
    if changes is not None:
        joined = joined.join(applications(created, changes), "proposal_urn", "left")
    else:
        joined = joined.select(
            "*",
            F.lit(None).cast("timestamp").alias("applied_at"),
            F.lit(None).cast("string").alias("applied_by"),
            F.lit(None).cast("string").alias("applied_event_id"),
        )
    has_decision = F.col("decided_status").isNotNull()
    was_applied = F.col("applied_at").isNotNull()

    def pick(decided_value: str, applied_value: str) -> Column:
        return F.when(has_decision, F.col(decided_value)).when(was_applied, F.col(applied_value))

    return joined.select(
        "proposal_urn",
        "action_request_type",
        "resource_urn",
        "resource_type",
        "sub_resource_type",
        "sub_resource",
        "created_by",
        "created_at",
        F.when(has_decision, F.col("decided_status"))
        .when(was_applied, F.lit(APPLIED))
        .otherwise(F.lit(PENDING))
        .alias("status"),
        F.when(has_decision, F.lit(STATUS_EVENT))
        .when(was_applied, F.lit(INFERRED_FROM_CHANGE))
        .alias("status_rule"),
        pick("decided_at", "applied_at").alias("resolved_at"),
        pick("decided_by", "applied_by").alias("resolved_by"),
        pick("decided_event_id", "applied_event_id").alias("resolved_event_id"),
        "proposed",
        GROUP_COLUMN,
    )


def _resolution_hours() -> Column:
    return (F.unix_micros("resolved_at") - F.unix_micros("created_at")) / F.lit(3_600_000_000.0)


def build(sources: dict[str, DataFrame]) -> DataFrame:
    """Proposals of DataHub and the review requests of the other catalogs, in `COLUMNS`."""
    parts = []
    if sources.get(ACTION_REQUESTS) is not None:
        datahub = build_proposals(sources[ACTION_REQUESTS], sources.get(DATAHUB_CHANGES))
        parts.append(
            datahub.withColumns({"source": F.lit("datahub"), "assignees": F.array().cast("array<string>")})
        )
    others = (
        (reviews.OM_CHANGE_EVENTS, reviews.openmetadata_tasks),
        (reviews.DATAWORKS_APPROVALS, reviews.dataworks_approvals),
    )
    for table, requests in others:
        if sources.get(table) is not None:
            parts.append(requests(sources[table]).withColumn(GROUP_COLUMN, F.col("proposal_urn")))
    if not parts:
        return empty_frame(SCHEMA)
    rows = reduce(
        lambda a, b: a.unionByName(b),
        [p.withColumn("hours_to_resolution", _resolution_hours()) for p in parts],
    )
    return rows.select(*COLUMNS)


SPEC = GoldTableSpec(
    table="gold.proposals",
    sources=SOURCES,
    relevant=relevant,
    build=build,
    group_key=GROUP_COLUMN,
    row_key=("proposal_urn",),
    incremental=RebuildGroups(expand_groups=linked_groups, expand_group_values=linked_group_values),
)
