"""Class-data sharing for the local driver JVM: Spark's classes mapped from an archive, not read from jars at every start.

Why: a scheduled `lakehouse run` starts a new JVM each time, and loading and verifying
Spark's ~12,000 classes is most of its start-up. HotSpot maps the classes an earlier run
loaded from an archive that run wrote as its JVM exited (dynamic CDS, JDK 13+), which
roughly halves a new session's start-up (measure with `python -m benchmarks.new_process`).

Safety, in order:
- The archive fits one JDK, classpath and heap layout: its file name carries a digest of
  them, so a changed JDK or Spark records a new one instead of reusing the old.
- The first run records: its JVM writes the archive under a temporary name as it exits;
  this process waits for that at its own exit and renames the file into place only when the
  JVM exited cleanly, so no run maps a half-written archive.
- HotSpot aborts at start on a damaged archive rather than running without it, so a start
  that fails with an archive deletes it and starts again without (`get_spark`).
- A JDK that cannot record (no base archive) leaves a `.failed` marker: no retry every run.
"""

from __future__ import annotations

import atexit
import hashlib
import os
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

JAVA_OPTIONS = "spark.driver.extraJavaOptions"
MAP_OPTION = "-XX:SharedArchiveFile="  # HotSpot maps the archive named after it
RECORD_OPTION = "-XX:ArchiveClassesAtExit="  # HotSpot writes the archive named after it at exit
OFF = ("off", "false", "no", "none")
# CDS logs a warning per class it cannot archive (hundreds for Spark): not the user's concern
QUIET = "-Xlog:cds=off -Xlog:cds+dynamic=off"
USER_CDS_FLAGS = ("SharedArchiveFile", "ArchiveClassesAtExit", "-Xshare")
# the settings that decide which classes load and how the heap is laid out
LAYOUT_CONF = (
    "spark.jars",
    "spark.jars.packages",
    "spark.driver.extraClassPath",
    "spark.driver.memory",
    JAVA_OPTIONS,
)
STALE_SECONDS = 600  # a recording nobody has written to for this long was left by a killed process
ENV = "LAKEHOUSE_CLASS_ARCHIVE"  # overrides the profile's `class_archive` (e.g. `off` on a host)


@dataclass(frozen=True)
class ClassArchive:
    """The archive for one JDK + classpath: map it when present, else record it."""

    path: Path

    @property
    def failed_marker(self) -> Path:
        return self.path.with_suffix(".failed")

    def options(self) -> tuple[str, Path | None]:
        """The JVM options to add, and the temporary file being recorded (None: mapping or nothing)."""
        if self.path.is_file():
            error_file = self.path.parent / "hs_err_pid%p.log"  # a damaged archive aborts the JVM
            return f"{MAP_OPTION}{self.path} -XX:ErrorFile={error_file} {QUIET}", None
        if self.failed_marker.exists():
            return "", None
        self.path.parent.mkdir(parents=True, exist_ok=True)
        _remove_stale_recordings(self.path.parent)
        recording = self.path.parent / f"{self.path.name}.{uuid.uuid4().hex[:8]}.tmp"
        return f"{RECORD_OPTION}{recording} {QUIET}", recording

    def discard(self) -> None:
        """Forget an archive the JVM could not start with."""
        self.path.unlink(missing_ok=True)


def archive_folder(setting: object) -> Path | None:
    """`class_archive` of the profile (or `$LAKEHOUSE_CLASS_ARCHIVE`): `auto` (the user's cache
    folder), off, or a folder."""
    setting = os.environ.get(ENV, setting)
    text = str(setting if setting is not None else "auto").strip()
    if text.lower() in OFF:
        return None
    if text.lower() == "auto":
        cache = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
        return Path(cache) / "catalog-lakehouse" / "jvm"
    return Path(text).expanduser()


def for_session(setting: object, java_home: str, spark_conf: dict) -> ClassArchive | None:
    """The archive for this JDK and these settings, or None when off, when the user manages CDS,
    off POSIX (the JVM is told to exit by closing its stdin, which Windows' PySpark does not use)
    or when the folder's path has blanks (Java options are split on them)."""
    folder = archive_folder(setting)
    options = str(spark_conf.get(JAVA_OPTIONS, ""))
    if folder is None or any(flag in options for flag in USER_CDS_FLAGS):
        return None
    if os.name != "posix" or any(c.isspace() for c in str(folder)):
        return None
    return ClassArchive(folder / f"spark-{_digest(java_home, spark_conf)}.jsa")


def _digest(java_home: str, spark_conf: dict) -> str:
    """What the archive depends on: the JDK (its release file), PySpark's jars, the layout settings."""
    import pyspark

    parts = [os.path.realpath(java_home), pyspark.__version__]
    release = Path(java_home) / "release"
    if release.is_file():
        parts.append(release.read_text(encoding="utf-8", errors="replace"))
    jars = Path(pyspark.__file__).parent / "jars"
    if jars.is_dir():
        parts += sorted(f"{p.name}:{p.stat().st_size}" for p in jars.iterdir())
    parts += [f"{key}={spark_conf.get(key, '')}" for key in LAYOUT_CONF]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


def _remove_stale_recordings(folder: Path) -> None:
    cutoff = time.time() - STALE_SECONDS
    for leftover in folder.glob("*.tmp"):
        try:
            if leftover.stat().st_mtime < cutoff:
                leftover.unlink()
        except OSError:
            pass


def finish_recording_at_exit(spark, archive: ClassArchive, recording: Path) -> None:
    """At this process's exit: stop Spark, let the JVM exit (it writes the archive then), and put
    the archive in place if the JVM exited cleanly and wrote it."""

    def finish() -> None:
        process = getattr(spark.sparkContext._gateway, "proc", None)  # type: ignore[attr-defined]
        try:
            spark.stop()
            if process is None or process.stdin is None:
                return
            process.stdin.close()  # PySpark's JVM exits at the end of its stdin
            if process.wait(timeout=300) != 0:
                return  # a JVM that failed says nothing about the archive: the next run records again
            if recording.is_file() and recording.stat().st_size > 0:
                os.replace(recording, archive.path)
            else:  # it exited cleanly and wrote nothing: this JDK cannot record
                archive.failed_marker.touch()
        except Exception:  # never let the cache break an exit
            pass
        finally:
            recording.unlink(missing_ok=True)

    atexit.register(finish)
