"""The one-line reason a failed task or compaction leaves in `ops.runs` and on the console.

Why: an error Spark does not translate into a Python exception (a stage that fails on an
executor, a JVM out of memory) reaches Python as a `Py4JJavaError` whose first line only
names the Py4J call ("An error occurred while calling o123.collectToPython."). The reason
a reader can act on is the Java exception's own message and, under it, its root cause.
"""

from __future__ import annotations

from py4j.protocol import Py4JJavaError

MAX_CAUSES = 20  # a cause chain is short; the bound only guards against a cycle


def one_line_reason(exc: BaseException) -> str:
    """`Type: first line of the message`; for a JVM error, the Java exception and its root cause."""
    if isinstance(exc, Py4JJavaError):
        return _java_reason(exc)
    return _first_line(f"{type(exc).__name__}: {exc}")


def _java_reason(exc: Py4JJavaError) -> str:
    try:
        error = exc.java_exception
        top = _first_line(str(error.toString()))
        root = error
        for _ in range(MAX_CAUSES):
            cause = root.getCause()
            if cause is None or cause.equals(root):
                break
            root = cause
        bottom = _first_line(str(root.toString()))
    except Exception:  # the JVM is gone: its own message is all there is
        return _first_line(f"{type(exc).__name__}: {exc}")
    return top if bottom == top else f"{top} (caused by {bottom})"


def _first_line(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    return lines[0] if lines else text
