"""silver.dataworks_events: one typed row per DataWorks event, whatever way it was delivered.

A bronze record is either an EventBridge CloudEvent (payload in `data`) or, for
Function Compute deliveries, the FC `messageBody` payload itself with the rest
of the FC message in bronze `container`. Both become one envelope row here with
the payload kept as JSON text; the per-eventCode family tables type the payload.
Doc samples (`{"datacontenttype": ..., "data": {...}}` without id or time) are
kept too: their id is the hash of the record and the expectations report them.
A CloudEvent whose data came as `data_base64` (the CloudEvents JSON format's member for data
that is not JSON text, which some senders use for any data) gets the decoded text, written as
Spark writes a `data` object, so the same event gives the same row either way.

Identity. The CloudEvents spec makes `source` + `id` unique, not `id` alone, so `event_id` hashes
both, with one exception that keeps existing warehouses' ids: DataWorks publishes every event
under one source, `acs.dataworks`, and an event of that source (or of none: a Function Compute
message's `messageId`) keeps the id it always had, the hash of its `id`. Rows already in silver
keep their `event_id`, a re-delivered DataWorks event still meets its first copy, and an event of
any other source with the same `id` is a different event (`deterministic_id("dataworks", source,
id)`, which no `acs.dataworks` id can equal).
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from pipelines.core.table_specs import ERRORS_COLUMN, SilverTableSpec
from pipelines.runtime.sql_expressions import name
from silver import dataworks_catalog as catalog
from silver.common import (
    cast_error,
    collect_errors,
    corrupt_error,
    deterministic_id,
    epoch_millis_to_timestamp,
    lineage,
)

# The one source DataWorks OpenEvent publishes under: its events' ids stay the hash of `id` alone.
DATAWORKS_SOURCE = "acs.dataworks"

_ENVELOPE = (
    "id string, source string, specversion string, type string, time string, subject string, "
    "aliyunaccountid string, aliyunregionid string, aliyunpublishtime string, aliyuneventbusname string, "
    "datacontenttype string, data string, data_base64 string, messageBody string"
)
_FC_MESSAGE = "messageId string, eventType string, eventCategoryType string, extensionBizId string, blockBusiness string"
# Payload fields every event may carry; typed payload fields belong to the family tables.
_PAYLOAD = (
    "eventCode string, eventType string, tenantId string, projectId string, appId string, "
    "queryDwProjectId string, operator string, operatorUid string, createUser string, "
    "extensionBizId string, blockBusiness string, "
    "operationTime string, timestamp string, modifyTime string, createTime string"
)


def transform(df: DataFrame) -> DataFrame:
    """Bronze DataWorks rows -> one envelope row each (corrupt rows kept, with `_errors`)."""
    if "source_modified_at" not in df.columns:  # a bronze table older than the column
        df = df.withColumn("source_modified_at", F.lit(None).cast("timestamp"))
    envelope = F.from_json("raw", _ENVELOPE)
    # An FC payload has no envelope: its wrapper is `container` (or the record itself if it still
    # holds `messageBody`); envelope fields must then not be read from the payload (`id` is a job id there).
    wrapper = F.from_json(
        F.coalesce("container", F.when(envelope["messageBody"].isNotNull(), F.col("raw"))), _FC_MESSAGE
    )
    parsed = df.select(
        "*",
        envelope.alias("_env"),
        wrapper.alias("_fc"),
    ).withColumn(
        "_is_fc",
        F.coalesce(
            F.col("_fc.messageId").isNotNull()
            | F.col("_fc.eventType").isNotNull()
            | F.col("_fc.eventCategoryType").isNotNull(),
            F.lit(False),
        ),
    )
    eventbridge = ~F.col("_is_fc")
    data_text = F.when(F.col("_is_fc"), F.coalesce("_env.messageBody", "raw")).otherwise(
        F.coalesce(F.col("_env.data"), _decoded_data(F.col("_env.data_base64")))
    )
    with_data = parsed.withColumn("_data_text", data_text).withColumn(
        "_data", F.from_json("_data_text", _PAYLOAD)
    )
    return with_data.select(*_columns(eventbridge))


def _decoded_data(data_base64: Column) -> Column:
    """The text `data_base64` holds (UTF-8); JSON text is rewritten the way `from_json` writes a
    nested `data` object (compact, numbers as Spark reads them), so both members give one text.
    The wrapper is only built around text that is one JSON value, which cannot break out of it."""
    text = F.decode(F.try_to_binary(data_base64, F.lit("base64")), "UTF-8")
    as_member = F.from_json(F.concat(F.lit('{"d":'), text, F.lit("}")), "d string")["d"]
    return F.when(F.try_parse_json(text).isNotNull(), as_member).otherwise(text)


def _env(field: str, eventbridge: Column) -> Column:
    """An envelope field, only for EventBridge records (FC payload fields are not envelope fields)."""
    return F.when(eventbridge, F.col(f"_env.{field}"))


def _columns(eventbridge: Column) -> list[Column]:
    data = F.col("_data")
    cloud_event_id = F.when(eventbridge, F.col("_env.id")).otherwise(F.col("_fc.messageId"))
    source = _env("source", eventbridge)
    identity = F.when(
        source.isNotNull() & (source != F.lit(DATAWORKS_SOURCE)),
        deterministic_id(F.lit("dataworks"), source, cloud_event_id),
    ).otherwise(deterministic_id(F.lit("dataworks"), cloud_event_id))
    event_type = _env("type", eventbridge)
    event_code = catalog.canonical_code_col(
        F.coalesce(
            data["eventCode"],
            F.col("_fc.eventType"),
            catalog.code_from_type_col(event_type),
            catalog.alias_target_col(data["eventType"]),
        )
    )
    known_type = F.coalesce(event_type, catalog.type_col(event_code))
    raw_time = _env("time", eventbridge)
    payload_time = F.coalesce(
        *[
            epoch_millis_to_timestamp(name("_data", f))
            for f in ("operationTime", "timestamp", "modifyTime", "createTime")
        ]
    )
    envelope_time = raw_time.try_cast("timestamp")
    # Function Compute calls are synchronous extension points: when neither the
    # envelope nor the payload carries a time, the landing file's modification
    # time is the best available (and `event_time_source` says so) rather than a
    # quarantine. It belongs to the data, so every warehouse agrees on it; only
    # rows bronze took in before it recorded file times fall back to the run's time.
    file_time = F.when(~eventbridge, F.col("source_modified_at"))
    run_time = F.when(~eventbridge, F.col("ingested_at"))
    event_time = F.coalesce(envelope_time, payload_time, file_time, run_time)
    event_time_source = (
        F.when(envelope_time.isNotNull(), F.lit("envelope"))
        .when(payload_time.isNotNull(), F.lit("payload"))
        .when(file_time.isNotNull(), F.lit("source_modified_at"))
        .when(run_time.isNotNull(), F.lit("ingested_at"))
    )
    publish_time = _env("aliyunpublishtime", eventbridge)
    project_id_text = F.coalesce(data["projectId"], data["appId"], data["queryDwProjectId"])
    block_business = F.coalesce(data["blockBusiness"], F.col("_fc.blockBusiness"))
    errors = collect_errors(
        corrupt_error(),
        cast_error(raw_time, "timestamp", "time"),
        cast_error(publish_time, "timestamp", "aliyunpublishtime"),
        cast_error(data["tenantId"], "long", "data.tenantId"),
        cast_error(data["projectId"], "long", "data.projectId"),
        F.when(data["projectId"].isNull(), cast_error(data["appId"], "long", "data.appId")),
        F.when(
            data["projectId"].isNull() & data["appId"].isNull(),
            cast_error(data["queryDwProjectId"], "long", "data.queryDwProjectId"),
        ),
        cast_error(block_business, "boolean", "data.blockBusiness"),
    )
    return [
        F.when(cloud_event_id.isNotNull(), identity)
        .otherwise(deterministic_id(F.lit("dataworks"), F.coalesce("raw", "raw_base64")))
        .alias("event_id"),
        event_time.alias("event_time"),
        F.to_date(event_time).alias("event_date"),
        event_time_source.alias("event_time_source"),
        cloud_event_id.alias("cloud_event_id"),
        source.alias("source"),
        event_type.alias("type"),
        _env("specversion", eventbridge).alias("spec_version"),
        _env("subject", eventbridge).alias("subject"),
        event_code.alias("event_code"),
        F.nullif(F.regexp_extract(known_type, r"^dataworks:([^:]+):", 1), F.lit("")).alias("category"),
        F.nullif(F.regexp_extract(known_type, r"^dataworks:[^:]+:(.+)$", 1), F.lit("")).alias("action"),
        catalog.family_col(event_code).alias("family"),
        catalog.extension_point_col(event_code).alias("extension_point"),
        data["tenantId"].try_cast("long").alias("tenant_id"),
        project_id_text.try_cast("long").alias("project_id"),
        F.coalesce(data["operator"], data["operatorUid"], data["createUser"]).alias("operator"),
        _env("aliyunaccountid", eventbridge).alias("aliyun_account_id"),
        _env("aliyunregionid", eventbridge).alias("aliyun_region_id"),
        publish_time.try_cast("timestamp").alias("aliyun_publish_time"),
        _env("aliyuneventbusname", eventbridge).alias("aliyun_event_bus_name"),
        _env("datacontenttype", eventbridge).alias("data_content_type"),
        F.when(eventbridge, F.lit("eventbridge")).otherwise(F.lit("function_compute")).alias("delivery"),
        F.col("_fc.eventCategoryType").alias("fc_event_category"),
        F.coalesce(data["extensionBizId"], F.col("_fc.extensionBizId")).alias("extension_biz_id"),
        block_business.try_cast("boolean").alias("block_business"),
        F.col("_data_text").alias("data"),
        *lineage(),
        errors.alias(ERRORS_COLUMN),
    ]


FALLBACK_TIME_SOURCES = ("source_modified_at", "ingested_at")  # `event_time_source` of landing times

SPEC = SilverTableSpec(
    table="silver.dataworks_events",
    source="bronze.dataworks_events",
    transform=transform,
    reconciles="dataworks",
    fallback_time=lambda: F.col("event_time_source").isin(*FALLBACK_TIME_SOURCES),
)
