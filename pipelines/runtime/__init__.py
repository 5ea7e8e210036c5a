"""Where the code runs: the Spark session, a JDK, SQL expression text, fault injection for crash tests."""

from pipelines.runtime.java import ensure_java
from pipelines.runtime.spark import get_spark

__all__ = ["ensure_java", "get_spark"]
