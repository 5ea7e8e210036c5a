"""Small inputs run interpreted, without adaptive re-planning, in one partition; settings come back."""

from __future__ import annotations

import pytest

from pipelines.runtime.spark import SMALL_INPUT_CONF, small_input_mode

WHOLE_STAGE = "spark.sql.codegen.wholeStage"
FACTORY = "spark.sql.codegen.factoryMode"
PARTITIONS = "spark.sql.shuffle.partitions"


@pytest.fixture(autouse=True)
def generated_code(spark):
    """The session as a large input finds it (whole-stage code, generated expressions); the
    suite's own settings come back after each test."""
    previous = {key: spark.conf.get(key, None) for key in SMALL_INPUT_CONF}
    spark.conf.set(WHOLE_STAGE, "true")
    spark.conf.unset(FACTORY)
    yield
    for key, value in previous.items():
        if value is None:
            spark.conf.unset(key)
        else:
            spark.conf.set(key, value)


def _compiled_stages(spark) -> bool:
    """Whether the physical plan of a small query runs as generated whole-stage code (`*(n)` nodes)."""
    plan = spark.range(10).selectExpr("id + 1 AS x").where("x > 3")._jdf.queryExecution().executedPlan()
    return "*(" in plan.toString()


def test_a_small_input_runs_interpreted_and_the_settings_come_back(spark):
    partitions = spark.conf.get(PARTITIONS)
    assert _compiled_stages(spark)

    with small_input_mode(spark, rows=99, limit=100) as switched:
        assert switched
        assert {key: spark.conf.get(key) for key in SMALL_INPUT_CONF} == SMALL_INPUT_CONF
        assert not _compiled_stages(spark)
        assert spark.range(5).selectExpr("sum(id * 2) AS s").first().s == 20

    assert spark.conf.get(WHOLE_STAGE) == "true"
    assert spark.conf.get(FACTORY, None) is None
    assert spark.conf.get(PARTITIONS) == partitions
    assert _compiled_stages(spark)


@pytest.mark.parametrize(("rows", "limit"), [(100, 100), (5, 0), (5, None)])
def test_large_inputs_or_no_limit_keep_generated_code(spark, rows, limit):
    with small_input_mode(spark, rows=rows, limit=limit) as switched:
        assert not switched
        assert _compiled_stages(spark)


def test_the_settings_come_back_when_the_task_fails(spark):
    with pytest.raises(ZeroDivisionError), small_input_mode(spark, rows=1, limit=10):
        raise ZeroDivisionError
    assert spark.conf.get(WHOLE_STAGE) == "true"
    assert _compiled_stages(spark)
