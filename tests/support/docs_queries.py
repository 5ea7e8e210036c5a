"""The analyst queries of docs/data-model.md, as the tests that run them on real warehouses read them."""

from __future__ import annotations

import re

from pipelines.core.config import PROJECT_ROOT


def portable_queries() -> list[tuple[str, str]]:
    """(heading, SQL) of each analyst query docs/data-model.md marks *Portable*."""
    text = (PROJECT_ROOT / "docs" / "data-model.md").read_text(encoding="utf-8")
    section = text.split("## Analyst queries", 1)[1].split("\n## ", 1)[0]
    found = []
    for part in section.split("\n### ")[1:]:
        heading, _, body = part.partition("\n")
        if body.lstrip().startswith("*Portable.*"):
            found.append((heading, re.search(r"```sql\n(.*?)```", body, re.DOTALL).group(1)))
    return found
