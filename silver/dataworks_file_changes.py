"""silver.dataworks_file_changes: a DataStudio file committed, deployed, deleted or run (one row per event).

These are extension-point pre-events (sent before the operation). `change_type`
(0 create, 1 update, 2 delete) is named from the catalog enum.
"""

from __future__ import annotations

from silver.dataworks_families import Family, family_spec

FAMILY = Family(
    table="silver.dataworks_file_changes",
    fields={
        "fileId": "long",
        "fileName": "string",
        "fileType": "long",
        "fileVersion": "long",
        "fileOwner": "string",
        "fileCreateTime": "timestamp",
        "changeType": "int",
        "nodeId": "long",
        "dataSourceName": "string",
        "resourceType": "int",
        "extensionBizId": "string",
        "blockBusiness": "boolean",
    },
    entity=(("file", "file_id"), ("node", "node_id")),
    enums={"change_type": "file_change_type"},
)

SPEC = family_spec(FAMILY)
