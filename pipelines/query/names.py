"""The names a statement can use: every table as `<layer>.<table>` and the gold current-state
views, found in a statement's tokens so that a session registers only what it mentions; and
`SHOW TABLES`, answered from those names the same way on every engine."""

from __future__ import annotations

import fnmatch
import importlib
from collections.abc import Iterable, Iterator

from pipelines.core.warehouse_layout import LAYERS
from pipelines.query.statements import Token

VIEWS_MODULE = "gold.current_views"


def referenced_names(tokens: list[Token]) -> list[tuple[int, int, str]]:
    """(first index, last index, `layer.table`) of each two-part name with a known layer."""
    significant = [i for i, t in enumerate(tokens) if t.significant]
    found = []
    for pos, i in enumerate(significant[:-2]):
        layer, dot, table = (tokens[j] for j in significant[pos : pos + 3])
        after_dot = pos > 0 and tokens[significant[pos - 1]].text == "."
        if layer.name in LAYERS and dot.text == "." and table.name and not after_dot:
            found.append((i, significant[pos + 2], f"{layer.name}.{table.name}"))
    for i, token in enumerate(tokens):
        name = token.name if token.kind == "quoted" else None
        if name and "." in name and name.partition(".")[0] in LAYERS:
            found.append((i, i, name))
    return found


def quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def view_definitions() -> dict[str, str]:
    """`gold/current_views.py`'s VIEWS, or nothing when that module is absent."""
    try:
        module = importlib.import_module(VIEWS_MODULE)
    except ModuleNotFoundError:
        return {}
    views = getattr(module, "VIEWS", {})
    return {name.lower(): sql for name, sql in views.items() if name.partition(".")[0] in LAYERS}


LISTING_COLUMNS = ["namespace", "tableName", "isTemporary"]


def table_listing(tokens: list[Token], names: Iterable[str]) -> tuple[list[str], Iterator[tuple]] | None:
    """`SHOW TABLES [IN|FROM <layer>] [LIKE 'pattern']` (or `SHOW VIEWS`, the gold current-state
    views alone) answered from `names`: one row per name analysts use, `namespace` the layer and
    `tableName` the table, as Spark lists a database's tables; None for any other statement.
    The pattern is Spark's: `*` for any text, `|` between alternatives, any case."""
    significant = [t for t in tokens if t.significant and t.kind != "semicolon"]
    words = [t.name for t in significant]
    if words[:1] != ["show"] or len(words) < 2 or words[1] not in ("tables", "views"):
        return None
    rest = significant[2:]
    layer = None
    if len(rest) >= 2 and rest[0].name in ("in", "from"):
        layer, rest = rest[1].name, rest[2:]
        if layer not in LAYERS:
            return LISTING_COLUMNS, iter(())
    pattern = "*"
    if len(rest) >= 2 and rest[0].name == "like" and rest[1].kind == "string":
        pattern, rest = rest[1].text[1:-1], rest[2:]
    if rest:
        return None  # a form this listing does not read: the engine answers it
    views = set(view_definitions())
    chosen = sorted(n for n in names if (words[1] == "tables" or n in views) and _listed(n, layer, pattern))
    return LISTING_COLUMNS, iter([(*n.split(".", 1), False) for n in chosen])


def _listed(name: str, layer: str | None, pattern: str) -> bool:
    namespace, table = name.split(".", 1)
    alternatives = [p.strip().lower() for p in pattern.split("|")]
    return (layer is None or namespace == layer) and any(
        fnmatch.fnmatchcase(table, p) or fnmatch.fnmatchcase(name, p) for p in alternatives
    )
