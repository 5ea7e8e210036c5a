"""silver.dataworks_table_changes: a table committed to development or deployed to production.

The payload names the table by MaxCompute project and name; the entity key is
`dataworks:table:<tableGuid>` when a guid is sent, else `<maxComputeProject>.<tableName>`.
"""

from __future__ import annotations

from silver.dataworks_families import Family, family_spec

FAMILY = Family(
    table="silver.dataworks_table_changes",
    fields={
        "tableName": "string",
        "tableType": "string",
        "maxComputeProject": "string",
        "tableGuid": "string",
        "extensionBizId": "string",
        "blockBusiness": "boolean",
    },
    entity=(("table", "table_guid"), ("table", ("max_compute_project", "table_name"))),
)

SPEC = family_spec(FAMILY)
