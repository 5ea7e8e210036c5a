"""Split landed files into bronze records, in Spark, without losing any.

One input row per file (its whole text, decompressed by Spark). Lines (JSON
Lines) or the whole document become values; a value that is an array, or a
wrapper named by the table spec (an audit search page's `usageEvents`, a DataWorks
Function Compute `messageBody`), yields its records. A record that is not a
JSON object is kept with `is_corrupt` and the reason.

Two paths give the same rows. Files the landing scan found to hold one record
per line (the usual JSON Lines) are exploded line by line in generated code,
`record_index` = line number. Every other file goes through higher-order
functions inside the file's row (interpreted, about 3x slower), so
`record_index` stays the exact position in the file without a shuffle.
"""

from __future__ import annotations

import re

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from pipelines.core.locations import FILE_URI, VOLUME_URI
from pipelines.core.table_specs import BronzeTableSpec
from pipelines.landing.discovery import CORRUPT_DOCUMENT, LINES

BOM = "^\ufeff"


def _sql_string(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _elements_sql(spec: BronzeTableSpec, value: str) -> str:
    """SQL: array<string> of the records held by one JSON value."""
    cases = [
        f"WHEN ltrim({value}) LIKE '[%' THEN coalesce(from_json({value}, 'array<string>'), array({value}))"
    ]
    for name in spec.record_arrays:
        path = _sql_string(f"$.{name}")
        cases.append(
            f"WHEN get_json_object({value}, {path}) IS NOT NULL THEN "
            f"coalesce(from_json(get_json_object({value}, {path}), 'array<string>'), array({value}))"
        )
    for name in spec.record_objects:
        path = _sql_string(f"$.{name}")
        cases.append(
            f"WHEN get_json_object({value}, {path}) LIKE '{{%' THEN array(get_json_object({value}, {path}))"
        )
    return "CASE " + " ".join(cases) + f" ELSE array({value}) END"


def _container_sql(spec: BronzeTableSpec, value: str) -> str:
    """SQL: the wrapper's other fields as JSON text (page info, FC envelope), else null."""
    fields = list(spec.record_arrays) + list(spec.record_objects)
    if not fields:
        return "CAST(NULL AS STRING)"
    present = " OR ".join(f"get_json_object({value}, {_sql_string('$.' + f)}) IS NOT NULL" for f in fields)
    excluded = ", ".join(_sql_string(f) for f in fields)
    return (
        f"CASE WHEN ltrim({value}) LIKE '{{%' AND ({present}) THEN "
        f"to_json(map_filter(from_json({value}, 'map<string,string>'), (k, x) -> NOT array_contains(array({excluded}), k))) END"
    )


def _records_sql(spec: BronzeTableSpec, content: str) -> str:
    """SQL: array of (line_number, raw, container, page columns...) for one file's text.

    Per line (or document) the records, the container and the page columns are
    computed once; only then are the records spread out. (Spark does not share
    work across lambda calls, so computing the container inside the per-record
    lambda re-parsed a whole audit page once per usage event.)
    """
    page_fields = "".join(
        f", '{column}', get_json_object(x.text, {_sql_string('$.' + field)})"
        for column, (field, _dtype) in spec.page_columns.items()
    )
    page_refs = "".join(f", '{column}', y.{column}" for column in spec.page_columns)
    elements = _elements_sql(spec, "x.text")
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
                'container', {_container_sql(spec, "x.text")}{page_fields})),
        y -> transform(y.elements,
            e -> named_struct('line_number', CAST(y.line AS BIGINT), 'raw', e,
                              'container', y.container{page_refs}))))
    """


WHITESPACE = " \t\n\u000b\f\r"  # what Java's regex \\s matches


def _with_corrupt_reason(records: DataFrame) -> DataFrame:
    """Adds `corrupt_reason` (null for a JSON object) from `raw`, `raw_base64` and `mode`.

    The trimmed text and the parse are separate projections so Spark computes each
    once per record (inlined into the CASE they were evaluated up to four times).
    """
    trimmed = records.select("*", F.trim("raw", F.lit(WHITESPACE)).alias("_trimmed"))
    parsed = trimmed.select("*", F.from_json("raw", "map<string,string>").isNotNull().alias("_parses"))
    text = F.col("_trimmed")
    is_object = F.col("_parses") & text.startswith("{") & text.endswith("}")
    reason = (
        F.when(F.col("raw_base64").isNotNull(), F.lit("invalid UTF-8"))
        .when(F.col("mode") == CORRUPT_DOCUMENT, F.lit("malformed JSON document"))
        .when(text == "", F.lit("empty record"))
        .when(~is_object & text.startswith("{"), F.lit("malformed JSON"))
        .when(~is_object, F.lit("not a JSON object"))
    )
    return parsed.withColumn("corrupt_reason", reason).drop("_trimmed", "_parses")


def literal_path(path: str) -> str:
    """`path` with Hadoop glob characters escaped: Spark would otherwise expand `c*.jsonl`
    to other files (read twice) or fail on `a[1].jsonl`."""
    return re.sub(r"([\\\[\]{}*?])", r"\\\1", path)


def spark_path_key(file_path: Column) -> Column:
    """Local path of Spark's `_metadata.file_path` URI, decoded the way Hadoop encoded it: the
    same path `pipelines.core.locations.local_path` gives for a landing file (`file:/x`,
    `file:///x`, `file://host/x` and a volume's `dbfs:/Volumes/x` alike)."""
    stripped = F.regexp_replace(file_path, f"{FILE_URI.pattern}|{VOLUME_URI.pattern}", "")
    return F.url_decode(F.replace(stripped, F.lit("+"), F.lit("%2B")))


FILE_COLUMNS = ("source_file", "file_hash", "source_modified_at", "mode")


def _records_of_any_file(files: DataFrame, spec: BronzeTableSpec) -> DataFrame:
    """The general path: records, their container and page columns, per file row."""
    content = f"regexp_replace(content, '{BOM}', '')"
    return files.select(
        *FILE_COLUMNS,
        F.posexplode(F.expr(_records_sql(spec, content))).alias("record_index", "rec"),
    ).select(*FILE_COLUMNS, "record_index", "rec.*")


def _records_of_line_files(files: DataFrame, spec: BronzeTableSpec) -> DataFrame:
    """The fast path for files with one record on every line: the lines are the records."""
    lines = files.select(
        *FILE_COLUMNS,
        F.posexplode(F.split(F.regexp_replace("content", BOM, ""), r"\r?\n")).alias("line_number", "raw"),
    ).where(F.col("raw").rlike(r"\S"))
    page = [
        F.get_json_object("raw", f"$.{field}").alias(column)
        for column, (field, _dtype) in spec.page_columns.items()
    ]
    return lines.select(
        *FILE_COLUMNS,
        F.col("line_number").alias("record_index"),
        F.col("line_number").cast("long").alias("line_number"),
        "raw",
        F.lit(None).cast("string").alias("container"),
        *page,
    )


def extract_records(
    spec: BronzeTableSpec,
    invalid_lines: DataFrame | None,
    files: DataFrame | None = None,
    line_files: DataFrame | None = None,
) -> DataFrame:
    """Bronze records from `files` and `line_files` (columns source_file, file_hash,
    source_modified_at, mode, content; at least one given); `line_files` hold one record
    on every line, `files` anything.

    `invalid_lines` (source_file, line_number, raw_base64) marks lines whose
    original bytes were not UTF-8; their text holds replacement characters and
    the original bytes are kept in `raw_base64`. None: no line was invalid (no join,
    so no Spark job to broadcast an empty frame).
    """
    parts = []
    if line_files is not None:
        parts.append(_records_of_line_files(line_files, spec))
    if files is not None:
        parts.append(_records_of_any_file(files, spec))
    if not parts:
        raise ValueError("extract_records needs files or line_files")
    records = parts[0] if len(parts) == 1 else parts[0].unionByName(parts[1])
    if invalid_lines is None:
        marked = records.withColumn("raw_base64", F.lit(None).cast("string"))
    else:
        marked = records.join(F.broadcast(invalid_lines), ["source_file", "line_number"], "left")
    flagged = _with_corrupt_reason(marked)
    page = [F.col(column).cast(dtype).alias(column) for column, (_field, dtype) in spec.page_columns.items()]
    return flagged.select(
        "raw",
        "raw_base64",
        *FILE_COLUMNS[:3],
        F.col("record_index").cast("long").alias("record_index"),
        "line_number",
        "container",
        F.col("corrupt_reason").isNotNull().alias("is_corrupt"),
        "corrupt_reason",
        *page,
    )
