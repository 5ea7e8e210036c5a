"""Whether a silver table was typed again from its whole source since a reader last read it.

A silver table whose spec names a new `revision` is typed again and replaced once
(`SilverTableSpec.revision`); its commit records `retyped`. The tasks reading it cannot take
that commit's rows as new rows of an append-only table (their own rows of keys it no longer
holds would stay), so a silver table typed from it is typed again as well and a gold table
reading it is built again in full. The check reads the log only after a commit that removed
rows, which ordinary appends never make.
"""

from __future__ import annotations

REVISION = "revision"  # the spec's `revision` a silver or gold commit was made under
RETYPED = "retyped"  # a silver commit that replaced the table by its whole source typed again


def retyped_since(store, name: str, version: int) -> bool:
    """Whether a commit of `name` after `version` replaced it by its source typed again."""
    now = store.version(name)
    if now is None or now <= version or store.only_appended_since(name, version):
        return False
    return any(commit["metadata"].get(RETYPED) for commit in store.history(name, limit=now - version))
