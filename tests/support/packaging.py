"""The wheel as the bundle's artifact builds it: `pip wheel --no-deps` of the repository's build inputs."""

from __future__ import annotations

import importlib.metadata
import shutil
import subprocess
import sys
from pathlib import Path

from pipelines.core.config import PROJECT_ROOT

BUILD_INPUTS = (
    "pyproject.toml",
    "README.md",
    "pipelines",
    "bronze",
    "silver",
    "gold",
    "conf",
    "expectations",
)


def build_wheel(source: Path, out: Path) -> Path:
    """The wheel built from a copy of the build inputs in `source` (so no build/ folder of an
    earlier build in the repository gets into it), written to `out`."""
    for name in BUILD_INPUTS:
        item = PROJECT_ROOT / name
        if item.is_dir():
            shutil.copytree(item, source / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(item, source / name)
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), "."],
        cwd=source,
        capture_output=True,
        text=True,
    )
    assert built.returncode == 0, built.stderr[-3000:]
    (path,) = out.glob("catalog_lakehouse-*.whl")
    return path


def wheel_dependencies() -> list[str]:
    """What installing the wheel brings besides it: its requirements outside any extra."""
    requirements = importlib.metadata.requires("catalog-lakehouse") or []
    return sorted(r for r in requirements if "extra ==" not in r)
