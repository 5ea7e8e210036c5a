"""How a new local JVM compiles code, chosen from the size of the one run it is started for.

HotSpot compiles hot code twice: at once with its quick C1 compiler, later again, optimised,
with C2. In a JVM's first minute C2 spends many seconds of CPU on Spark's own code (Jackson,
Janino, task serialization), on a small machine beside the run's own work. A small increment
in a new `lakehouse run` process is over before that pays back, so it starts with C1 only
(`QUICK_JIT_OPTIONS`). Large increments, full builds and a JVM that serves many runs
(`lakehouse run --every`, tests) run long enough for C2's code to win: those keep HotSpot's
default (measure with `python -m benchmarks.new_process`: benchmarks/README.md).

The profile's `quick_jit_below_records` is the size: when the rows the run's tasks have in
sight before it starts, summed, are fewer than that, the JVM starts with C1 only. Each task
is weighed as the runner weighs it (`pending_rows`: landing file sizes for bronze, Delta
statistics for silver and gold), so an increment counts its new landing records, and a layer
left behind (a failed run, `--layers bronze` first) counts the rows it has to catch up on.
0 or absent: never.
"""

from __future__ import annotations

from collections.abc import Callable

from pyspark.sql import SparkSession

from pipelines.core.config import Config
from pipelines.runtime.tuning.class_archive import JAVA_OPTIONS
from pipelines.runtime.tuning.local_driver import jvm_options

QUICK_JIT = "-XX:TieredStopAtLevel=1"
# C1 alone makes HotSpot size the code cache as a client VM's, a fifth of the tiered size, which
# Spark's generated classes can fill ("Out of space in CodeCache"): the tiered size is kept.
CODE_CACHE = "-XX:ReservedCodeCacheSize=240m"
QUICK_JIT_OPTIONS = f"{QUICK_JIT} {CODE_CACHE}"
PROFILE_KEY = "quick_jit_below_records"


def java_options_for_rows(config: Config, rows_in_sight: Callable[[], int]) -> str:
    """`QUICK_JIT_OPTIONS` when a new JVM started for one run should compile with C1 only, else ""
    (HotSpot's default). `rows_in_sight` weighs the run; it is called only when the profile asks."""
    limit = config.profile.get(PROFILE_KEY)
    if not limit or config.profile.get("use_existing_session"):
        return ""
    own = str(config.profile.get("spark_conf", {}).get(JAVA_OPTIONS, ""))
    if "Tiered" in own:
        return ""  # the profile chose the compilers itself
    try:
        pending = rows_in_sight()
    except Exception:  # weighed as large, as the runner weighs a task it cannot; the run reports the cause
        return ""
    if pending >= limit:
        return ""
    return QUICK_JIT if "ReservedCodeCacheSize" in own else QUICK_JIT_OPTIONS  # a size set there stays


def compiles_with_c1_only(spark: SparkSession) -> bool:
    """Whether the session's JVM was started with `QUICK_JIT` (shown on the run's first line)."""
    return QUICK_JIT in jvm_options(spark)
