"""The pack's manifest (`manifest.json`: the SHA-256 and size of every other file) and its check.

Why: a pack leaves the warehouse (mailed, archived, attached to an audit), and whoever holds it
must be able to tell whether it is still what was built. `verify` recomputes every digest and
names each file that is missing, changed or not listed; it needs nothing but the folder.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

MANIFEST = "manifest.json"
ALGORITHM = "sha256"
CHUNK = 1 << 20


def file_digest(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(CHUNK), b""):
            digest.update(block)
    return digest.hexdigest()


def pack_files(folder: Path) -> list[str]:
    """Every file below `folder` but the manifest, as `/`-separated relative names, sorted."""
    names = (p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())
    return sorted(name for name in names if name != MANIFEST)


def manifest_text(folder: Path) -> str:
    """The manifest of `folder`'s files as it is written: sorted names, sorted keys."""
    files = {
        name: {"sha256": file_digest(folder / name), "size": (folder / name).stat().st_size}
        for name in pack_files(folder)
    }
    document = {"algorithm": ALGORITHM, "files": files}
    return json.dumps(document, sort_keys=True, indent=2) + "\n"


def write_manifest(folder: Path) -> Path:
    path = folder / MANIFEST
    path.write_text(manifest_text(folder), encoding="utf-8")
    return path


@dataclass(frozen=True)
class Problem:
    """One file that does not match the manifest: `missing`, `changed` or `extra`."""

    kind: str
    name: str
    detail: str = ""

    def line(self) -> str:
        return f"{self.kind}: {self.name}" + (f" ({self.detail})" if self.detail else "")


def verify(folder: Path) -> list[Problem]:
    """Every difference between `folder` and its manifest; [] when the pack is intact."""
    manifest = folder / MANIFEST
    if not manifest.is_file():
        return [Problem("missing", MANIFEST, "the pack's list of files and digests")]
    try:
        listed = json.loads(manifest.read_text(encoding="utf-8"))["files"]
    except (ValueError, KeyError, TypeError):
        return [Problem("changed", MANIFEST, "not a manifest")]
    present = set(pack_files(folder))
    problems: list[Problem] = []
    for name in sorted(listed):
        if name not in present:
            problems.append(Problem("missing", name))
            continue
        entry = listed[name]
        size = (folder / name).stat().st_size
        digest = file_digest(folder / name)
        if digest != entry.get("sha256") or size != entry.get("size"):
            problems.append(Problem("changed", name, f"sha256 {digest}, size {size}; manifest: {entry}"))
    problems += [Problem("extra", name, "not in the manifest") for name in sorted(present - set(listed))]
    return problems
