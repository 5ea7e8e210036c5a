"""How many rows a task has in sight before it runs: the size the runner and the JIT choice go by.

Each executor weighs its own kind from Delta statistics and landing file sizes (`pending_rows`),
with no Spark session: a task's upstream output is not in sight until the upstream task ran.
"""

from __future__ import annotations

from pipelines.core.config import Config
from pipelines.core.context import WarehouseView
from pipelines.core.graph import TaskGraph, load_graph
from pipelines.core.table_specs import BronzeTableSpec, GoldTableSpec, SilverTableSpec
from pipelines.executors import bronze, gold, silver

PENDING_ROWS = {
    BronzeTableSpec: bronze.pending_rows,
    SilverTableSpec: silver.pending_rows,
    GoldTableSpec: gold.pending_rows,
}


def task_rows(spec, warehouse: WarehouseView) -> int:
    """The rows the task of `spec` would read if it ran now."""
    return PENDING_ROWS[type(spec)](spec, warehouse)


def rows_in_sight(config: Config, layers: tuple[str, ...], graph: TaskGraph | None = None) -> int:
    """The rows the tasks of `layers` (of `graph`, the default task graph when None) have in sight
    before a run, summed, from the tables' folders (`open_folder_store`): no Spark session runs yet."""
    from pipelines.store import open_folder_store

    warehouse = WarehouseView(open_folder_store(config.warehouse), config)
    specs = [task.spec(config) for task in (graph or load_graph()).ordered(set(layers))]
    return sum(task_rows(spec, warehouse) for spec in specs)
