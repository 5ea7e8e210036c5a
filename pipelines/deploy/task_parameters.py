"""The parameters the Databricks job's tasks start their entry points with: `lakehouse-task`
(a group of tables, or the maintenance step) and `lakehouse-collect` (one pull of a collector).

One parser each serves the entry point (`pipelines.cli`) and the bundle check, which parses the
exported job's parameters with it before a deploy.
"""

from __future__ import annotations

import argparse

from pipelines.core.config import ENGINES
from pipelines.runtime.secrets import secret_reference

DESCRIPTION = (
    "Run part of the task graph (conf/jobs.yaml) as a task of the Databricks job does: one group of "
    "tasks, one task, the maintenance step that compacts the tables, or the notify step."
)
COLLECT_DESCRIPTION = (
    "Pull once from a catalog's API into landing, as a collect task of the Databricks job does: "
    "`lakehouse collect`'s pulls with their own options, a failure raised, an empty --server "
    "(a workspace without that catalog) a pull with nothing to do."
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
    what.add_argument(
        "--notify",
        action="store_true",
        help="send the notices since the last run to the configured targets (notifications settings)",
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


def collect_parser() -> argparse.ArgumentParser:
    """The options of `lakehouse-collect`: those of `lakehouse collect`'s pulls, whose own
    parsers it reuses, so a task and the command take the same options."""
    from pipelines.collectors.commands import add_pull_commands

    parser = argparse.ArgumentParser(prog="lakehouse-collect", description=COLLECT_DESCRIPTION)
    add_pull_commands(parser.add_subparsers(dest="collect_source", required=True))
    return parser


def parse_collect_task(argv: list[str] | None) -> argparse.Namespace:
    """`lakehouse-collect`'s parameters parsed; refused (SystemExit 2, a usage line) as argparse
    refuses, and with `--every`: a job task pulls once, the job's schedule is its tick."""
    parser = collect_parser()
    args = parser.parse_args(argv)
    if args.every is not None:
        parser.error("--every: a task of the job pulls once; the job's schedule is its tick")
    return args
