"""Sibling sessions of a Spark Connect session, so that a run's tasks can run side by side over Connect.

A classic session makes a sibling with `newSession()`: same Spark, its own settings and
temporary views. A Spark Connect session has no `newSession()`, but a client can open another
session on the same server (`SparkSession.builder.remote(...).create()`: a new session id), and
a Connect server runs the plans of several sessions at once. Each task side by side then gets a
session of its own, as on a classic driver, so a setting one task changes (`small_input_mode`,
a command's commit metadata under standard access mode) never reaches another.

Only a session this process opened to a server it names (`sc://host:port`) has siblings: the
session of a Databricks runtime (`use_existing_session`) is the platform's, and a `local[...]`
remote's server stops with any of its sessions. Those runs take their tasks one by one.
"""

from __future__ import annotations

import logging
import os
import weakref
from collections.abc import Callable
from typing import Any

LOCAL_SERVER_ENV = "SPARK_LOCAL_REMOTE"  # PySpark's mark of a Connect server this process started
_factories: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_siblings: weakref.WeakSet = weakref.WeakSet()


def allow_siblings(spark: Any, open_sibling: Callable[[], Any]) -> None:
    """Record that `open_sibling()` opens a new session beside `spark`, set up as `spark` is."""
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
