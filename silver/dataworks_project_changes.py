"""silver.dataworks_project_changes: a workspace about to be deleted (pre-event) or deleted.

Tenant-level events; the entity is the workspace itself.
"""

from __future__ import annotations

from silver.dataworks_families import Family, family_spec

FAMILY = Family(
    table="silver.dataworks_project_changes",
    fields={
        "projectName": "string",
        "timestamp": "timestamp",
        "blockBusiness": "boolean",
    },
    names={"timestamp": "message_time"},
    entity=(("project", "project_id"),),
)

SPEC = family_spec(FAMILY)
