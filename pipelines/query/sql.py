"""`lakehouse sql`: read-only Spark SQL over every table of a warehouse as `<layer>.<table>`.

How the names resolve. With the delta-spark engine the tables are catalog tables
(`pipelines.store`): a reference `gold.tag_timeline` resolves natively (rewritten to its
catalog name where the configuration gives a catalog or schema prefix), and
`DESCRIBE HISTORY gold.tag_timeline` works. Otherwise, and for `--as-of-version`:
Spark's in-memory session catalog cannot hold a view of a
DataFrame inside a database (temporary views take single-part names; persistent
views may not reference DataFrames or temporary views), and the delta-rs engine's
snapshots are DataFrames over an explicit file list, not something a catalog table
can point at. So each table the statement mentions is read through the table store
(`store.read(name, version)`: the engine's snapshot, time travel included) and
registered as a temporary view whose single-part name *contains* the dot,
`` `silver.datahub_entity_changes` ``. Before a statement runs, its tokens are
scanned (strings, comments and quoted identifiers skipped) and each reference
`silver.datahub_entity_changes` (any case, parts optionally back-quoted) to a
known table is rewritten to that quoted name. Unknown names are left alone, so
Spark's own "table not found" error names them. The gold current-state views of
`gold/current_views.py` are registered the same way over the rewritten SQL.
Views live in a private `spark.newSession()`, so nothing leaks into other sessions,
and are registered lazily (only what a statement mentions), so start-up stays fast.

Read-only by construction and by check: the views only read Parquet files; before
anything runs, every statement of the input must start with SELECT, WITH, SHOW,
DESCRIBE, EXPLAIN, VALUES or TABLE and must not contain a writing keyword (INSERT,
DROP, ...) or a Java-calling function (reflect, java_method) outside strings and
back-quoted identifiers. One refused statement refuses the whole input. This guards
against mistakes; it is not a sandbox for hostile SQL.

`run_script`, `interactive` and the output writers serve both query engines: a session is
anything with `names`, `notes`, `query(tokens) -> (columns, rows)` and `query_errors`, this
module's `SqlSession` or `pipelines.query.duckdb_session.DuckDbSession` (`--engine duckdb`).
"""

from __future__ import annotations

import csv
import datetime as dt
import decimal
import importlib
import json
import logging
import re
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import IO, Any

from pyspark.sql import DataFrame, SparkSession

from pipelines.runtime.spark import REQUIRED_CONF
from pipelines.store import LAYERS, TableStore, open_store

FORMATS = ("table", "csv", "json")
ALLOWED_FIRST = {"select", "with", "show", "describe", "desc", "explain", "values", "table"}
# Outside strings and back-quoted names these words only occur in statements that write
# (a CTE may precede INSERT / DELETE / UPDATE / MERGE, so the first word alone is not enough).
WRITING = {
    *("insert", "delete", "update", "merge", "overwrite", "drop", "create", "alter", "truncate"),
    *("cache", "uncache", "refresh", "msck", "load", "set", "reset", "grant", "revoke"),
}
CALLS_JAVA = {"reflect", "java_method", "try_reflect"}
VIEWS_MODULE = "gold.current_views"
PROMPT, CONTINUATION = "lakehouse> ", "       ...> "


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


def referenced_names(tokens: list[Token]) -> list[tuple[int, int, str]]:
    """(first index, last index, `layer.table`) of each two-part name with a known layer."""
    significant = [i for i, t in enumerate(tokens) if t.significant]
    found = []
    for pos, i in enumerate(significant[:-2]):
        layer, dot, table = (tokens[j] for j in significant[pos : pos + 3])
        after_dot = pos > 0 and tokens[significant[pos - 1]].text == "."
        if layer.name in LAYERS and dot.text == "." and table.name and not after_dot:
            found.append((i, significant[pos + 2], f"{layer.name}.{table.name}"))
    for i, token in enumerate(tokens):
        name = token.name if token.kind == "quoted" else None
        if name and "." in name and name.partition(".")[0] in LAYERS:
            found.append((i, i, name))
    return found


def quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


