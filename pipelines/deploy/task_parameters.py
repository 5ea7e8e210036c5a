"""The parameters every task of the Databricks job starts `lakehouse-task` with.

One parser serves the entry point (`pipelines.cli`) and the bundle check, which parses the
exported job's parameters with it before a deploy.
"""

from __future__ import annotations

import argparse

from pipelines.core.config import ENGINES

DESCRIPTION = "Run one task of the task graph (conf/jobs.yaml), as a task of the Databricks job does."


def task_parser() -> argparse.ArgumentParser:
    """The options of `lakehouse-task`."""
    parser = argparse.ArgumentParser(prog="lakehouse-task", description=DESCRIPTION)
    parser.add_argument("--task", required=True, help="task key in conf/jobs.yaml")
    parser.add_argument("--conf", help="YAML file merged over conf/lakehouse.yaml (empty: none)")
    parser.add_argument("--warehouse", help="warehouse folder (default from conf)")
    parser.add_argument("--landing", help="landing folder (default from conf)")
    parser.add_argument(
        "--profile",
        help="entry of `profiles` that configures Spark (default from conf; on Databricks: databricks)",
    )
    parser.add_argument("--engine", choices=ENGINES, help="storage.engine (default from conf)")
    parser.add_argument(
        "--catalog", help='storage.catalog, e.g. a Unity Catalog catalog ("" = session catalog)'
    )
    parser.add_argument(
        "--schema-prefix", help="storage.schema_prefix: each layer's schema is <prefix><layer>, e.g. dev_"
    )
    parser.add_argument("--log-format", choices=("text", "json"), default="text")
    return parser
