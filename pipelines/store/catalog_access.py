"""Whether the run's identity may use the Unity Catalog catalog its tables are in.

Asked before a task of the Databricks job does any work: without `USE CATALOG` every schema,
table and volume of the catalog is out of reach, and the first symptom would otherwise be
whatever the task touched first (a landing folder that seems missing, a PERMISSION_DENIED on
some table). The task then stops with the grant a catalog admin must give
(`pipelines.core.unity_catalog`), which the bundle cannot give itself.
"""

from __future__ import annotations

from pyspark.sql import SparkSession

from pipelines.core.unity_catalog import catalog_unusable

# the error conditions of a catalog that does not exist or may not be used (Unity Catalog's, and
# Spark's for a name its session takes as a schema); any other failure is the task's to report
CATALOG_ERRORS = (
    "CATALOG_NOT_FOUND",
    "NO_SUCH_CATALOG",
    "SCHEMA_NOT_FOUND",
    "PERMISSION_DENIED",
    "INSUFFICIENT_PERMISSIONS",
)


class CatalogUnusable(RuntimeError):
    """The configured catalog (`storage.catalog`) does not exist, or this identity may not use it."""


def identity(spark: SparkSession) -> str:
    """The identity the session runs as (`current_user()`: a user name, or a service principal's
    application ID), or a description where the session cannot say."""
    try:
        return str(spark.sql("SELECT current_user() AS who").first()["who"])
    except Exception:  # noqa: BLE001 - only the wording of the failure depends on it
        return "this identity"


def check_catalog(spark: SparkSession, catalog: str) -> None:
    """Raise `CatalogUnusable` naming the grant to give when listing `catalog`'s schemas, which
    Unity Catalog allows only with `USE CATALOG`, fails for want of the catalog or the right.
    A failure of another kind (a session that cannot run SQL) is left to the task, which meets
    it and reports it in its own words."""
    try:
        spark.sql(f"SHOW SCHEMAS IN `{catalog}`").limit(1).collect()
    except Exception as exc:
        if any(condition in str(exc) for condition in CATALOG_ERRORS):
            raise CatalogUnusable(catalog_unusable(catalog, identity(spark))) from exc
