"""SQL expression text: literals and names survive Spark's parser exactly, with F.lit's types."""

from __future__ import annotations

import copy
import math

import pytest
from pyspark.sql import functions as F

from pipelines.core.config import Config
from pipelines.runtime.spark import get_spark
from pipelines.runtime.sql_expressions import (
    any_of,
    column,
    data_type,
    literal,
    literals,
    name,
    non_null_strings,
    one_of,
    when,
)

AWKWARD_TEXTS = [
    "plain",
    "it's",
    "back\\slash",
    "\\' escaped quote",
    "ends with \\",
    "regex ^urn:li:(corp|data)\\w+\\.\\d{2}$",
    "line\nbreak\ttab",
    "\u0000 nul and \u001f unit separator",
    "-- not a comment /* nor this */",
    "$1 and ${x}",
    "\\u0041 stays six characters",
    "中文 and emoji \U0001f600",
    "",
]


@pytest.mark.parametrize("text", AWKWARD_TEXTS)
def test_a_string_literal_reads_back_as_the_same_text(spark, text):
    value = spark.range(1).select(column(literal(text), "v")).first()["v"]
    assert value == text


@pytest.mark.parametrize(
    "value",
    [
        0,
        -7,
        2**31 - 1,
        2**31,
        -(2**31) - 1,
        10**15,
        1.5,
        -0.25,
        1e-05,
        3e20,
        True,
        False,
        math.inf,
        -math.inf,
    ],
)
def test_a_literal_has_the_value_and_type_of_f_lit(spark, value):
    row = spark.range(1).select(column(literal(value), "text"), F.lit(value).alias("lit"))
    types = {f.name: f.dataType for f in row.schema.fields}
    assert types["text"] == types["lit"]
    values = row.first()
    assert values["text"] == values["lit"] == value


def test_null_and_nan_literals(spark):
    row = spark.range(1).select(column(literal(None), "none"), column(literal(math.nan), "nan")).first()
    assert row["none"] is None
    assert math.isnan(row["nan"])


def test_a_name_quotes_odd_field_names(spark):
    df = spark.createDataFrame([(("x", "y"),)], "`p` struct<`a.b`: string, `we``ird`: string>")
    row = df.select(column(name("p", "a.b"), "dotted"), column(name("p", "we`ird"), "quoted")).first()
    assert (row["dotted"], row["quoted"]) == ("x", "y")


def test_a_column_takes_odd_aliases_verbatim(spark):
    aliases = ["a.b", "we`ird", "with space", "ünï", "x AS y"]
    row = spark.range(1).select(*[column(literal(i), alias) for i, alias in enumerate(aliases)])
    assert row.columns == aliases
    assert list(row.first()) == list(range(len(aliases)))


def test_in_lists_when_and_null_safe_or(spark):
    df = spark.createDataFrame([("a",), ("it's",), ("z",), (None,)], "v string")
    v = name("v")
    known = literals(["a", "it's"])
    rows = df.select(
        column(when(f"{v} IN ({known})", literal("known")), "kind"),
        column(any_of([f"{v} = 'z'", f"{v} = 'a'"]), "either"),
    ).collect()
    assert [(r["kind"], r["either"]) for r in rows] == [
        ("known", True),
        ("known", False),
        (None, True),
        (None, False),
    ]
    assert spark.range(1).select(column(any_of([]), "none")).first()["none"] is False


def test_non_null_strings_keeps_order_and_drops_nulls(spark):
    row = spark.range(1).select(
        column(non_null_strings([literal("b"), "NULL", literal("a")]), "some"),
        column(non_null_strings([]), "none"),
    )
    assert row.schema["none"].dataType.simpleString() == "array<string>"
    assert tuple(row.first()) == (["b", "a"], [])


def test_a_value_without_a_sql_literal_is_refused():
    with pytest.raises(TypeError, match="no SQL literal"):
        literal(object())
    with pytest.raises(ValueError, match="at least one part"):
        name()
    with pytest.raises(ValueError, match="variable"):
        name("p", "${user}")


def test_a_data_type_is_a_plain_type_name(spark):
    nested = "array<struct<type:string,values:array<int>>>"
    df = spark.range(1).select(column(f"CAST(NULL AS {data_type(nested)})", "v"))
    assert df.schema["v"].dataType.simpleString() == nested
    for bad in ["int) OR (true", "string`", "int -- x", "", "${t}", "decimal(10, 2)"]:
        with pytest.raises(ValueError, match="not a plain Spark type name"):
            data_type(bad)


def test_the_session_keeps_the_literal_syntax_sql_text_writes_even_when_a_profile_changes_it(spark, config):
    raw = copy.deepcopy(config.raw)
    profile = raw["profiles"][raw["profile"]]
    profile["use_existing_session"] = True  # the running session gets the profile's settings
    profile.setdefault("spark_conf", {})["spark.sql.parser.escapedStringLiterals"] = "true"
    before = spark.conf.get("spark.sql.parser.escapedStringLiterals")
    try:
        session = get_spark(Config(raw))
        assert session.conf.get("spark.sql.parser.escapedStringLiterals") == "false"
        text = "back\\slash, it's ${x}"
        assert session.range(1).select(column(literal(text), "v")).first()["v"] == text
    finally:
        spark.conf.set("spark.sql.parser.escapedStringLiterals", before)


def test_one_of_keeps_the_rows_whose_value_is_listed_and_none_for_an_empty_list(spark):
    frame = spark.createDataFrame([(t,) for t in AWKWARD_TEXTS] + [(None,)], "g string")
    listed = AWKWARD_TEXTS[:4] + ["not present"]
    assert sorted(r.g for r in frame.where(one_of("g", listed)).collect()) == sorted(AWKWARD_TEXTS[:4])
    assert frame.where(one_of("g", [])).count() == 0
