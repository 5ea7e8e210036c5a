"""Synthetic landing data for the four sources, deterministic for a seed (`lakehouse generate`).

The generator is imported on first use of a name below, not with the package: the CLI
builds its options from `pipelines.synthetic.arguments` on every start.
"""

from __future__ import annotations

import importlib

__all__ = ["add_arguments", "generate", "main"]
_HOMES = {
    "add_arguments": "pipelines.synthetic.arguments",
    "generate": "pipelines.synthetic.generator",
    "main": "pipelines.synthetic.generator",
}


def __getattr__(name: str):
    if name in _HOMES:
        return getattr(importlib.import_module(_HOMES[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
