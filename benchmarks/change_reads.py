"""`python -m benchmarks.change_reads`: two ways Delta's own engine reads, by table name, the rows
added since a version, side by side: its change data feed (a batch read) and its streaming source
(`trigger(availableNow=True)` into a sink).

Why: on delta-spark the pipeline finds each task's new rows by name (Unity Catalog forbids
reading a managed table's folder). Both of Delta's ways read only the new commits' files; this
measures what each costs per read, the figure docs/performance.md gives, behind choosing the change
data feed (docs/engines.md). Each way runs `--repeats` times alternating, on the same table and the same new rows,
in one session with Delta's jars.

    python -m benchmarks.change_reads --rows 100000 --commits 20
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.change_reads", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--rows", type=int, default=100_000, help="rows of the table before the new ones")
    parser.add_argument("--commits", type=int, default=20, help="commits those rows arrive in")
    parser.add_argument("--new", type=float, default=0.01, help="the new rows, a share of --rows")
    parser.add_argument("--repeats", type=int, default=5)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    from pyspark.sql import functions as F

    from pipelines.core.config import load_config
    from pipelines.runtime.spark import get_spark

    args = parse_args(argv)
    spark = get_spark(load_config().with_overrides(engine="delta-spark"))
    work = Path(tempfile.mkdtemp(prefix="bench-change-reads-"))
    table = "bench_change_reads"
    spark.sql(f"DROP TABLE IF EXISTS {table}")

    def rows(first: int, count: int):
        return spark.range(first, first + count).select(
            "id", F.sha2(F.col("id").cast("string"), 256).alias("payload")
        )

    per_commit = max(1, args.rows // args.commits)
    for number in range(args.commits):
        writer = rows(number * per_commit, per_commit).write.format("delta").mode("append")
        if number == 0:
            writer = writer.option("path", str(work / table)).option("delta.enableChangeDataFeed", "true")
        writer.saveAsTable(table)
    since = args.commits - 1
    new = max(1, int(args.rows * args.new))
    rows(args.commits * per_commit, new).write.format("delta").mode("append").saveAsTable(table)

    def change_data_feed() -> int:
        changes = spark.read.format("delta").option("readChangeFeed", "true")
        changes = changes.option("startingVersion", since + 1).table(table)
        return changes.where(F.col("_change_type") == "insert").count()

    def streaming_source() -> int:
        counted: list[int] = []
        checkpoint = work / f"checkpoint-{time.monotonic_ns()}"
        query = (
            spark.readStream.format("delta")
            .option("startingVersion", since + 1)
            .table(table)
            .writeStream.trigger(availableNow=True)
            .option("checkpointLocation", str(checkpoint))
            .foreachBatch(lambda batch, _: counted.append(batch.count()))
            .start()
        )
        query.awaitTermination()
        return sum(counted)

    ways = {"change data feed (batch)": change_data_feed, "streaming source (availableNow)": streaming_source}
    seconds: dict[str, list[float]] = {name: [] for name in ways}
    for _ in range(args.repeats):
        for name, read in ways.items():
            started = time.monotonic()
            assert read() == new, name
            seconds[name].append(time.monotonic() - started)
    spark.sql(f"DROP TABLE IF EXISTS {table}")
    print(
        f"{args.rows:,} rows in {args.commits} commits, then {new:,} new; median of {args.repeats} reads each:"
    )
    for name, times in seconds.items():
        print(f"  {name:<34} {statistics.median(times):6.2f} s  (min {min(times):.2f}, max {max(times):.2f})")
    print(json.dumps({name: [round(t, 3) for t in times] for name, times in seconds.items()}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
