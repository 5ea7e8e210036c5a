"""The `notifications` settings as typed values (validated by `pipelines.core.config`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pipelines.core.config import NOTICE_KINDS, Config


@dataclass(frozen=True)
class Target:
    """One place notices go: its name (the delivery log's `target`), type and settings."""

    name: str
    type: str
    group_by: str = "responsible"
    kinds: tuple[str, ...] = NOTICE_KINDS
    options: dict[str, Any] = field(default_factory=dict)

    def wants(self, kind: str) -> bool:
        return kind in self.kinds


@dataclass(frozen=True)
class Settings:
    enabled: bool
    after_run: bool
    max_attempts: int
    backoff_seconds: float
    max_backoff_seconds: float
    timeout_seconds: float
    targets: tuple[Target, ...]


def settings_from(config: Config) -> Settings:
    section = config.section("notifications")
    targets = tuple(
        Target(
            name=str(name),
            type=spec["type"],
            group_by=spec.get("group_by", "responsible"),
            kinds=tuple(spec.get("kinds", NOTICE_KINDS)),
            options={k: v for k, v in spec.items() if k not in ("type", "group_by", "kinds")},
        )
        for name, spec in sorted((section["targets"] or {}).items())
    )
    return Settings(
        enabled=section["enabled"],
        after_run=section["after_run"],
        max_attempts=section["max_attempts"],
        backoff_seconds=float(section["backoff_seconds"]),
        max_backoff_seconds=float(section["max_backoff_seconds"]),
        timeout_seconds=float(section["timeout_seconds"]),
        targets=targets,
    )
