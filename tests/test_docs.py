"""The documentation a newcomer follows: a short README, and every relative link in the Markdown
files leading somewhere that exists, down to the heading an `#anchor` names.

Anchors are GitHub's: a heading's text in lower case, punctuation dropped but hyphens, spaces
and underscores, each space a hyphen, and `-1`, `-2`, ... after a repeated one.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

PROJECT_ROOT = Path(__file__).resolve().parents[1]
README_MAX_LINES = 130
DOCS = sorted(
    path
    for path in (
        PROJECT_ROOT / "README.md",
        PROJECT_ROOT / "CONTRIBUTING.md",
        *(PROJECT_ROOT / "docs").glob("*.md"),
        PROJECT_ROOT / "benchmarks" / "README.md",
        PROJECT_ROOT / "samples" / "README.md",
        PROJECT_ROOT / "expectations" / "README.md",
        PROJECT_ROOT / "silver" / "COLUMNS.md",
    )
    if path.is_file()
)
FENCE = re.compile(r"^(```|~~~)")
CODE_SPAN = re.compile(r"`+[^`]*`+")
LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$")


def prose_lines(text: str) -> list[str]:
    """The lines outside fenced code blocks, inline code spans removed."""
    lines, fenced = [], False
    for line in text.splitlines():
        if FENCE.match(line.strip()):
            fenced = not fenced
            continue
        if not fenced:
            lines.append(line)
    return lines


def slug(heading: str) -> str:
    """GitHub's anchor for a heading's text."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link in a heading keeps its text
    text = re.sub(r"[^\w\- ]", "", text.lower())
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    found: set[str] = set()
    seen: dict[str, int] = {}
    for line in prose_lines(path.read_text(encoding="utf-8")):
        match = HEADING.match(line)
        if not match:
            continue
        base = slug(match.group(1))
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def relative_links(path: Path) -> list[str]:
    links = []
    for line in prose_lines(path.read_text(encoding="utf-8")):
        for target in LINK.findall(CODE_SPAN.sub("", line)):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.IGNORECASE):  # https:, mailto:, ...
                continue
            links.append(target)
    return links


def broken_links(path: Path) -> list[str]:
    """`path`'s relative links whose file does not exist, or whose anchor is no heading of it."""
    broken = []
    for target in relative_links(path):
        file_part, _, anchor = target.partition("#")
        linked = (path.parent / file_part).resolve() if file_part else path
        if not linked.exists():
            broken.append(f"{target}: no such file")
        elif anchor and linked.suffix == ".md" and anchor not in anchors(linked):
            broken.append(f"{target}: no heading #{anchor} in {linked.name}")
    return broken


def test_the_readme_is_short():
    lines = (PROJECT_ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) < README_MAX_LINES, f"README.md has {len(lines)} lines"


@pytest.mark.parametrize("path", DOCS, ids=lambda p: str(p.relative_to(PROJECT_ROOT)))
def test_every_relative_link_leads_to_a_file_and_heading_that_exist(path):
    assert broken_links(path) == []


def test_the_link_check_sees_a_missing_file_a_missing_heading_and_takes_githubs_anchors(tmp_path):
    (tmp_path / "other.md").write_text(
        "# Other\n\n## What runs where: the `lakehouse` CLI's parts\n\n## Again\n\n## Again\n"
    )
    doc = tmp_path / "doc.md"
    doc.write_text(
        "# Doc\n\n"
        "[fine](other.md#what-runs-where-the-lakehouse-clis-parts), [second](other.md#again-1), "
        "[self](#doc), [web](https://example.com/x.md)\n"
        "[gone](missing.md), [no heading](other.md#nowhere), `[in code](missing.md)`\n"
        "```\n[in a block](missing.md)\n```\n"
    )
    assert broken_links(doc) == [
        "missing.md: no such file",
        "other.md#nowhere: no heading #nowhere in other.md",
    ]
