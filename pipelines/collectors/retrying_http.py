"""One HTTP request at a time to a catalog's API, retried the way the pulls agree on.

429 and 503 wait `Retry-After` (seconds or an HTTP date) when the server sends it; other 5xx,
time-outs and connection errors back off exponentially from `backoff_seconds` with jitter; no
wait is longer than `max_backoff_seconds`, and a request is tried `max_attempts` times. 401 and
403 stop at once (`AccessRefused`): waiting cannot fix a token. Any other 4xx is `Refused` with
its status. Messages are one line and never hold the token.
"""

from __future__ import annotations

import email.utils
import random
import time
from collections.abc import Callable

import requests


class PullError(Exception):
    """A pull stopped; the message is one line and never holds the token."""


class AccessRefused(PullError):
    """401/403: retrying cannot help."""


class Refused(PullError):
    """Another 4xx answer; `status` says which."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


def retry_after_seconds(value: str | None, now: float) -> float | None:
    """`Retry-After` as seconds: a number of seconds or an HTTP date; None when absent or unreadable."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - now)


class RetryingClient:
    """`get(url, params)` answers the 200 response, after retries (see the module docstring)."""

    def __init__(
        self,
        token: str | None,
        token_env: str,
        max_attempts: int,
        backoff_seconds: float,
        max_backoff_seconds: float,
        timeout_seconds: float,
        report: Callable[[str], object],
        sleep: Callable[[float], object] = time.sleep,
    ) -> None:
        self.session = requests.Session()
        self.session.headers["Accept"] = "application/json"
        if token:
            self.session.headers["Authorization"] = f"Bearer {token}"
        self.has_token = bool(token)
        self.token_env = token_env
        self.max_attempts = max_attempts
        self.backoff_seconds = backoff_seconds
        self.max_backoff_seconds = max_backoff_seconds
        self.timeout_seconds = timeout_seconds
        self.report = report
        self.sleep = sleep

    def close(self) -> None:
        self.session.close()

    def _backoff(self, attempt: int) -> float:
        base = self.backoff_seconds * (2 ** (attempt - 1))
        return min(self.max_backoff_seconds, base * (0.5 + random.random() / 2))

    def get(self, url: str, params: dict) -> requests.Response:
        last = ""
        for attempt in range(1, self.max_attempts + 1):
            wait = self._backoff(attempt)
            try:
                response = self.session.get(url, params=params, timeout=self.timeout_seconds)
            except requests.RequestException as exc:
                last = f"{type(exc).__name__} reaching {url}"
            else:
                status = response.status_code
                if status == 200:
                    return response
                if status in (401, 403):
                    hint = (
                        f"the token in ${self.token_env} was refused"
                        if self.has_token
                        else f"${self.token_env} is not set and the server wants a token"
                    )
                    raise AccessRefused(f"{url} answered {status} {response.reason}: {hint}")
                if status != 429 and status < 500:
                    excerpt = response.text[:200].replace("\n", " ")
                    raise Refused(f"{url} answered {status} {response.reason}: {excerpt}", status)
                last = f"{status} {response.reason}"
                if status in (429, 503):
                    asked = retry_after_seconds(response.headers.get("Retry-After"), time.time())
                    if asked is not None:
                        wait = min(asked, self.max_backoff_seconds)
            if attempt == self.max_attempts:
                break
            self.report(f"retry {attempt}/{self.max_attempts - 1} in {wait:.1f}s after {last}")
            self.sleep(wait)
        raise PullError(f"gave up after {self.max_attempts} attempts, last: {last}")
