"""The local profile maps case with the JVM, not ICU, and the values the pipeline lowercases
still come out right.

Why the setting: Spark 4 maps case with ICU by default, and ICU builds its tables at the first
`lower()` of every process (1-2 s of the first silver task of a scheduled run).
"""

from __future__ import annotations

ICU_CASE_MAPPINGS = "spark.sql.icu.caseMappings.enabled"


def test_the_local_profile_maps_case_with_the_jvm(spark, config):
    """The suite's session is the local profile's (`get_spark(config)` in conftest)."""
    assert config.profile["spark_conf"][ICU_CASE_MAPPINGS] == "false"
    assert spark.conf.get(ICU_CASE_MAPPINGS) == "false"


def test_lowercased_values_are_what_python_gives(spark):
    """Enums, booleans, event codes, and non-ASCII text whose lower case is unambiguous
    (no final sigma, no dotted capital I, where mappings differ by context or locale)."""
    values = [" TRUE ", "False", "node-Changed", "ÄÖÜ Straße", "ΔΕΛΤΑ", "数据 DQ", "Ünïcödé_Kéy"]
    rows = spark.createDataFrame([(v,) for v in values], "v string").selectExpr("v", "lower(trim(v)) AS low")

    lowered = {row.v: row.low for row in rows.collect()}

    assert lowered == {v: v.strip().lower() for v in values}
