"""The console scripts: `lakehouse` (run, query, generate, report, maintain), `lakehouse-task` (one
task of the Databricks job) and `lakehouse-collect` (one pull, a collect task of that job)."""

from pipelines.cli.collect_task import collect_main
from pipelines.cli.commands import main, task_main

__all__ = ["collect_main", "main", "task_main"]
