"""`lakehouse bundle`: the task graph exported, and checked, as a Databricks Asset Bundle."""

from pipelines.deploy.bundle import export
from pipelines.deploy.bundle_check import check

__all__ = ["check", "export"]