class SqlSession:
    """A private Spark session where the warehouse's tables resolve as `<layer>.<table>`.

    with SqlSession(spark, "warehouse") as sql:
        sql.execute("SELECT count(*) FROM silver.datahub_entity_changes").show()
    """

    def __init__(
        self,
        spark: SparkSession,
        warehouse: Any,
        engine: str = "auto",
        version: int | None = None,
        catalog: str = "",
        schema_prefix: str = "",
    ):
        self.spark = spark.newSession()
        for key, value in {**REQUIRED_CONF, **_shuffle_conf(spark)}.items():
            self.spark.conf.set(key, value)
        self.store: TableStore = open_store(self.spark, warehouse, engine, catalog, schema_prefix)
        self.version = version
        # delta-spark: the tables are catalog tables, resolved by Spark itself (time travel
        # still goes through the store's snapshots)
        self.native = self.store.names_tables and version is None
        if self.native:
            self.store.register_all()
        self.all_tables = set(self.store.tables())
        self.tables = {name for name in self.all_tables if self._exists_at_version(name)}
        self.views = {name: sql for name, sql in _view_definitions().items() if name not in self.tables}
        self._registered: set[str] = set()
        self.notes: list[str] = []

    def __enter__(self) -> SqlSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        for name in self._registered:
            self.spark.catalog.dropTempView(name)  # takes the name as is, unlike createOrReplaceTempView
        self._registered.clear()

    def _exists_at_version(self, name: str) -> bool:
        if self.version is None:
            return True
        latest = self.store.version(name)
        return latest is not None and latest >= self.version

    @property
    def names(self) -> set[str]:
        return set(self.tables) | set(self.views)

    def ensure(self, name: str) -> bool:
        """Register `name` (table or view) if it can be; False when a view's base tables are missing."""
        if name in self._registered:
            return True
        if name in self.tables and self.native:
            return True
        if name in self.tables:
            self.store.read(name, self.version).createOrReplaceTempView(quote(name))
        elif name in self.views:
            tokens = tokenize(self.views[name])
            bases = {ref for _, _, ref in referenced_names(tokens)}
            if not all(base in self.names and self.ensure(base) for base in bases):
                return False
            self.spark.sql(self._rewrite(tokens)).createOrReplaceTempView(quote(name))
        else:
            return False
        self._registered.add(name)
        return True

    def ensure_all(self) -> None:
        for name in sorted(self.names):
            self.ensure(name)

    def _rewrite(self, tokens: list[Token]) -> str:
        replaced = {
            first: (last, name) for first, last, name in referenced_names(tokens) if name in self.names
        }
        out, i = [], 0
        while i < len(tokens):
            if i in replaced:
                last, name = replaced[i]
                out.append(self._resolved(name))
                i = last + 1
            else:
                out.append(tokens[i].text)
                i += 1
        return "".join(out)

    def _resolved(self, name: str) -> str:
        """What a reference to `name` becomes: the catalog table, or the registered view."""
        if self.native and name in self.tables:
            return self.store.catalog_name(name) or quote(name)
        return quote(name)

    def prepare(self, tokens: list[Token]) -> str:
        """Register what the statement mentions and return its text with names rewritten."""
        words = [t.text.lower() for t in tokens if t.kind == "word"]
        if words[:1] == ["show"] and len(words) > 1 and words[1] in ("tables", "views"):
            self.ensure_all()
            return _show_in_layer(tokens)
        for _, _, name in referenced_names(tokens):
            if name in self.names and not self.ensure(name):
                self.notes.append(f"{name}: its base tables do not exist (at this version)")
            elif name in self.all_tables - self.tables:
                self.notes.append(f"{name} has no version {self.version}")
        return self._rewrite(tokens)

    def execute(self, statement: str | list[Token]) -> DataFrame:
        """Run one statement (after the read-only check) and return its result."""
        tokens = tokenize(statement) if isinstance(statement, str) else statement
        check_read_only(tokens)
        return self.spark.sql(self.prepare(tokens))

    def query(self, statement: str | list[Token]) -> tuple[list[str], Iterator]:
        """Run one statement: its column names and rows (the interface `run_script` reads)."""
        result = self.execute(statement)
        return result.columns, result.toLocalIterator()

    @property
    def query_errors(self) -> tuple[type[Exception], ...]:
        from pyspark.errors import PySparkException

        return (PySparkException,)


def _shuffle_conf(spark: SparkSession) -> dict[str, str]:
    key = "spark.sql.shuffle.partitions"
    return {key: spark.conf.get(key)} if spark.conf.get(key, None) else {}


def _view_definitions() -> dict[str, str]:
    """`gold/current_views.py`'s VIEWS, or nothing when that module is absent."""
    try:
        module = importlib.import_module(VIEWS_MODULE)
    except ModuleNotFoundError:
        return {}
    views = getattr(module, "VIEWS", {})
    return {name.lower(): sql for name, sql in views.items() if name.partition(".")[0] in LAYERS}


