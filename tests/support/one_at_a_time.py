"""One process at a time on this machine, for set-up that test workers side by side would race.

Why: `make test-all` runs test modules in workers side by side (pytest-xdist). On a fresh
machine two workers would each download into the same cache at once (Spark's resolver fetching
Delta's jars into its Ivy cache as a session starts, Maven fetching the Kafka broker's jars);
one after the other, the second finds what the first fetched.
"""

from __future__ import annotations

import fcntl
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def one_at_a_time(name: str) -> Iterator[None]:
    """Hold the machine-wide lock `name` (a file in the temporary folder) inside; wait for it."""
    path = Path(tempfile.gettempdir()) / f"catalog-lakehouse-tests-{name}.lock"
    with path.open("a") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
