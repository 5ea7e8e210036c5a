"""Notices grouped into messages: one per target, per owner (`responsible`) or per channel, per run.

Why a digest: a message is named by the SHA-256 of its target, group and notice keys, so the
same notices rebuild the same message, and a message sent again (after a failure, or a run
killed before it recorded the outcome) carries the same idempotency key.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from dataclasses import dataclass

from pipelines.notifications.notices import Notice
from pipelines.notifications.settings import Target

CHANNEL = "all"  # the one group of a target that groups by channel


@dataclass(frozen=True)
class Message:
    target: str
    group_key: str
    notices: tuple[Notice, ...]

    @property
    def digest(self) -> str:
        text = "\n".join([self.target, self.group_key, *sorted(n.key for n in self.notices)])
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    @property
    def idempotency_key(self) -> str:
        return self.digest[:40]


def group_key(target: Target, notice: Notice) -> str:
    return notice.owner if target.group_by == "responsible" else CHANNEL


def messages(target: Target, notices: list[Notice]) -> list[Message]:
    """One message per group of `notices` for `target`, in key order."""
    groups: dict[str, list[Notice]] = defaultdict(list)
    for notice in notices:
        groups[group_key(target, notice)].append(notice)
    return [
        Message(target.name, key, tuple(sorted(found, key=lambda n: n.key)))
        for key, found in sorted(groups.items())
    ]
