"""Statements as tokens: the input of `lakehouse sql` split into statements, and the check that
each one only reads, before anything runs.

The tokenizer knows just enough Spark SQL (strings, comments, back-quoted names) to find
statements, keywords and table names; the query engines parse the statements themselves.

Read-only by check: every statement of the input must start with SELECT, WITH, SHOW,
DESCRIBE, EXPLAIN, VALUES or TABLE and must not contain a writing keyword (INSERT, DROP, ...)
or a Java-calling function (reflect, java_method) outside strings and back-quoted
identifiers. One refused statement refuses the whole input. This guards against mistakes; it
is not a sandbox for hostile SQL (each engine's session is read-only by construction too).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

ALLOWED_FIRST = {"select", "with", "show", "describe", "desc", "explain", "values", "table"}
# Outside strings and back-quoted names these words only occur in statements that write
# (a CTE may precede INSERT / DELETE / UPDATE / MERGE, so the first word alone is not enough).
WRITING = {
    *("insert", "delete", "update", "merge", "overwrite", "drop", "create", "alter", "truncate"),
    *("cache", "uncache", "refresh", "msck", "load", "set", "reset", "grant", "revoke"),
}
CALLS_JAVA = {"reflect", "java_method", "try_reflect"}


class ReadOnlyViolation(ValueError):
    """A statement that could change something (or call arbitrary Java) was refused."""


@dataclass(frozen=True)
class Token:
    kind: str  # ws | comment | string | quoted | word | number | semicolon | other
    text: str

    @property
    def significant(self) -> bool:
        return self.kind not in ("ws", "comment")

    @property
    def name(self) -> str | None:
        """The identifier this token spells (lower case), None when it is not an identifier."""
        if self.kind == "word":
            return self.text.lower()
        if self.kind == "quoted":
            return self.text[1:-1].replace("``", "`").lower()
        return None


_SIMPLE = re.compile(
    r"""(?P<ws>\s+)
    |(?P<comment>--[^\n]*)
    |(?P<string>[rR]'[^']*'?|[rR]"[^"]*"?|'(?:\\.|[^'\\])*'?|"(?:\\.|[^"\\])*"?)
    |(?P<quoted>`(?:``|[^`])*`?)
    |(?P<word>[A-Za-z_][A-Za-z0-9_]*)
    |(?P<number>[0-9][A-Za-z0-9_.]*)
    |(?P<semicolon>;)
    |(?P<other>.)""",
    re.VERBOSE | re.DOTALL,
)


def tokenize(text: str) -> list[Token]:
    """Spark SQL tokens, enough to find statements, keywords and table names.

    Block comments nest as in Spark; an unterminated string or comment runs to the
    end of the input (Spark then reports the syntax error).
    """
    tokens: list[Token] = []
    pos = 0
    while pos < len(text):
        if text.startswith("/*", pos):
            end, depth = pos + 2, 1
            while end < len(text) and depth:
                if text.startswith("/*", end):
                    depth, end = depth + 1, end + 2
                elif text.startswith("*/", end):
                    depth, end = depth - 1, end + 2
                else:
                    end += 1
            tokens.append(Token("comment", text[pos:end]))
            pos = end
            continue
        match = _SIMPLE.match(text, pos)
        assert match is not None and match.lastgroup is not None  # `.` matches any character
        tokens.append(Token(match.lastgroup, match.group()))
        pos = match.end()
    return tokens


def split_statements(text: str) -> list[list[Token]]:
    """Statements separated by `;`, each as its tokens; empty ones (only comments) dropped."""
    statements: list[list[Token]] = [[]]
    for token in tokenize(text):
        if token.kind == "semicolon":
            statements.append([])
        else:
            statements[-1].append(token)
    return [s for s in statements if any(t.significant for t in s)]


def check_read_only(tokens: list[Token], number: int = 1) -> None:
    """Raise ReadOnlyViolation unless the statement only reads."""
    words = [t for t in tokens if t.kind == "word"]
    first = next((t for t in tokens if t.significant and t.text != "("), None)
    if first is None or first.kind != "word" or first.text.lower() not in ALLOWED_FIRST:
        shown = first.text if first is not None else "nothing"
        raise ReadOnlyViolation(
            f"statement {number} starts with {shown!r}: only SELECT, WITH, SHOW, DESCRIBE, EXPLAIN, "
            "VALUES and TABLE statements are allowed (the warehouse is read-only here)"
        )
    for word in words:
        lower = word.text.lower()
        if lower in WRITING:
            raise ReadOnlyViolation(
                f"statement {number} contains {word.text.upper()}: writing statements are refused "
                "(the warehouse is read-only here; back-quote a column that has this name)"
            )
        if lower in CALLS_JAVA:
            raise ReadOnlyViolation(f"statement {number} calls {word.text}: Java calls are refused")


def text_of(tokens: list[Token]) -> str:
    """The statement's text, as written."""
    return "".join(t.text for t in tokens)
