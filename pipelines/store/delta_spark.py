"""The JVM engine: Delta's own Spark classes (`format("delta")`, `DeltaTable.merge`).

Used where the Delta jars are on the classpath (Databricks, clusters with
delta-spark). Behaviour matches the delta-rs engine; the same test suite runs
against both when the jars are present.
"""

from __future__ import annotations

from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from pipelines.store.engine import METADATA_KEY, ConcurrentWriteError, Engine


def _quote(column: str) -> str:
    return "`" + column.replace("`", "``") + "`"


class DeltaSparkEngine(Engine):
    """Delta tables through delta-spark's JVM implementation."""

    name = "delta-spark"

    def _delta_table(self, path: str):
        from delta.tables import DeltaTable

        return DeltaTable.forPath(self.spark, path)

    def exists(self, path: str) -> bool:
        from delta.tables import DeltaTable

        return DeltaTable.isDeltaTable(self.spark, path)

    def version(self, path: str) -> int | None:
        if not self.exists(path):
            return None
        return int(self._delta_table(path).history(1).select("version").first()[0])

    def read(self, path: str, version: int | None = None) -> DataFrame:
        reader = self.spark.read.format("delta")
        if version is not None:
            reader = reader.option("versionAsOf", version)
        return reader.load(path)

    def read_added_since(self, path: str, version: int) -> DataFrame:
        current = self.read(path)
        if version < 0:
            return current
        before = set(self.read(path, version).inputFiles())
        added = [f for f in current.inputFiles() if f not in before]
        return current.where(F.input_file_name().isin(added)) if added else current.limit(0)

    def _writer(self, df: DataFrame, mode: str, partition_by: list[str], metadata: str | None):
        writer = df.write.format("delta").mode(mode).option("mergeSchema", "true")
        if partition_by:
            writer = writer.partitionBy(*partition_by)
        if metadata is not None:
            writer = writer.option("userMetadata", metadata)
        return writer

    def _conflict(self, exc: Exception, path: str) -> Exception:
        if "Concurrent" in type(exc).__name__ or "concurrent" in str(exc).lower():
            return ConcurrentWriteError(f"commit to {path} conflicted with another writer: {exc}")
        return exc

    def append(self, df, path, partition_by, metadata, rows=None) -> None:
        try:
            self._writer(df, "append", partition_by, metadata).save(path)
        except Exception as exc:
            raise self._conflict(exc, path) from exc

    def overwrite(self, df, path, partition_by, partitions, metadata) -> None:
        writer = self._writer(df, "overwrite", partition_by, metadata)
        if partitions and self.exists(path):
            clauses = []
            for spec in partitions:
                parts = [
                    f"{_quote(k)} IS NULL" if v is None else f"{_quote(k)} = '{str(v)}'"
                    for k, v in spec.items()
                ]
                clauses.append("(" + " AND ".join(parts) + ")")
            writer = writer.option("replaceWhere", " OR ".join(clauses))
        try:
            writer.save(path)
        except Exception as exc:
            raise self._conflict(exc, path) from exc

    def merge(self, df, path, keys, delete_flag, metadata, rows=None) -> None:
        if not self.exists(path):
            to_insert = df.where(~F.col(delete_flag)).drop(delete_flag) if delete_flag else df
            self.append(to_insert, path, [], metadata)
            return
        if metadata is not None:
            self.spark.conf.set("spark.databricks.delta.commitInfo.userMetadata", metadata)
        columns = [c for c in df.columns if c != delete_flag]
        values = {_quote(c): f"s.{_quote(c)}" for c in columns}
        condition = " AND ".join(f"t.{_quote(k)} = s.{_quote(k)}" for k in keys)
        live = f"NOT s.{_quote(delete_flag)}" if delete_flag else None
        builder = self._delta_table(path).alias("t").merge(df.alias("s"), condition)
        if delete_flag:
            builder = builder.whenMatchedDelete(condition=f"s.{_quote(delete_flag)}")
        builder = builder.whenMatchedUpdate(condition=live, set=values).whenNotMatchedInsert(
            condition=live, values=values
        )
        try:
            builder.execute()
        except Exception as exc:
            raise self._conflict(exc, path) from exc
        finally:
            self.spark.conf.unset("spark.databricks.delta.commitInfo.userMetadata")

    def history(self, path: str, limit: int | None = None) -> list[dict[str, Any]]:
        if not self.exists(path):
            return []
        frame = self._delta_table(path).history(limit) if limit else self._delta_table(path).history()
        rows = [row.asDict(recursive=True) for row in frame.collect()]
        for row in rows:
            row["timestamp"] = int(row["timestamp"].timestamp() * 1000)
            row.setdefault(METADATA_KEY, row.get("userMetadata"))
        return sorted(rows, key=lambda r: r["version"], reverse=True)

    def delete_files_not_referenced(self, path: str, retention_hours: float, dry_run: bool) -> list[str]:
        if not self.exists(path):
            return []
        self.spark.conf.set("spark.databricks.delta.retentionDurationCheck.enabled", "false")
        if dry_run:
            frame = self.spark.sql(f"VACUUM delta.`{path}` RETAIN {retention_hours} HOURS DRY RUN")
            return [row[0] for row in frame.collect()]
        self._delta_table(path).vacuum(retention_hours)
        return []
