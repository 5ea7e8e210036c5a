"""Fault injection for crash tests: kill the process at a named point, nothing cleaned up.

Test-only and inert in production: `checkpoint` returns at once unless the
environment variable `LAKEHOUSE_FAULT` names the checkpoint being reached.
The crash tests (tests/reliability/test_crash_safety.py) set it on a
`lakehouse run` subprocess to prove that a run killed at the worst moments
(files written but not committed, committed but not logged, ...) leaves
nothing a re-run cannot repair.

    LAKEHOUSE_FAULT=delta_commit                         first delta_commit reached
    LAKEHOUSE_FAULT=delta_commit@silver.quarantine       ... whose target contains the text
    LAKEHOUSE_FAULT=bronze_after_commit#2                the second time it is reached
    LAKEHOUSE_FAULT=merge_commit@gold.#3                 both

A target is a table path or name; the `@` text matches it with `/` read as `.`,
so `silver.quarantine` matches `<warehouse>/silver/quarantine`. The process
dies by SIGKILL: no `finally`, no atexit, no flush, like a lost machine; so does
its Spark JVM, first (left alone, the JVM would notice its driver gone and shut
down in an orderly way, finishing what it was doing).

`delta_commit` and `merge_commit` mark the moment a write's data files are in
the table folder and its commit is not yet in the log. The delta-rs engine
reaches them in Python; with delta-spark, where Delta writes and commits inside
one JVM call, `at_delta_commit` has Delta call `checkpoint` back at that moment,
through Delta's transaction observer in the local driver JVM. Only an armed
checkpoint touches the JVM: a run without `LAKEHOUSE_FAULT` (every run but a crash
test's) never does, so the same code runs over Spark Connect.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

ENV = "LAKEHOUSE_FAULT"

_reached: dict[str, int] = {}


@dataclass(frozen=True)
class Fault:
    """A parsed `LAKEHOUSE_FAULT` value."""

    name: str
    target: str = ""
    occurrence: int = 1

    def matches(self, name: str, target: str) -> bool:
        return name == self.name and (
            not self.target or self.target in target or self.target in target.replace(os.sep, ".")
        )


def parse(text: str) -> Fault:
    """`name[@target-substring][#N]` -> Fault; raises ValueError on a malformed value."""
    spec, _, count = text.strip().partition("#")
    name, _, target = spec.partition("@")
    if not name or (count and not count.isdigit()) or count == "0":
        raise ValueError(f"{ENV}={text!r}: expected name[@table-substring][#N] with N >= 1")
    return Fault(name, target, int(count) if count else 1)


def armed(name: str, target: str = "") -> bool:
    """Whether `LAKEHOUSE_FAULT` names this checkpoint and target (reaching it may kill)."""
    text = os.environ.get(ENV)
    return bool(text) and parse(text).matches(name, target)


def checkpoint(name: str, target: str = "") -> None:
    """Die here (SIGKILL) when `LAKEHOUSE_FAULT` names this checkpoint; otherwise do nothing."""
    text = os.environ.get(ENV)
    if not text:
        return
    fault = parse(text)
    if not fault.matches(name, target):
        return
    _reached[text] = _reached.get(text, 0) + 1
    if _reached[text] == fault.occurrence:
        print(f"faults: killing pid {os.getpid()} at {name} {target}".rstrip(), file=sys.stderr, flush=True)
        jvm = _spark_jvm_pid()
        if jvm is not None:  # not waited for: a thread blocked on the JVM would wake and run on
            os.kill(jvm, signal.SIGKILL)
        os.kill(os.getpid(), signal.SIGKILL)


def _spark_jvm_pid() -> int | None:
    """The pid of the JVM this process started for Spark (None if it started none)."""
    context = sys.modules.get("pyspark.core.context")  # loaded only where Spark was used
    gateway = getattr(getattr(context, "SparkContext", None), "_gateway", None)
    process = getattr(gateway, "proc", None)  # None: the JVM was not started by this process
    return process.pid if process is not None and process.poll() is None else None


OBSERVERS = "org.apache.spark.sql.delta.TransactionExecutionObserver"


@contextmanager
def at_delta_commit(spark, name: str, target: str) -> Iterator[None]:
    """Where `LAKEHOUSE_FAULT` names checkpoint `name` at `target`, the Delta transactions run
    inside, on this thread, reach it as they begin to commit (after their data files are
    written, before the log holds the commit). Does nothing otherwise."""
    if not armed(name, target):
        yield
        return
    from pyspark.java_gateway import ensure_callback_server_started

    context = spark.sparkContext
    ensure_callback_server_started(context._gateway)
    jvm = context._jvm
    observers = getattr(jvm, OBSERVERS)
    observers.setObserver(_CommitCheckpoint(name, target, jvm))
    try:
        yield
    finally:
        observers.setObserver(_no_observer(jvm))


class _CommitCheckpoint:
    """Delta's transaction observer (its hook into a transaction's phases), implemented in Python:
    when the transaction begins its commit it reaches `checkpoint(name, target)`."""

    def __init__(self, name: str, target: str, jvm):
        self.name, self.target, self._jvm = name, target, jvm

    def beginDoCommit(self) -> None:  # the JVM interface's method names
        checkpoint(self.name, self.target)

    def startingTransaction(self, start):
        return start.apply()

    def preparingCommit(self, prepare):
        return prepare.apply()

    def beginBackfill(self) -> None:
        pass

    def beginPostCommit(self) -> None:
        pass

    def transactionCommitted(self) -> None:
        pass

    def transactionAborted(self) -> None:
        pass

    def createChild(self):
        return _no_observer(self._jvm)

    def nextObserver(self):
        return self._jvm.scala.Option.empty()

    def getNextObserver(self):
        return self._jvm.scala.Option.empty()

    def setNextObserver(self, observer) -> None:
        pass

    def advanceToNextThreadObserver(self) -> None:
        pass

    class Java:
        implements = [OBSERVERS]


setattr(_CommitCheckpoint, "nextObserver_$eq", _CommitCheckpoint.setNextObserver)  # Scala's setter name


def _no_observer(jvm):
    """Delta's default observer, which does nothing."""
    return getattr(getattr(jvm.org.apache.spark.sql.delta, "NoOpTransactionExecutionObserver$"), "MODULE$")
