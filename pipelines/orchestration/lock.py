"""One writer per warehouse: an advisory file lock held for the whole run.

The lock is released by the OS when the process dies, so a crashed run never
blocks the next one.
"""

from __future__ import annotations

import fcntl
import os
import time
from contextlib import contextmanager
from pathlib import Path


class WarehouseLocked(RuntimeError):
    """Another run holds the warehouse."""


@contextmanager
def warehouse_lock(warehouse: Path, timeout_seconds: float = 0):
    """Hold the lock; wait up to `timeout_seconds` for it, then raise WarehouseLocked."""
    warehouse.mkdir(parents=True, exist_ok=True)
    path = warehouse / ".lakehouse.lock"
    handle = open(path, "a+")
    deadline = time.monotonic() + timeout_seconds
    try:
        while True:
            try:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    handle.seek(0)
                    holder = handle.read().strip() or "another process"
                    raise WarehouseLocked(
                        f"warehouse {warehouse} is in use by {holder}; try again later"
                    ) from None
                time.sleep(0.5)
        handle.seek(0)
        handle.truncate()
        handle.write(f"pid {os.getpid()}")
        handle.flush()
        yield
    finally:
        handle.close()
