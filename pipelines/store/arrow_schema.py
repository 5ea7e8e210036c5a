"""Spark schemas to Arrow schemas and back, alike on every PySpark the product supports.

delta-rs speaks Arrow, Spark speaks its own types, and PySpark's converters changed their
keywords between 4.0 and 4.2: 4.0 takes `timestamp_utc=True` where 4.2 takes `timezone="UTC"`,
and `from_arrow_schema` maps a zone-less Arrow timestamp to `TIMESTAMP` on 4.0 but to
`TIMESTAMP_NTZ` on 4.2. Both directions here give what 4.2 gives: a `TIMESTAMP` is an Arrow
timestamp in UTC, and a zone-less Arrow timestamp is a `TIMESTAMP_NTZ`, as in Delta's protocol.
"""

from __future__ import annotations

import inspect
from functools import cache

import pyarrow as pa
from pyspark.sql.pandas.types import from_arrow_schema, to_arrow_schema
from pyspark.sql.types import StructType


def spark_to_arrow(schema: StructType) -> pa.Schema:
    """The Arrow schema of a Spark schema, timestamps with a UTC zone."""
    return to_arrow_schema(schema, **_utc_keyword())


def arrow_to_spark(schema: pa.Schema) -> StructType:
    """The Spark schema of an Arrow schema; a zone-less timestamp is `TIMESTAMP_NTZ`."""
    return from_arrow_schema(schema, prefer_timestamp_ntz=True)


@cache
def _utc_keyword() -> dict[str, object]:
    if "timezone" in inspect.signature(to_arrow_schema).parameters:
        return {"timezone": "UTC"}
    return {"timestamp_utc": True}
