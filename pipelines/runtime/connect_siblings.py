"""Sibling sessions of a Spark Connect session, so that a run's tasks can run side by side over Connect.

A classic session makes a sibling with `newSession()`: same Spark, its own settings and
temporary views. A Spark Connect session has no `newSession()`, but a client can open another
session on the same server (`SparkSession.builder.remote(...).create()`: a new session id), and
a Connect server runs the plans of several sessions at once. Each task side by side then gets a
session of its own, as on a classic driver, so a setting one task changes (`small_input_mode`,
a command's commit metadata under standard access mode) never reaches another.

Only a session this process opened to a server it names (`sc://host:port`) has siblings: the
session of a Databricks runtime (`use_existing_session`) is the platform's, and a `local[...]`
remote's server stops with any of its sessions. Nor does a client before PySpark 4.2: closing
one of its sessions (or dropping it: `__del__`) shuts down the thread pool every session of the
process shares and waits for it, which deadlocks the sessions still running (SPARK-55406).
Those runs take their tasks one by one.
"""

from __future__ import annotations

import logging
import os
import re
import weakref
from collections.abc import Callable
from typing import Any

LOCAL_SERVER_ENV = "SPARK_LOCAL_REMOTE"  # PySpark's mark of a Connect server this process started
_factories: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_siblings: weakref.WeakSet = weakref.WeakSet()


SAFE_CLIENT = (4, 2)  # the first PySpark whose Connect client closes a session on its own


def client_closes_sessions_apart(version: str | None = None) -> bool:
    """Whether the installed Spark Connect client (`version`: PySpark's, by default) can close
    one session while others of the process run (`SAFE_CLIENT`)."""
    if version is None:
        import pyspark

        version = pyspark.__version__
    numbers = re.match(r"(\d+)\.(\d+)", version)
    return numbers is not None and (int(numbers[1]), int(numbers[2])) >= SAFE_CLIENT


def allow_siblings(spark: Any, open_sibling: Callable[[], Any]) -> None:
    """Record that `open_sibling()` opens a new session beside `spark`, set up as `spark` is
    (nothing where the client cannot close sessions apart: its runs take tasks one by one)."""
    if client_closes_sessions_apart():
        _factories[spark] = open_sibling


def has_siblings(spark: Any) -> bool:
    """Whether a sibling of `spark` can be opened (`allow_siblings` was called for it)."""
    return spark in _factories


def open_sibling(spark: Any) -> Any:
    """A new session beside `spark`; `release` it when its task is done."""
    sibling = _factories[spark]()
    _siblings.add(sibling)
    return sibling


def release(session: Any) -> None:
    """End `session` on its server if it is a sibling `open_sibling` opened (anything else is kept)."""
    if session not in _siblings:
        return
    _siblings.discard(session)
    if LOCAL_SERVER_ENV in os.environ:  # stopping any session would stop this process's server
        return
    try:
        session.stop()
    except Exception:  # the server frees an abandoned session itself, after its idle timeout
        logging.getLogger(__name__).debug("could not release a sibling Spark Connect session")
