"""One executor per table kind: the I/O, gates and bookkeeping around a table's pure transform."""

from pipelines.executors import bronze, gold, silver

__all__ = ["bronze", "gold", "silver"]
