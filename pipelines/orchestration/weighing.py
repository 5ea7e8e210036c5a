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
    before a run, summed. Read in this process by delta-rs, whichever engine writes the warehouse
    (the same Delta format): no JVM runs yet."""
    from pipelines.store import TableStore
    from pipelines.store.delta_rs import DeltaRsEngine

    warehouse = WarehouseView(TableStore(config.warehouse, DeltaRsEngine(None)), config)
    specs = [task.spec(config) for task in (graph or load_graph()).ordered(set(layers))]
    return sum(task_rows(spec, warehouse) for spec in specs)


def java_options_for_one_run(config: Config, layers: tuple[str, ...], graph: TaskGraph | None = None) -> str:
    """The JIT options for a new JVM started for one run of `layers` (`pipelines.runtime.tuning.jit`)."""
    from pipelines.runtime.tuning.jit import java_options_for_rows

    return java_options_for_rows(config, lambda: rows_in_sight(config, layers, graph))
