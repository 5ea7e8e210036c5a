"""What a run has learnt of its tables' logs (versions, commits, row counts), asked once per table.

Why: every task asks the same questions of the same tables (the version of its sources, the
watermark in its own last commit, how many rows arrived since). On Delta's JVM engine each
answer is a Delta command and a Spark job (`DESCRIBE HISTORY` reads the commits in a job), so
a run of forty tasks asking a few each spent most of a small increment on them. A run keeps
each answer until the table is written through the same store, which forgets that table's.

A store outside a run (a test's, `lakehouse sql`'s) keeps nothing: writers it does not see
may move the tables on at any time.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

T = TypeVar("T")


class MetadataCache:
    """Answers keyed by (table, question), kept while `enabled`; thread-safe, one computation per key."""

    def __init__(self, enabled: bool = True) -> None:
        self.enabled = enabled
        self._lock = threading.Lock()
        self._values: dict[str, dict[Hashable, Any]] = {}
        self._computing: dict[tuple[str, Hashable], threading.Lock] = {}
        self._generation: dict[str, int] = {}  # moves on when a table is forgotten

    def get(self, table: str, key: Hashable, compute: Callable[[], T]) -> T:
        """The kept answer to `key` about `table`, else `compute()`'s, kept. Parallel tasks asking
        the same question wait for one computation."""
        if not self.enabled:
            return compute()
        with self._lock:
            kept = self._values.get(table, {})
            if key in kept:
                return kept[key]
            guard = self._computing.setdefault((table, key), threading.Lock())
        with guard:
            with self._lock:
                kept = self._values.get(table, {})
                if key in kept:
                    return kept[key]
                generation = self._generation.get(table, 0)
            value = compute()
            with self._lock:
                if self._generation.get(table, 0) == generation:  # not written meanwhile
                    self._values.setdefault(table, {})[key] = value
                self._computing.pop((table, key), None)
            return value

    def peek(self, table: str, key: Hashable, default: Any = None) -> Any:
        """The kept answer to `key` about `table`, without computing one."""
        with self._lock:
            return self._values.get(table, {}).get(key, default)

    def items(self, table: str) -> list[tuple[Hashable, Any]]:
        """Every kept (question, answer) about `table`."""
        with self._lock:
            return list(self._values.get(table, {}).items())

    def put(self, table: str, key: Hashable, value: Any) -> None:
        if self.enabled:
            with self._lock:
                self._values.setdefault(table, {})[key] = value

    def discard(self, table: str, key: Hashable) -> None:
        """Drop one kept answer (one too large to keep)."""
        with self._lock:
            self._values.get(table, {}).pop(key, None)

    def forget(self, table: str) -> None:
        """Drop what is known of `table` (it was just written)."""
        with self._lock:
            self._values.pop(table, None)
            self._generation[table] = self._generation.get(table, 0) + 1
