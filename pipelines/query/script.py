"""Running statements: a script (`lakehouse sql "QUERY"` or `-f FILE`) or the interactive prompt.

A session is anything with `names`, `notes`, `query(tokens) -> (columns, rows)` and
`query_errors`: `pipelines.query.spark_session.SqlSession`, `pipelines.query.duckdb_session.DuckDbSession`
or `pipelines.query.auto_session.AutoSession` (DuckDB where it answers alike, else Spark).
Every statement is checked before the first one runs; an error ends the script with one
line on stderr, and a session's notes (a table missing at a version, which engine answered)
follow each statement there.
"""

from __future__ import annotations

import sys
from typing import IO, Any

from pipelines.query.output import write_rows
from pipelines.query.statements import ReadOnlyViolation, Token, check_read_only, split_statements, tokenize

PROMPT, CONTINUATION = "lakehouse> ", "       ...> "


def run_script(
    session: Any, text: str, fmt: str, out: IO[str], err: IO[str] | None = None, prog: str = "lakehouse sql"
) -> int:
    """Run every statement of `text`: 0 on success, 2 when refused (nothing runs), 1 on an error.
    Messages on `err` begin with `prog`, the command that runs the statements."""
    err = err or sys.stderr
    statements = split_statements(text)
    if not statements:
        print(f"{prog}: no statement given", file=err)
        return 2
    try:
        for number, tokens in enumerate(statements, start=1):
            check_read_only(tokens, number)
    except ReadOnlyViolation as exc:
        print(f"{prog}: refused: {exc}", file=err)
        return 2
    for tokens in statements:
        if not _run_one(session, tokens, fmt, out, err, prog):
            return 1
    return 0


def _run_one(session: Any, tokens: list[Token], fmt: str, out: IO[str], err: IO[str], prog: str) -> bool:
    try:
        write_rows(*session.query(tokens), fmt, out)
    except session.query_errors as exc:
        print(f"{prog}: {_first_line(exc)}", file=err)
        return False
    finally:
        for note in session.notes:
            print(f"{prog}: note: {note}", file=err)
        session.notes.clear()
    return True


def _first_line(exc: Exception) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


def interactive(session: Any, fmt: str, stdin: IO[str], out: IO[str], err: IO[str]) -> int:
    """A prompt: statements end with `;`, `quit` or `exit` (or end of input) leaves."""
    tty = stdin.isatty()
    if tty:
        print("Tables: " + ", ".join(sorted(session.names)) + "\nEnd statements with ';'.", file=out)
    buffer: list[str] = []
    while True:
        prompt = CONTINUATION if buffer else PROMPT
        line = _read_line(stdin, prompt if tty else None)
        if line is None:
            return 0
        if not buffer and line.strip().rstrip(";").strip().lower() in ("quit", "exit"):
            return 0
        buffer.append(line)
        text = "\n".join(buffer)
        tokens = tokenize(text)
        last = next((t for t in reversed(tokens) if t.significant), None)
        if last is None:
            buffer.clear()
        elif last.kind == "semicolon":
            buffer.clear()
            run_script(session, text, fmt, out, err)


def _read_line(stdin: IO[str], prompt: str | None) -> str | None:
    if prompt is not None and stdin is sys.stdin:
        try:
            return input(prompt)
        except EOFError:
            return None
    line = stdin.readline()
    return line.rstrip("\n") if line else None
