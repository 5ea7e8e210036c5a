"""What produced the pack's rows: the rules in force and the code version.

Why: evidence is only as good as the knowledge of how it was derived. The configuration files
the package carries (the settings, the task list, the event catalogs, the governance rules) and
the expectation suites are named with the SHA-256 of their content; the `governance` section
in force is written out whole, since it decides columns such as `actor_kind`; the code is
named by the package's version and one digest over its own source files, so a pack built by
changed code says so. Nothing here depends on where the warehouse or the package lives.
"""

from __future__ import annotations

import hashlib
import importlib
from importlib import metadata
from pathlib import Path
from typing import Any

import yaml

from pipelines.core import defaults

DISTRIBUTION = "catalog-lakehouse"
CODE_PACKAGES = ("pipelines", "bronze", "silver", "gold")
GOVERNANCE_RULES_FILE = "governance_rules.yaml"


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _files_of(root, suffixes: tuple[str, ...], prefix: str = "") -> dict[str, bytes]:
    """relative name -> content of every file under `root` (a Traversable) ending in `suffixes`."""
    found: dict[str, bytes] = {}
    for entry in root.iterdir():
        name = f"{prefix}{entry.name}"
        if entry.is_dir():
            if entry.name != "__pycache__":
                found.update(_files_of(entry, suffixes, f"{name}/"))
        elif entry.name.endswith(suffixes):
            found[name] = entry.read_bytes()
    return found


def _digest_listing(files: dict[str, bytes]) -> str:
    """One digest over named files: the SHA-256 of `<sha256>  <name>` lines in name order."""
    lines = "".join(f"{sha256_bytes(files[name])}  {name}\n" for name in sorted(files))
    return sha256_bytes(lines.encode("utf-8"))


def rules_in_force(config: Any, overlay: str | Path | None = None) -> dict[str, Any]:
    """The bundled configuration files and suites by digest, the `--conf` overlay's digest, the
    `governance` section in force, and the governance rules file's content where it exists."""
    conf = _files_of(defaults.folder("conf"), (".yaml", ".yml"))
    suites = _files_of(defaults.suites(), (".json",))
    document: dict[str, Any] = {
        "conf_files": {name: sha256_bytes(conf[name]) for name in sorted(conf)},
        "conf_overlay_sha256": sha256_bytes(Path(overlay).read_bytes()) if overlay else None,
        "expectation_suites_sha256": _digest_listing(suites),
        "governance": config.section("governance") if "governance" in config.raw else None,
        "governance_rules": None,
    }
    if GOVERNANCE_RULES_FILE in conf:
        document["governance_rules"] = yaml.safe_load(conf[GOVERNANCE_RULES_FILE].decode("utf-8"))
    return document


def code_version() -> dict[str, Any]:
    """The package's version and a digest of its own Python source files (not the configuration
    and suites a wheel carries inside `pipelines/`: `rules_in_force` names those)."""
    try:
        version = metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        version = None
    files: dict[str, bytes] = {}
    for package in CODE_PACKAGES:
        root = Path(importlib.import_module(package).__file__).parent
        for name, data in _files_of(root, (".py",)).items():
            if package != "pipelines" or name.split("/")[0] not in defaults.PACKAGES:
                files[f"{package}/{name}"] = data
    return {
        "package": DISTRIBUTION,
        "version": version,
        "source_files": len(files),
        "source_sha256": _digest_listing(files),
    }
