"""Where the bundled defaults are: the configuration, the event catalogs, the expectation suites.

The repository keeps them in its top-level `conf/` and `expectations/`; pyproject.toml maps
those folders to the packages `pipelines.conf` and `pipelines.expectations`, so the wheel
carries them as package data. They are read through importlib.resources, which finds them
the same way in a clone (an editable install), in a wheel installed on a cluster, and with
no working directory in particular. A source tree on sys.path that was never installed
reads its own folders.

    >>> conf_file("lakehouse.yaml").read_text(encoding="utf-8")
    >>> catalog_file("datahub_ece.yaml")
    >>> suites() / "silver.datahub_entity_changes.json"
"""

from __future__ import annotations

import os
from functools import cache
from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

SOURCE_TREE = Path(__file__).resolve().parents[2]
# bundled folder (as named in the repository and in relative config paths) -> its package
PACKAGES = {"conf": "pipelines.conf", "expectations": "pipelines.expectations"}


@cache
def folder(name: str) -> Traversable:
    """The bundled folder `name` (`conf` or `expectations`)."""
    try:
        return files(PACKAGES[name])
    except ModuleNotFoundError:  # a source tree on sys.path, not installed: its own folder
        return SOURCE_TREE / name


def conf_file(name: str) -> Traversable:
    """A default configuration file, e.g. `lakehouse.yaml` or `jobs.yaml`."""
    return folder("conf") / name


def catalog_file(name: str) -> Traversable:
    """An event catalog, e.g. `datahub_ece.yaml`."""
    return folder("conf") / "catalogs" / name


def suites() -> Traversable:
    """The folder of the expectation suites, one `<table>.json` each."""
    return folder("expectations")


def resolve(setting: str | os.PathLike) -> Traversable:
    """A folder or file named in the configuration.

    Absolute: as given. Relative: against the working directory when it is there, else inside
    the bundled folders when its first part names one (`expectations` is the suites the
    package carries, wherever it is installed); otherwise against the working directory."""
    path = Path(setting).expanduser()
    if path.is_absolute():
        return path
    if path.exists() or not path.parts or path.parts[0] not in PACKAGES:
        return path.resolve()
    found = folder(path.parts[0])
    for part in path.parts[1:]:
        found = found / part
    return found


def readable(path: str | os.PathLike | Traversable) -> Traversable:
    """`path` as something with `read_text`: a str or os.PathLike becomes a Path."""
    return Path(path) if isinstance(path, (str, os.PathLike)) else path
