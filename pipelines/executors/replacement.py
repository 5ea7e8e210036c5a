"""Whether a table was replaced whole since a reader last read it, and the key its commits record
their spec's revision under.

A silver table whose spec names a new `revision` is typed again from its whole source and
replaced once (`SilverTableSpec.revision`); a gold table is built again in full and overwritten
when its spec's revision changes, or when a source was replaced. Such a commit records
`replaced`. Its readers cannot take its rows as new rows of an append-only table: their own rows
of keys it no longer holds would stay. So a silver table typed from it is typed again as well,
and a gold table reading it is built again in full. The check reads the log only after a commit
that removed rows, which ordinary appends never make.
"""

from __future__ import annotations

REVISION = "revision"  # the spec's `revision` a silver or gold commit was made under
REPLACED = "replaced"  # a commit that replaced the table whole (typed again, built again in full)


def replaced_since(store, name: str, version: int) -> bool:
    """Whether a commit of `name` after `version` replaced the table whole."""
    now = store.version(name)
    if now is None or now <= version or store.only_appended_since(name, version):
        return False
    return any(commit["metadata"].get(REPLACED) for commit in store.history(name, limit=now - version))
