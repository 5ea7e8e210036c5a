"""Reading single commits of a Delta log (`_delta_log/<version>.json`) without loading a snapshot.

Incremental reads need what one commit did (which files it added, whether that changed data),
which a snapshot cannot tell: a snapshot lists the files that are live, so a file compaction
rewrote looks new. Commits are newline-delimited JSON actions (Delta protocol, "Delta Log
Entries"); checkpoints summarise them but never replace them, so reading commit N costs one
small file whatever the history.
"""

from __future__ import annotations

import json
import os
from typing import Any
from urllib.parse import unquote, urlparse


def commit_file(table_path: str, version: int) -> str:
    return os.path.join(table_path, "_delta_log", f"{version:020d}.json")


def commit_actions(table_path: str, version: int) -> list[dict[str, Any]]:
    """The actions of commit `version` in log order; FileNotFoundError names the commit file when
    the log no longer holds it (expired by log retention)."""
    path = commit_file(table_path, version)
    try:
        with open(path, encoding="utf-8") as handle:
            return [json.loads(line) for line in handle if line.strip()]
    except FileNotFoundError:
        raise FileNotFoundError(
            f"{path}: commit {version} is no longer in the Delta log (log retention); "
            "read the whole table instead"
        ) from None


def data_file_path(table_path: str, action_path: str) -> str:
    """The local path of an add/remove action's file (log paths are URL-encoded, relative or URIs)."""
    parsed = urlparse(action_path)
    if parsed.scheme == "file":
        return unquote(parsed.path)
    return os.path.join(table_path, unquote(action_path))
