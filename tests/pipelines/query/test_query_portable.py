"""Which statements DuckDB answers by default: a conservative allow-list over Spark SQL's syntax
tree; everything else is Spark SQL's, with the reason said."""

from __future__ import annotations

import pytest

from pipelines.core.config import load_config
from pipelines.query.engines import why_not_duckdb
from pipelines.query.portable import to_duckdb

NAMES = {"gold.tag_timeline", "gold.change_history", "gold.current_tags", "ops.runs"}


@pytest.mark.parametrize(
    "statement, tables",
    [
        ("SELECT entity_urn FROM gold.tag_timeline WHERE is_current", {"gold.tag_timeline"}),
        ("SELECT `entity_urn` FROM `gold`.`Tag_Timeline` t", {"gold.tag_timeline"}),
        (
            "WITH c AS (SELECT category FROM gold.change_history) SELECT category FROM c",
            {"gold.change_history"},
        ),
        (
            "SELECT t.tag_urn, count(DISTINCT h.actor) AS actors FROM gold.tag_timeline t "
            "LEFT JOIN gold.change_history h ON h.entity_urn = t.entity_urn GROUP BY t.tag_urn",
            {"gold.tag_timeline", "gold.change_history"},
        ),
        ("SELECT * FROM gold.current_tags ORDER BY entity_urn", {"gold.current_tags"}),
        (
            "SELECT run_id, row_number() OVER (PARTITION BY job ORDER BY started_at) AS nth FROM ops.runs",
            {"ops.runs"},
        ),
    ],
)
def test_queries_duckdb_answers_alike_go_to_duckdb_with_the_tables_they_read(statement, tables):
    translation = to_duckdb(statement, NAMES)
    assert translation.sql is not None, translation.reason
    assert translation.tables == tables


def test_an_unnamed_count_star_is_named_count_1_as_spark_names_it():
    translation = to_duckdb("SELECT count(*) FROM gold.tag_timeline WHERE is_current", NAMES)
    assert translation.sql == 'SELECT COUNT(*) AS "count(1)" FROM gold.tag_timeline WHERE is_current'


def test_spark_ordering_and_timestamps_are_kept_in_duckdbs_dialect():
    sql = to_duckdb(
        "SELECT tag_urn FROM gold.tag_timeline WHERE valid_from < TIMESTAMP '2024-03-15 00:00:00' "
        "ORDER BY valid_to",
        NAMES,
    ).sql
    assert "CAST('2024-03-15 00:00:00' AS TIMESTAMPTZ)" in sql and "ORDER BY valid_to NULLS FIRST" in sql


@pytest.mark.parametrize(
    "statement, reason",
    [
        ("SELECT collect_set(tag_urn) AS tags FROM gold.tag_timeline", "Spark SQL's to answer"),
        ("SELECT * FROM gold.tag_timeline VERSION AS OF 3", "Spark SQL's to answer"),
        ("SELECT * FROM gold.tag_timeline TIMESTAMP AS OF '2024-01-01'", "Spark SQL's to answer"),
        ("SELECT details['k'] AS k FROM gold.change_history", "Spark SQL's to answer"),
        ("SELECT lower(tag_urn) FROM gold.tag_timeline", "has no name"),
        ("SELECT 1 AS x FROM gold.nope", "gold.nope is not a table of the warehouse"),
        ("SELECT 1 AS x FROM spark_catalog.gold.tag_timeline", "Spark SQL's to read"),
        ("SELECT * FROM gold.tag_timeline t JOIN ops.runs r ON true", "* over a join"),
        ("SELECT entity_urn FROM gold.tag_timeline LEFT SEMI JOIN ops.runs USING (entity_urn)", "JOIN"),
        ("SELECT entity_urn FROM gold.tag_timeline WHERE tag_urn LIKE 'a\\_b'", "backslash"),
        ("SELECT CAST(valid_from AS TIMESTAMP_NTZ) AS t FROM gold.tag_timeline", "type TIMESTAMP_NTZ"),
        ("SHOW TABLES IN gold", "only queries go to DuckDB"),
        ("DESCRIBE gold.tag_timeline", "only queries go to DuckDB"),
        ("SELECT FROM WHERE", "not a query DuckDB reads alike"),
    ],
)
def test_anything_else_is_spark_sqls_with_the_reason(statement, reason):
    translation = to_duckdb(statement, NAMES)
    assert translation.sql is None and reason in translation.reason, translation.reason


def test_duckdb_reads_local_warehouses_only(tmp_path):
    config = load_config()
    assert why_not_duckdb(config) is None
    catalog = tmp_path / "catalog.yaml"
    catalog.write_text('storage:\n  engine: delta-spark\n  catalog: "main"\n')
    assert "catalog tables in 'main'" in why_not_duckdb(load_config(str(catalog)))
    databricks = tmp_path / "databricks.yaml"
    databricks.write_text("profile: databricks\n")
    assert "databricks profile" in why_not_duckdb(load_config(str(databricks)))
