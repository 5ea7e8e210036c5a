"""Split landed files into bronze records, in Spark, without losing any.

One input row per file (its whole text, decompressed by Spark). Lines (JSON
Lines) or the whole document become values; a value that is an array, or a
wrapper named by the job (an audit search page's `usageEvents`, a DataWorks
Function Compute `messageBody`), yields its records. Everything happens inside
the file's row with higher-order functions, so `record_index` is the exact
position in the file without a shuffle. A record that is not a JSON object is
kept with `is_corrupt` and the reason.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from pipelines.jobs import BronzeJob
from pipelines.landing import CORRUPT_DOCUMENT, LINES

BOM = "^\ufeff"


def _sql_string(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _elements_sql(job: BronzeJob, value: str) -> str:
    """SQL: array<string> of the records held by one JSON value."""
    cases = [
        f"WHEN ltrim({value}) LIKE '[%' THEN coalesce(from_json({value}, 'array<string>'), array({value}))"
    ]
    for name in job.record_arrays:
        path = _sql_string(f"$.{name}")
        cases.append(
            f"WHEN get_json_object({value}, {path}) IS NOT NULL THEN "
            f"coalesce(from_json(get_json_object({value}, {path}), 'array<string>'), array({value}))"
        )
    for name in job.record_objects:
        path = _sql_string(f"$.{name}")
        cases.append(
            f"WHEN get_json_object({value}, {path}) LIKE '{{%' THEN array(get_json_object({value}, {path}))"
        )
    return "CASE " + " ".join(cases) + f" ELSE array({value}) END"


def _container_sql(job: BronzeJob, value: str) -> str:
    """SQL: the wrapper's other fields as JSON text (page info, FC envelope), else null."""
    fields = list(job.record_arrays) + list(job.record_objects)
    if not fields:
        return "CAST(NULL AS STRING)"
    present = " OR ".join(f"get_json_object({value}, {_sql_string('$.' + f)}) IS NOT NULL" for f in fields)
    excluded = ", ".join(_sql_string(f) for f in fields)
    return (
        f"CASE WHEN ltrim({value}) LIKE '{{%' AND ({present}) THEN "
        f"to_json(map_filter(from_json({value}, 'map<string,string>'), (k, x) -> NOT array_contains(array({excluded}), k))) END"
    )


def _records_sql(job: BronzeJob, content: str) -> str:
    """SQL: array of (line_number, raw, container, page columns...) for one file's text.

    Per line (or document) the records, the container and the page columns are
    computed once; only then are the records spread out. (Spark does not share
    work across lambda calls, so computing the container inside the per-record
    lambda re-parsed a whole audit page once per usage event.)
    """
    page_fields = "".join(
        f", '{column}', get_json_object(x.text, {_sql_string('$.' + field)})"
        for column, (field, _dtype) in job.page_columns.items()
    )
    page_refs = "".join(f", '{column}', y.{column}" for column in job.page_columns)
    elements = _elements_sql(job, "x.text")
    return f"""
    flatten(transform(
        transform(
            filter(
                transform(CASE WHEN mode = '{LINES}' THEN split({content}, '\\r?\\n') ELSE array({content}) END,
                          (l, i) -> named_struct('text', l, 'line', i)),
                x -> x.text RLIKE '\\\\S'),
            x -> named_struct(
                'line', x.line,
                'elements', CASE WHEN mode = '{CORRUPT_DOCUMENT}' THEN array(x.text) ELSE {elements} END,
                'container', {_container_sql(job, "x.text")}{page_fields})),
        y -> transform(y.elements,
            e -> named_struct('line_number', CAST(y.line AS BIGINT), 'raw', e,
                              'container', y.container{page_refs}))))
    """


def _strip(raw: Column) -> Column:
    """Trim every kind of whitespace (Spark's `trim` removes spaces only)."""
    return F.regexp_replace(raw, r"^\s+|\s+$", "")


def _is_json_object(raw: Column) -> Column:
    trimmed = _strip(raw)
    return (
        F.from_json(raw, "map<string,string>").isNotNull() & trimmed.startswith("{") & trimmed.endswith("}")
    )


def _corrupt_reason(raw: Column, invalid_utf8: Column, mode: Column) -> Column:
    trimmed = _strip(raw)
    return (
        F.when(invalid_utf8, F.lit("invalid UTF-8"))
        .when(mode == CORRUPT_DOCUMENT, F.lit("malformed JSON document"))
        .when(trimmed == "", F.lit("empty record"))
        .when(~_is_json_object(raw) & trimmed.startswith("{"), F.lit("malformed JSON"))
        .when(~_is_json_object(raw), F.lit("not a JSON object"))
    )


def spark_path_key(file_path: Column) -> Column:
    """Local path of Spark's `_metadata.file_path` URI (decoded the way Hadoop encoded it)."""
    stripped = F.regexp_replace(file_path, "^file:(//)?", "")
    return F.url_decode(F.replace(stripped, F.lit("+"), F.lit("%2B")))


def extract_records(files: DataFrame, job: BronzeJob, invalid_lines: DataFrame) -> DataFrame:
    """Bronze records from `files` (columns source_file, file_hash, mode, content).

    `invalid_lines` (source_file, line_number, raw_base64) marks lines whose
    original bytes were not UTF-8; their text holds replacement characters and
    the original bytes are kept in `raw_base64`.
    """
    content = f"regexp_replace(content, '{BOM}', '')"
    records = files.select(
        "source_file",
        "file_hash",
        "mode",
        F.posexplode(F.expr(_records_sql(job, content))).alias("record_index", "rec"),
    ).select("source_file", "file_hash", "mode", "record_index", "rec.*")
    flagged = records.join(F.broadcast(invalid_lines), ["source_file", "line_number"], "left")
    reason = _corrupt_reason(F.col("raw"), F.col("raw_base64").isNotNull(), F.col("mode"))
    page = [F.col(column).cast(dtype).alias(column) for column, (_field, dtype) in job.page_columns.items()]
    return flagged.select(
        "raw",
        "raw_base64",
        "source_file",
        "file_hash",
        F.col("record_index").cast("long").alias("record_index"),
        "line_number",
        "container",
        reason.isNotNull().alias("is_corrupt"),
        reason.alias("corrupt_reason"),
        *page,
    )
