"""Running the task graph: order, admission of tasks side by side, the warehouse lock, the local timer."""

from pipelines.orchestration.lock import WarehouseLocked, warehouse_lock
from pipelines.orchestration.runner import LAYERS, RunFailed, RunSummary, run_pipeline
from pipelines.orchestration.schedule import run_every

__all__ = [
    "LAYERS",
    "RunFailed",
    "RunSummary",
    "WarehouseLocked",
    "run_every",
    "run_pipeline",
    "warehouse_lock",
]
