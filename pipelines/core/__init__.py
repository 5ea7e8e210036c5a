"""What every part shares: configuration, the task graph and the table specs.

The run context (`pipelines.core.context`) is imported from its module: it brings the table
store, which itself reads the configuration from here.
"""

from pipelines.core.config import Config, ConfigError, load_config
from pipelines.core.graph import Task, TaskGraph, load_graph
from pipelines.core.table_specs import BronzeTableSpec, GoldTableSpec, SilverTableSpec

__all__ = [
    "BronzeTableSpec",
    "Config",
    "ConfigError",
    "GoldTableSpec",
    "SilverTableSpec",
    "Task",
    "TaskGraph",
    "load_config",
    "load_graph",
]
