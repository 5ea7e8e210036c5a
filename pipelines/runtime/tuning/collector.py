"""Which garbage collector a new local driver JVM runs: the profile's `garbage_collector`.

HotSpot picks G1 on any machine with two cores or more. G1 is built for short pauses: it marks
the heap concurrently, on threads of its own, and every reference store in Spark's code pays a
write barrier for it. A pipeline run is a batch job no one waits on mid-pause, which a
throughput collector serves with less CPU: the parallel collector stops the JVM to collect,
with every core, and does nothing between. Measured (docs/performance.md, "The driver JVM's
garbage collector"): the bundled samples in two batches through both engines in one JVM took
about 9% less CPU and 9% less time than under G1 on a 2-core machine.

`parallel` (the local profile's default), `serial`, `g1`, or `default` (HotSpot's choice).
A collector the user names (the profile's own `spark.driver.extraJavaOptions`, or Java's
option variables) wins: HotSpot refuses to start with two.
"""

from __future__ import annotations

import os
import re

PROFILE_KEY = "garbage_collector"
COLLECTORS = {
    "default": "",
    "parallel": "-XX:+UseParallelGC",
    "serial": "-XX:+UseSerialGC",
    "g1": "-XX:+UseG1GC",
}
NAMES_A_COLLECTOR = re.compile(r"-XX:\+Use\w*GC\b")
# the variables HotSpot itself reads options from, before or after the command line's
JAVA_OPTION_VARIABLES = ("JAVA_TOOL_OPTIONS", "JDK_JAVA_OPTIONS", "_JAVA_OPTIONS")


def java_options(choice: str | None, own: str) -> str:
    """The option that selects the profile's collector (`choice`), or "" when it is `default` or
    absent, or when `own` options or Java's option variables name a collector already."""
    option = COLLECTORS.get(choice or "default", "")
    named = [own, *(os.environ.get(v, "") for v in JAVA_OPTION_VARIABLES)]
    if not option or any(NAMES_A_COLLECTOR.search(text) for text in named):
        return ""
    return option
