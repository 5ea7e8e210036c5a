"""The one-line reason a failed task or compaction leaves in `ops.runs` and on the console.

Why: an error Spark does not translate into one of its `pyspark.errors` exceptions (a stage
that fails on an executor, a JVM out of memory) reaches a local session's Python as a Py4J
error whose first line only names the call ("An error occurred while calling
o123.collectToPython."). The reason a reader can act on is the Java exception's own message
and, under it, its root cause. Both are read from the error's text, which carries the Java
stack trace: no Py4J type is needed, so the same code serves a Spark Connect session, whose
errors are `pyspark.errors` exceptions with the server's message first.
"""

from __future__ import annotations

PY4J_CALL = "An error occurred while calling"
JAVA_LINE = ": "  # the Java exception's line under the Py4J call's
CAUSE = "Caused by: "


def one_line_reason(exc: BaseException) -> str:
    """`Type: first line of the message`; for a JVM error, the Java exception and its root cause."""
    text = str(exc)
    if text.startswith(PY4J_CALL):
        return _java_reason(text) or _first_line(f"{type(exc).__name__}: {text}")
    return _first_line(f"{type(exc).__name__}: {text}")


def _java_reason(text: str) -> str | None:
    """`exception: message (caused by root: message)` from a JVM error's text, None without one."""
    lines = text.splitlines()
    top = next((line[len(JAVA_LINE) :].strip() for line in lines if line.startswith(JAVA_LINE)), None)
    if top is None:
        return None
    causes = [line[len(CAUSE) :].strip() for line in lines if line.startswith(CAUSE)]
    bottom = causes[-1] if causes else top
    return top if bottom == top else f"{top} (caused by {bottom})"


def _first_line(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    return lines[0] if lines else text
