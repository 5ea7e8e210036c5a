"""silver.dataworks_approvals: permission requests and their approval (one row per event).

approval-change-created / -finished carry the approval process with the requested
objects in `process.approvalContent.arrayData[]` (MaxCompute tables or
DataService APIs) and the grantees in `granteeAccounts[]`; the table-permission
pre-event (approval-change-before-create) carries an `order` with
`projectMeta.objectMetaList[]` and `granteeObjectList[]` instead. Both shapes are
unified into `requested_objects` and `grantees` (arrays of structs) and
`apply_reason`, so "who asked for what" is one query. The entity key is the
table when exactly one requested object has a guid, else the workspace.
"""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F

from silver.dataworks_families import Family, family_spec, snake_case, spark_type

_CONTENT = "process.approvalContent"
_META = "order.projectMeta"
# arrayData item, MaxCompute and DataService shapes (see the doc's appendices)
_OBJECT = {
    "objectType": "string",
    "objectGuid": "string",
    "objectName": "string",
    "objectNameCn": "string",
    "odpsTable": "string",
    "odpsProject": "string",
    "projectGuid": "string",
    "projectName": "string",
    "projectId": "long",
    "workspaceId": "long",
    "workspaceName": "string",
    "envType": "int",
    "tenantId": "long",
    "ownerBaseId": "string",
    "ownerAccountName": "string",
    "ownerId": "string",
    "ownerName": "string",
    "actions": "array<string>",
    "id": "string",
    "name": "string",
    "type": "string",
    "resourceId": "string",
    "resourceVersion": "long",
    "dsDeployId": "string",
    "url": "string",
}
_GRANTEE = {"granteeId": "string", "granteeType": "int", "granteeTypeSub": "int", "granteeName": "string"}


def _object_from_meta(meta: Column) -> Column:
    """An objectMetaList item in the arrayData item's shape (a table in a MaxCompute project)."""
    given = {
        "object_guid": F.concat(meta["project_guid"], F.lit("."), meta["name"]),
        "object_name": meta["name"],
        "project_guid": meta["project_guid"],
        "project_name": F.col("order_project_name"),
        "project_id": F.col("order_project_id"),
        "env_type": F.col("env_code"),
        "actions": meta["action"],
    }
    return F.struct(
        *[
            given.get(snake_case(key), F.lit(None).cast(spark_type(spec))).alias(snake_case(key))
            for key, spec in _OBJECT.items()
        ]
    )


def _derived() -> list[Column]:
    from_content = F.col("array_data")
    from_order = F.transform(F.col("object_meta_list"), _object_from_meta)
    objects = F.coalesce(F.when(F.size(from_content) > 0, from_content), from_order)
    grantees = F.coalesce(
        F.when(F.size(F.col("grantee_accounts")) > 0, F.col("grantee_accounts")),
        F.transform(
            F.col("grantee_object_list"),
            lambda g: F.struct(
                g["grantee_id"].alias("grantee_id"),
                F.lit(None).cast("int").alias("grantee_type"),
                F.lit(None).cast("int").alias("grantee_type_sub"),
                F.lit(None).cast("string").alias("grantee_name"),
            ),
        ),
    )
    guids = F.filter(F.transform(objects, lambda o: o["object_guid"]), lambda g: g.isNotNull())
    return [
        F.coalesce("content_apply_reason", "order_apply_reason").alias("apply_reason"),
        objects.alias("requested_objects"),
        grantees.alias("grantees"),
        guids.alias("requested_object_guids"),
    ]


def _payload_guid(field) -> Column:
    """The one requested object's guid read from the payload text (`field(path)`), as `_derived`
    finds it: arrayData's objectGuids when arrayData has items, else objectMetaList's
    `<projectGuid>.<name>`; null unless exactly one (`silver.dataworks_entity_keys`)."""
    content = F.from_json(field(f"{_CONTENT}.arrayData"), "array<struct<objectGuid:string>>")
    metas = F.from_json(field(f"{_META}.objectMetaList"), "array<struct<projectGuid:string,name:string>>")
    from_content = F.transform(content, lambda o: o["objectGuid"])
    from_order = F.transform(metas, lambda m: F.concat(m["projectGuid"], F.lit("."), m["name"]))
    chosen = F.coalesce(F.when(F.size(content) > 0, from_content), from_order)
    guids = F.filter(chosen, lambda g: g.isNotNull())
    return F.when(F.size(guids) == 1, guids[0])


