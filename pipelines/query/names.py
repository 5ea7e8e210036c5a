"""The names a statement can use: every table as `<layer>.<table>` and the gold current-state
views, found in a statement's tokens so that a session registers only what it mentions."""

from __future__ import annotations

import importlib

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
