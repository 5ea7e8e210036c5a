"""Sending a message again, with exponential backoff, while the failure is passing.

Why within the run: a webhook answering 503 for a few seconds (a deploy, a rate limit) should
not delay its notices by a whole schedule period; a failure that outlasts the attempts is left
`failed` in the delivery log, and the next run tries again.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass


class TransientError(Exception):
    """A failure worth trying again soon: 429, 5xx, a refused or dropped connection, SMTP 4xx."""


class PermanentError(Exception):
    """A failure the same request would meet again now (4xx, SMTP 5xx): left to the next run."""


@dataclass(frozen=True)
class Outcome:
    delivered: bool
    attempts: int
    error: str | None = None


def backoff(attempt: int, first: float, longest: float) -> float:
    """The wait after failed attempt `attempt` (1-based): `first`, doubled each time, at most `longest`."""
    return min(longest, first * 2 ** (attempt - 1))


def attempt(
    send: Callable[[], None],
    max_attempts: int,
    first_backoff: float,
    max_backoff: float,
    sleep: Callable[[float], None] = time.sleep,
) -> Outcome:
    """Call `send` until it returns, a permanent error, or `max_attempts` transient ones."""
    for number in range(1, max_attempts + 1):
        try:
            send()
            return Outcome(True, number)
        except PermanentError as exc:
            return Outcome(False, number, str(exc)[:1000])
        except TransientError as exc:
            if number == max_attempts:
                return Outcome(False, number, str(exc)[:1000])
            sleep(backoff(number, first_backoff, max_backoff))
    raise AssertionError("unreachable")
