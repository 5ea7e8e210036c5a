"""`lakehouse bundle`: the task graph exported, and checked, as a Databricks Asset Bundle."""

from pipelines.deploy.bundle import check, export

__all__ = ["check", "export"]