_payload_guid.reads = (f"{_CONTENT}.arrayData", f"{_META}.objectMetaList")  # what gold parses for it


FAMILY = Family(
    table="silver.dataworks_approvals",
    fields={
        "eventType": "string",
        "processId": "string",
        "taskId": "string",
        "status": "string",
        "appId": "long",
        "assignee": "string",
        "assigneeName": "string",
        "comments": "string",
        "createTime": "timestamp",
        "updateTime": "timestamp",
        "process.applicant": "string",
        "process.applicantName": "string",
        "process.assignmentCategory": "string",
        "process.processDefinitionId": "string",
        "process.processId": "string",
        "process.status": "string",
        "process.title": "string",
        "process.createTime": "timestamp",
        "process.updateTime": "timestamp",
        f"{_CONTENT}.applyPeriod": "long",
        f"{_CONTENT}.applyReason": "string",
        f"{_CONTENT}.contentType": "string",
        f"{_CONTENT}.odpsProjectName": "string",
        f"{_CONTENT}.resourceSummary": "string",
        f"{_CONTENT}.projectEnv": "string",
        f"{_CONTENT}.workspaceId": "long",
        f"{_CONTENT}.tenantId": "long",
        f"{_CONTENT}.granteeAccounts": [_GRANTEE],
        f"{_CONTENT}.arrayData": [_OBJECT],
        "order.applyReason": "string",
        "order.deadlineDate": "string",
        "order.deadlineType": "string",
        "order.granteeObjectList": [{"granteeId": "string"}],
        f"{_META}.envCode": "int",
        f"{_META}.labelSecurity": "boolean",
        f"{_META}.projectId": "long",
        f"{_META}.projectName": "string",
        f"{_META}.objectMetaList": [{"name": "string", "projectGuid": "string", "action": "array<string>"}],
    },
    names={
        "process.applicant": "applicant",
        "process.applicantName": "applicant_name",
        "process.assignmentCategory": "assignment_category",
        "process.processDefinitionId": "process_definition_id",
        "process.processId": "workflow_id",
        "process.title": "title",
        f"{_CONTENT}.applyPeriod": "apply_period",
        f"{_CONTENT}.applyReason": "content_apply_reason",
        f"{_CONTENT}.contentType": "content_type",
        f"{_CONTENT}.odpsProjectName": "odps_project_name",
        f"{_CONTENT}.resourceSummary": "resource_summary",
        f"{_CONTENT}.projectEnv": "project_env",
        f"{_CONTENT}.workspaceId": "workspace_id",
        f"{_CONTENT}.tenantId": "content_tenant_id",
        f"{_CONTENT}.granteeAccounts": "grantee_accounts",
        f"{_CONTENT}.arrayData": "array_data",
        "order.applyReason": "order_apply_reason",
        "order.deadlineDate": "deadline_date",
        "order.deadlineType": "deadline_type",
        "order.granteeObjectList": "grantee_object_list",
        f"{_META}.envCode": "env_code",
        f"{_META}.labelSecurity": "label_security",
        f"{_META}.projectId": "order_project_id",
        f"{_META}.projectName": "order_project_name",
        f"{_META}.objectMetaList": "object_meta_list",
    },
    change_time=("updateTime",),
    entity=(("table", "requested_object_guids"), ("project", "project_id")),
    payload_entity=(("table", _payload_guid),),
    derived=_derived,
    drop=(
        "content_apply_reason",
        "order_apply_reason",
        "array_data",
        "object_meta_list",
        "grantee_accounts",
        "grantee_object_list",
    ),
)

SPEC = family_spec(FAMILY)
