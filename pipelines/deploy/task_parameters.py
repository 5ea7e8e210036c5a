"""The parameters every task of the Databricks job starts `lakehouse-task` with.

One parser serves the entry point (`pipelines.cli.task`) and the bundle check, which parses the
exported job's parameters with it before a deploy.
"""

from __future__ import annotations

import argparse

from pipelines.core.config import ENGINES
from pipelines.deploy.secrets import secret_reference

DESCRIPTION = (
    "Run part of the task graph (conf/jobs.yaml) as a task of the Databricks job does: one group of "
    "tasks, one task, or the maintenance step that compacts the tables."
)


def task_parser() -> argparse.ArgumentParser:
    """The options of `lakehouse-task`."""
    parser = argparse.ArgumentParser(prog="lakehouse-task", description=DESCRIPTION)
    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument("--group", help="a task group of the Databricks job (pipelines.core.task_groups)")
    what.add_argument("--task", help="one task of conf/jobs.yaml")
    what.add_argument(
        "--maintenance",
        action="store_true",
        help="compact every table holding enough small files (maintenance settings)",
    )
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
    parser.add_argument(
        "--ip-salt-secret",
        type=secret_reference,
        metavar="SCOPE/KEY",
        help="a Databricks secret holding the IP salt, read when the variable privacy.ip_salt_env "
        "names is unset (serverless jobs, which take no cluster environment variables)",
    )
    parser.add_argument("--log-format", choices=("text", "json"), default="text")
    return parser
