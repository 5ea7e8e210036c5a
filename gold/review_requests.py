"""Review requests of OpenMetadata and DataWorks, in the shape of `gold.proposals`' DataHub rows.

OpenMetadata tasks (a thread of type Task: request or update of a description or tags,
approval requests) reach the change event feed as `threadCreated`, `threadUpdated`,
`taskResolved` and `taskClosed` events whose `entity` is the thread: its `task` (`type`,
`assignees`, `status`, `suggestion`), `about` (an entity link
`<#E::table::<fqn>[::columns::<column>]>`), `createdBy` and `threadTs`. A resolved task was
ACCEPTED (its suggestion applied), a closed one REJECTED; both are recorded (`STATUS_EVENT`).

DataWorks permission requests (`silver.dataworks_approvals`): `approval-change-created` opens the
request (`processId`, else the workflow's `process.processId`), `approval-change-finished`
records its end, with the request's creation time in `process.createTime`. The finish event
gives the outcome in `status` when the feed has it (approved, rejected), else the request is
COMPLETED with the outcome unknown. The requested table is the resource, the approver the
assignee.

Each request is its own group (its key), so a new event recomputes that request alone.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from gold import GROUP, string_map

OM_CHANGE_EVENTS = "silver.openmetadata_change_events"
DATAWORKS_APPROVALS = "silver.dataworks_approvals"
OM_TASK_EVENTS = ("threadCreated", "threadUpdated", "taskResolved", "taskClosed")
OM_DECISIONS = {"taskResolved": "ACCEPTED", "taskClosed": "REJECTED"}
DW_CREATED, DW_FINISHED = "approval-change-created", "approval-change-finished"
STATUS_EVENT = "STATUS_EVENT"
COMPLETED = "COMPLETED"
_THREAD = (
    "struct<id:string,type:string,about:string,createdBy:string,threadTs:string,"
    "task:struct<id:string,type:string,status:string,suggestion:string,newValue:string,closedBy:string,"
    "assignees:array<struct<id:string,type:string,name:string>>>>"
)
_ABOUT = r"^<#E::([^:]+)::(.+?)(?:::columns::(.+?))?(?:::[^:]+)?>$"


def _thread() -> Column:
    return F.from_json(F.col("entity"), _THREAD)


def is_om_task() -> Column:
    """A change event of an OpenMetadata task (a thread that is a task)."""
    return F.col("event_type").isin(*OM_TASK_EVENTS) & _thread()["task"].isNotNull()


def relevant(source_table: str, rows: DataFrame) -> DataFrame:
    """Task events by their thread; approval events by their request (events naming none left out)."""
    if source_table == OM_CHANGE_EVENTS:
        return rows.filter(is_om_task()).withColumn(GROUP, F.col("entity_key"))
    if source_table == DATAWORKS_APPROVALS:
        return rows.withColumn(GROUP, dataworks_request()).filter(F.col(GROUP).isNotNull())
    raise ValueError(f"review requests: unknown source table {source_table!r}")


def dataworks_request() -> Column:
    request = F.coalesce(F.col("process_id"), F.col("workflow_id"))
    return F.when(request.isNotNull(), F.concat(F.lit("dataworks:approval:"), request))


def _latest(rows: DataFrame, partition: str, *order: Column) -> DataFrame:
    window = Window.partitionBy(partition).orderBy(*order)
    return rows.withColumn("_n", F.row_number().over(window)).filter("_n = 1").drop("_n")


def openmetadata_tasks(events: DataFrame) -> DataFrame:
    """One proposal-shaped row per task (`gold.proposals.COLUMNS` but `group_urn`, plus
    `source`, `assignees`)."""
    thread = _thread()
    task = thread["task"]
    tasks = events.filter(is_om_task()).select(
        F.col("entity_key").alias("proposal_urn"),
        "event_type",
        "event_time",
        "event_id",
        "actor",
        task["type"].alias("task_type"),
        thread["about"].alias("about"),
        thread["createdBy"].alias("thread_by"),
        F.timestamp_millis(thread["threadTs"].try_cast("long")).alias("thread_at"),
        F.transform(task["assignees"], lambda a: a["name"]).alias("assignees"),
        F.coalesce(task["suggestion"], task["newValue"]).alias("suggestion"),
    )
    created = _latest(tasks, "proposal_urn", F.col("event_type") != "threadCreated", "event_time", "event_id")
    decided = _latest(
        tasks.filter(F.col("event_type").isin(*OM_DECISIONS)), "proposal_urn", F.col("event_time").desc(),
        F.col("event_id").desc(),
    )  # fmt: skip
    decision = F.lit(None).cast("string")
    for event, status in OM_DECISIONS.items():
        decision = F.when(F.col("d.event_type") == event, F.lit(status)).otherwise(decision)
    about_type = F.regexp_extract(F.col("c.about"), _ABOUT, 1)
    about_fqn = F.regexp_extract(F.col("c.about"), _ABOUT, 2)
    column = F.nullif(F.regexp_extract(F.col("c.about"), _ABOUT, 3), F.lit(""))
    created_at = F.coalesce(
        F.when(F.col("c.event_type") == "threadCreated", F.col("c.event_time")), F.col("c.thread_at")
    )
    return (
        created.alias("c")
        .join(decided.alias("d"), "proposal_urn", "left")
        .select(
            "proposal_urn",
            F.lit("openmetadata").alias("source"),
            F.col("c.task_type").alias("action_request_type"),
            F.when(
                about_fqn != "", F.concat(F.lit("openmetadata:"), about_type, F.lit(":"), about_fqn)
            ).alias("resource_urn"),
            F.nullif(about_type, F.lit("")).alias("resource_type"),
            F.when(column.isNotNull(), F.lit("column")).alias("sub_resource_type"),
            column.alias("sub_resource"),
            F.coalesce(F.col("c.thread_by"), F.col("c.actor")).alias("created_by"),
            created_at.alias("created_at"),
            F.coalesce(decision, F.lit("PENDING")).alias("status"),
            F.when(decision.isNotNull(), F.lit(STATUS_EVENT)).alias("status_rule"),
            F.col("d.event_time").alias("resolved_at"),
            F.col("d.actor").alias("resolved_by"),
            F.col("d.event_id").alias("resolved_event_id"),
            string_map({"suggestion": F.col("c.suggestion")}).alias("proposed"),
            F.coalesce(F.col("c.assignees"), F.array().cast("array<string>")).alias("assignees"),
        )
        .filter(F.col("created_at").isNotNull())
    )


def _dataworks_outcome(status: Column) -> Column:
    text = F.lower(F.coalesce(status, F.lit("")))
    return (
        F.when(text.rlike("reject|refuse|deny|denied"), F.lit("REJECTED"))
        .when(text.rlike("approv|agree|accept|pass|success"), F.lit("ACCEPTED"))
        .otherwise(F.lit(COMPLETED))
    )


def dataworks_approvals(approvals: DataFrame) -> DataFrame:
    """One proposal-shaped row per permission request (as `openmetadata_tasks`)."""
    requests = approvals.withColumn("proposal_urn", dataworks_request()).filter(
        F.col("proposal_urn").isNotNull()
    )
    created_at = F.min(
        F.coalesce(
            "process_create_time",
            "create_time",
            F.when(F.col("event_code") == DW_CREATED, F.col("event_time")),
        )
    )
    first = _latest(requests, "proposal_urn", F.col("event_code") != DW_CREATED, "event_time", "event_id")
    known = requests.groupBy("proposal_urn").agg(created_at.alias("created_at"))
    finished = _latest(
        requests.filter(F.col("event_code") == DW_FINISHED), "proposal_urn", F.col("event_time").desc(),
        F.col("event_id").desc(),
    )  # fmt: skip
    done = F.col("f.event_id").isNotNull()
    assignee = F.coalesce(F.col("f.assignee_name"), F.col("r.assignee_name"), F.col("r.assignee"))
    return (
        first.alias("r")
        .join(known, "proposal_urn")
        .join(finished.alias("f"), "proposal_urn", "left")
        .select(
            "proposal_urn",
            F.lit("dataworks").alias("source"),
            F.lit("PERMISSION_REQUEST").alias("action_request_type"),
            F.col("r.entity_key").alias("resource_urn"),
            F.regexp_extract(F.col("r.entity_key"), r"^dataworks:([^:]+):", 1).alias("resource_type"),
            F.col("r.assignment_category").alias("sub_resource_type"),
            F.lit(None).cast("string").alias("sub_resource"),
            F.coalesce(F.col("r.applicant_name"), F.col("r.applicant"), F.col("r.operator")).alias(
                "created_by"
            ),
            F.col("created_at"),
            F.when(done, _dataworks_outcome(F.col("f.status"))).otherwise(F.lit("PENDING")).alias("status"),
            F.when(done, F.lit(STATUS_EVENT)).alias("status_rule"),
            F.col("f.event_time").alias("resolved_at"),
            F.when(
                done, F.coalesce(F.col("f.assignee_name"), F.col("f.assignee"), F.col("f.operator"))
            ).alias("resolved_by"),
            F.col("f.event_id").alias("resolved_event_id"),
            string_map({"apply_reason": F.col("r.apply_reason"), "title": F.col("r.title")}).alias(
                "proposed"
            ),
            F.when(assignee.isNotNull(), F.array(assignee))
            .otherwise(F.array().cast("array<string>"))
            .alias("assignees"),
        )
        .filter(F.col("created_at").isNotNull())
    )
