"""From a change to the raw record it came from: change -> silver row -> bronze row.

The path, as the tables carry it: a change's `change_id` is the `event_id` of its row in one of
the silver tables `gold.change_history` reads (`gold.change_history.SOURCES`, searched in that
order, the order in which the table prefers a row when two share an id). Every silver row keeps
the lineage of its bronze record (`source_file`, `record_index`, `ingested_at`: a file ingested
again after it changed is told apart by its ingestion time), and each silver table's spec names
the table it is typed from, up to a bronze table. Reads are narrowed to the scope: silver by
the months of the changes (its partitions), bronze by the files and record positions named.
"""

from __future__ import annotations

import datetime as dt
import importlib
from dataclasses import dataclass
from typing import Any

from pyspark.sql import DataFrame, SparkSession

from gold.change_history import SOURCES as CHANGE_SOURCES
from pipelines.core.table_specs import EVENT_MONTH
from pipelines.evidence import canonical
from pipelines.store import TableStore
from pipelines.store.pruning import In

LINK = ("source_file", "record_index", "ingested_at")


def bronze_table_of(table: str) -> str:
    """The bronze table a silver table's rows come from, following each spec's `source`."""
    seen = table
    while not seen.startswith("bronze."):
        module = importlib.import_module(seen)  # `silver.x` is the module of table silver.x
        seen = module.SPEC.source
    return seen


@dataclass(frozen=True)
class Link:
    """Where one change came from: its silver row's table and the bronze record's lineage."""

    silver_table: str
    bronze_table: str
    source_file: str
    record_index: int
    ingested_at: str | None  # canonical UTC text

    def document(self, change_id: str) -> dict[str, Any]:
        return {
            "change_id": change_id,
            "silver_table": self.silver_table,
            "silver_event_id": change_id,
            "bronze_table": self.bronze_table,
            "source_file": self.source_file,
            "record_index": self.record_index,
            "ingested_at": self.ingested_at,
        }


def _months(dates: list[str]) -> list[dt.date]:
    """The months of the given ISO dates and of the days either side (silver's partitions)."""
    months = set()
    for text in dates:
        day = dt.date.fromisoformat(text)
        for near in (day - dt.timedelta(days=1), day, day + dt.timedelta(days=1)):
            months.add(near.replace(day=1))
    return sorted(months)


def _ids_frame(spark: SparkSession, ids: list[str]) -> DataFrame:
    return spark.createDataFrame([(i,) for i in ids], "event_id string")


def silver_links(
    store: TableStore, versions: dict[str, int], changes: list[dict[str, Any]]
) -> dict[str, Link]:
    """change_id -> its `Link`, for the changes whose silver row is found."""
    links: dict[str, Link] = {}
    wanted = sorted({c["change_id"] for c in changes})
    months = _months(sorted({c["event_date"] for c in changes if c.get("event_date")}))
    for table in CHANGE_SOURCES:
        missing = [i for i in wanted if i not in links]
        if not missing or table not in versions:
            continue
        rows = store.read(table, version=versions[table], where=[In(EVENT_MONTH, months)])
        if EVENT_MONTH not in rows.columns:  # a table written before its layout: no partitions to skip
            rows = store.read(table, version=versions[table])
        found = rows.join(_ids_frame(store.spark, missing), "event_id", "left_semi").select("event_id", *LINK)
        bronze = bronze_table_of(table)
        for row in canonical.collect(found):
            links.setdefault(
                row["event_id"],
                Link(table, bronze, row["source_file"], row["record_index"], row["ingested_at"]),
            )
    return links


def bronze_records(store: TableStore, versions: dict[str, int], links: list[Link]) -> list[dict[str, Any]]:
    """The bronze rows the links name, each once, with its table under `table`."""
    records: list[dict[str, Any]] = []
    by_table: dict[str, dict[str, set[int]]] = {}
    for link in links:
        by_table.setdefault(link.bronze_table, {}).setdefault(link.source_file, set()).add(link.record_index)
    for table in sorted(by_table):
        if table not in versions:
            continue
        files = by_table[table]
        selections = [
            [In("source_file", [name]), In("record_index", sorted(files[name]))] for name in sorted(files)
        ]
        rows = store.read_any(table, selections, version=versions[table])
        keys = {link_key(link)[1:] for link in links if link.bronze_table == table}
        for row in canonical.collect(rows):
            if (row["source_file"], row["record_index"], row["ingested_at"]) in keys:
                records.append({"table": table, **row})
    return records


def record_key(record: dict[str, Any]) -> tuple:
    return (record["table"], record["source_file"], record["record_index"], record["ingested_at"])


def link_key(link: Link) -> tuple:
    return (link.bronze_table, link.source_file, link.record_index, link.ingested_at)
