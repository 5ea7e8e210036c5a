"""Columns every bronze table has (plus per-source page columns such as `next_scroll_id`).

raw             the record's JSON text (a JSONL line as is; an array element or
                wrapper field re-serialised compactly by Spark's JSON parser)
raw_base64      the original bytes, base64, only when they were not valid UTF-8
source_file     absolute path of the landing file
file_hash       sha256 of the (decompressed) file content
source_modified_at  UTC modification time of the landing file (the same in every warehouse;
                null on rows ingested before this column existed)
record_index    0-based position of the record in its file (lines and array elements in order)
line_number     0-based line of the file the record came from (0 for single documents)
container       JSON text of the wrapper (audit page, DataWorks FC message) minus the records, else null
ingested_at     UTC time of the bronze run
ingest_run_id   id of the bronze run
is_corrupt      true when the record is not a JSON object
corrupt_reason  why (empty record, invalid UTF-8, malformed JSON, not a JSON object), else null
"""

from pyspark.sql.types import BooleanType, LongType, StringType, StructField, StructType, TimestampType

BRONZE_COLUMNS = StructType(
    [
        StructField("raw", StringType()),
        StructField("raw_base64", StringType()),
        StructField("source_file", StringType(), False),
        StructField("file_hash", StringType(), False),
        StructField("source_modified_at", TimestampType()),
        StructField("record_index", LongType(), False),
        StructField("line_number", LongType(), False),
        StructField("container", StringType()),
        StructField("ingested_at", TimestampType(), False),
        StructField("ingest_run_id", StringType(), False),
        StructField("is_corrupt", BooleanType(), False),
        StructField("corrupt_reason", StringType()),
    ]
)
