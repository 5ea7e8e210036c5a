"""silver.dataworks_resource_transfers: data about to be downloaded from or uploaded to DataWorks.

Download pre-events (file generation, file download) and the upload pre-event
share one table so data-exfiltration reviews read one place; `direction` says
which. These payloads name the workspace `queryDwProjectId` and the user
`operatorUid`; the entity key is the target table of an upload, else the workspace.
"""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F

from silver.dataworks_families import Family, family_spec


def _derived() -> list[Column]:
    code = F.col("event_code")
    direction = F.when(code.startswith("download"), F.lit("DOWNLOAD")).when(
        code.startswith("upload"), F.lit("UPLOAD")
    )
    return [direction.alias("direction")]


FAMILY = Family(
    table="silver.dataworks_resource_transfers",
    fields={
        "moduleType": "string",
        "operatorBaseId": "string",
        "operatorUid": "string",
        "ip": "string",
        "queryDwProjectId": "long",
        "queryDwProjectName": "string",
        "datasourceId": "string",
        "datasourceName": "string",
        "fileName": "string",
        "fileSize": "long",
        "dataRowSize": "long",
        "sqlText": "string",
        "uploadSourceType": "string",
        "optTableType": "string",
        "targetEngineType": "string",
        "writeType": "string",
        "conflictMode": "string",
        "tableGuid": "string",
    },
    entity=(("table", "table_guid"), ("project", "query_dw_project_id"), ("project", "project_id")),
    derived=_derived,
)

SPEC = family_spec(FAMILY)
