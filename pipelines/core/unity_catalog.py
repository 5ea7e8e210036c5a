"""The Unity Catalog grant the job's identity needs and its bundle cannot give: `USE CATALOG`.

Unity Catalog lets no one reach a schema or table without `USE CATALOG` on its catalog. The
bundle grants the production service principal what it needs on the schemas and volumes it
creates, but the catalog is an existing one the bundle does not own: a bundle grants privileges
only on a catalog it declares as a resource, which it would then create (or, bound to the
existing one, manage: its grants would replace every other principal's on that catalog, and a
destroy would drop it). So a catalog admin gives this grant once, and the words are declared
here: `lakehouse bundle --check` prints them, and a task stops with them before any work when
the catalog cannot be used.
"""

from __future__ import annotations

PRIVILEGE = "USE CATALOG"


def use_catalog_grant(catalog: str, principal: str) -> str:
    """The statement a catalog admin runs: `GRANT USE CATALOG ON CATALOG `c` TO `p``."""
    return f"GRANT {PRIVILEGE} ON CATALOG `{catalog}` TO `{principal}`"


def catalog_unusable(catalog: str, principal: str) -> str:
    """What a task says when `principal` cannot use `catalog` (missing, or no `USE CATALOG`)."""
    return (
        f"catalog {catalog!r} does not exist, or {principal} may not use it: a catalog admin must grant "
        f"{PRIVILEGE} on it: {use_catalog_grant(catalog, principal)} (or name an existing catalog: "
        "storage.catalog; the bundle's catalog variable: --var catalog=NAME)"
    )
