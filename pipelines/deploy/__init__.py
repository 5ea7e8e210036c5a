"""`lakehouse bundle`: the task graph exported, and checked, as a Databricks Asset Bundle."""

from pipelines.deploy.bundle import export
from pipelines.deploy.bundle_check import check, grants_to_give

__all__ = ["check", "export", "grants_to_give"]