def _show_in_layer(tokens: list[Token]) -> str:
    """`SHOW TABLES IN silver [LIKE 'p']` -> `SHOW TABLES LIKE 'silver.p'` (the views have dotted names)."""
    significant = [t for t in tokens if t.significant]
    words = [t.text.lower() for t in significant]
    if len(words) >= 4 and words[2] in ("in", "from") and significant[3].name in LAYERS:
        pattern = "*"
        if len(significant) >= 6 and words[4] == "like" and significant[5].kind == "string":
            pattern = significant[5].text[1:-1]
        return f"SHOW {significant[1].text} LIKE '{significant[3].name}.{pattern}'"
    return "".join(t.text for t in tokens)


# -- output -------------------------------------------------------------------


def _plain(value: Any) -> Any:
    """A JSON-friendly value: timestamps as ISO text, decimals as numbers, maps as objects
    (keys sorted), structs as objects (fields in order)."""
    if isinstance(value, dt.datetime):
        return value.isoformat(sep=" ")
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return float(value)
    if isinstance(value, (bytes, bytearray)):
        return value.hex()
    if hasattr(value, "asDict"):  # a struct (Row): before tuples, which it also is; fields in order
        return {str(k): _plain(v) for k, v in value.asDict().items()}
    if isinstance(value, dict):  # a map: keys sorted, as engines hand entries back in any order
        return {str(k): _plain(v) for k, v in sorted(value.items(), key=lambda item: str(item[0]))}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _text(value: Any) -> str:
    value = _plain(value)
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


def write_table(columns: list[str], rows: Iterable[tuple], out: IO[str], max_rows: int) -> int:
    """Aligned text; a lone multi-line value (EXPLAIN's plan) is printed as is."""
    shown, more = [], False
    for row in rows:
        if len(shown) == max_rows:
            more = True
            break
        shown.append([_text(v) for v in row])
    if len(columns) == 1 and len(shown) == 1 and "\n" in shown[0][0]:
        print(shown[0][0], file=out)
        return 1
    cells = [[c.replace("\n", " ") for c in row] for row in shown]
    widths = [max([len(c)] + [len(r[i]) for r in cells]) for i, c in enumerate(columns)]
    print(" | ".join(c.ljust(w) for c, w in zip(columns, widths, strict=True)).rstrip(), file=out)
    print("-+-".join("-" * w for w in widths), file=out)
    for row in cells:
        print(" | ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip(), file=out)
    suffix = f", showing the first {max_rows}: add LIMIT or use --format csv/json" if more else ""
    print(f"({len(shown)} row{'s' if len(shown) != 1 else ''}{suffix})", file=out)
    return len(shown)


def write_result(df: DataFrame, fmt: str, out: IO[str], max_rows: int = 1000) -> int:
    """Print a result in `fmt`; csv and json stream every row, table shows up to `max_rows`."""
    return write_rows(df.columns, df.toLocalIterator(), fmt, out, max_rows)


def write_rows(
    columns: list[str], rows: Iterable[tuple], fmt: str, out: IO[str], max_rows: int = 1000
) -> int:
    """Print column names and rows in `fmt`, the same for every query engine."""
    if fmt == "table":
        return write_table(columns, rows, out, max_rows)
    count = 0
    if fmt == "csv":
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(columns)
        for row in rows:
            writer.writerow(["" if v is None else _text(v) for v in row])
            count += 1
    else:
        for row in rows:
            record = {c: _plain(v) for c, v in zip(columns, row, strict=True)}
            print(json.dumps(record, ensure_ascii=False, default=str), file=out)
            count += 1
    return count


# -- entry points ---------------------------------------------------------------


def quiet_spark_errors() -> None:
    """PySpark logs every SQL error as a JSON record on stderr; the CLI prints one line instead."""
    from pyspark.logger import PySparkLogger

    PySparkLogger.getLogger("SQLQueryContextLogger").setLevel(logging.CRITICAL)


def run_script(session: Any, text: str, fmt: str, out: IO[str], err: IO[str] | None = None) -> int:
    """Run every statement of `text`: 0 on success, 2 when refused (nothing runs), 1 on an error."""
    err = err or sys.stderr
    statements = split_statements(text)
    if not statements:
        print("lakehouse sql: no statement given", file=err)
        return 2
    try:
        for number, tokens in enumerate(statements, start=1):
            check_read_only(tokens, number)
    except ReadOnlyViolation as exc:
        print(f"lakehouse sql: refused: {exc}", file=err)
        return 2
    for tokens in statements:
        if not _run_one(session, tokens, fmt, out, err):
            return 1
    return 0


def _run_one(session: Any, tokens: list[Token], fmt: str, out: IO[str], err: IO[str]) -> bool:
    try:
        write_rows(*session.query(tokens), fmt, out)
    except session.query_errors as exc:
        print(f"lakehouse sql: {_first_line(exc)}", file=err)
        return False
    finally:
        for note in session.notes:
            print(f"lakehouse sql: note: {note}", file=err)
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
