"""The console scripts: `lakehouse` (run, query, generate, report, maintain) and `lakehouse-task` (one task of the Databricks job)."""

from pipelines.cli.commands import main, task_main

__all__ = ["main", "task_main"]
