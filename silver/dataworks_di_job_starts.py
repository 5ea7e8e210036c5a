"""silver.dataworks_di_job_starts: data-integration jobs about to start, one row per table mapping.

start-diJob lists its mappings in `tableMapping[]` (job id in `id` on v1
messages, `jobId` on v2); batch-start-diJob lists them per job in
`tableMappings[].tableMapping[]`. Lineage questions ("which source tables feed
this target?") need one row per mapping, so the event is exploded: `event_id` is
derived from the parent event's id and `mapping_index`, `parent_event_id` links
back. A start sent without mappings (`showTableMapping` false, over 500 tables)
still gives one row per job with null mapping columns. `setting` times are
wall-clock times in `setting.timeZone` (Asia/Shanghai when absent).
"""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F

from silver.dataworks_families import Family, family_spec, snake_case

_MAPPING = {
    "srcDatasourceName": "string",
    "srcDatabaseName": "string",
    "srcTable": "string",
    "dstDatasourceName": "string",
    "dstTable": "string",
}
_MAPPING_COLUMNS = tuple(snake_case(key) for key in _MAPPING)


def _item(job_id: Column, job_name: Column, mapping: Column | None) -> Column:
    """One output row's job and mapping (null mapping columns for a job sent without mappings)."""
    columns = [
        (mapping[c] if mapping is not None else F.lit(None).cast("string")).alias(c) for c in _MAPPING_COLUMNS
    ]
    return F.struct(job_id.alias("di_job_id"), job_name.alias("di_job_name"), *columns)


def _items() -> Column:
    """The rows of one event: its mappings, else its jobs without mappings, else the job alone."""
    job_id = F.coalesce(F.col("job_id"), F.col("v1_job_id"))
    job_name = F.col("extension_biz_name")
    single = F.transform(F.col("table_mapping"), lambda m: _item(job_id, job_name, m))
    batch = F.flatten(
        F.transform(
            F.col("table_mappings"),
            lambda job: F.when(
                F.size(job["table_mapping"]) > 0,
                F.transform(job["table_mapping"], lambda m: _item(job["id"], job["extension_biz_name"], m)),
            ).otherwise(F.array(_item(job["id"], job["extension_biz_name"], None))),
        )
    )
    unmapped_jobs = F.transform(F.col("job_ids"), lambda j: _item(j, F.lit(None).cast("string"), None))
    return F.coalesce(
        F.when(F.size(single) > 0, single),
        F.when(F.size(batch) > 0, batch),
        F.when(F.size(unmapped_jobs) > 0, unmapped_jobs),
        F.array(_item(job_id, job_name, None)),
    )


FAMILY = Family(
    table="silver.dataworks_di_job_starts",
    fields={
        "extensionBizId": "string",
        "extensionBizName": "string",
        "appId": "long",
        "env": "string",
        "showTableMapping": "boolean",
        "forceRun": "boolean",
        "startAsV2": "boolean",
        "needErrorMessage": "boolean",
        "errorMessageOnlyFailedFileIds": "boolean",
        "blockBusiness": "boolean",
        "jobIds": "array<long>",
        "jobId": "long",
        "id": "long",
        "setting.lastStartPosition": "timestamp",
        "setting.startDateTime": "timestamp",
        "setting.timeZone": "string",
        "tableMapping": [_MAPPING],
        "tableMappings": [{"id": "long", "extensionBizName": "string", "tableMapping": [_MAPPING]}],
    },
    names={
        "id": "v1_job_id",
        "setting.lastStartPosition": "last_start_position",
        "setting.startDateTime": "start_date_time",
        "setting.timeZone": "time_zone",
    },
    entity=(("di_job", "di_job_id"),),
    payload_entity=(("di_job", "jobId"), ("di_job", "id"), ("di_job", "jobIds")),
    items=_items,
    item_index="mapping_index",
    drop=("job_id", "v1_job_id", "table_mapping", "table_mappings"),
    zone_field="setting.timeZone",
)

SPEC = family_spec(FAMILY)
