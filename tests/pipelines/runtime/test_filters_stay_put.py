"""Inside `filters_stay_put` a filter on a computed column is not copied below the projection."""

from __future__ import annotations

from pyspark.sql import functions as F

from pipelines.runtime.spark import EXCLUDED_RULES, filters_stay_put


def _filter_computes_the_json(spark) -> bool:
    """Whether the optimized plan's filter holds `from_json` (the projection's work, done twice)."""
    rows = spark.createDataFrame([('{"a": 1}',), ('{"a": 2}',)], "raw string")
    typed = rows.select(F.from_json("raw", "a int").alias("j")).select(F.col("j.a").alias("a"))
    plan = typed.where(F.col("a") > 1)._jdf.queryExecution().optimizedPlan().toString()
    return any("Filter" in line and "from_json" in line for line in plan.splitlines())


def test_the_filter_stays_above_the_typing_and_the_setting_comes_back(spark):
    spark.conf.set(EXCLUDED_RULES, "org.apache.spark.sql.catalyst.optimizer.ConstantFolding")
    try:
        assert _filter_computes_the_json(spark)  # Spark's default: pushed down, parsed twice
        with filters_stay_put(spark):
            assert not _filter_computes_the_json(spark)
            assert "ConstantFolding" in spark.conf.get(EXCLUDED_RULES)  # a user's exclusions are kept
        assert _filter_computes_the_json(spark)
        assert spark.conf.get(EXCLUDED_RULES) == "org.apache.spark.sql.catalyst.optimizer.ConstantFolding"
    finally:
        spark.conf.unset(EXCLUDED_RULES)
