"""The local profile's `delta_rs_allocator: return_freed` makes delta-rs' jemalloc hand freed memory back.

Each check runs a new interpreter: the allocator reads its setting once, when `deltalake` loads.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from deltalake import write_deltalake

from pipelines.core.config import PROJECT_ROOT
from pipelines.runtime.tuning.allocator import ENV, SETTINGS

pytestmark = pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads RSS from /proc")

REPOSITORY = PROJECT_ROOT
VARIABLE, SETTING = ENV, SETTINGS["return_freed"]
KEEP_EVERYTHING = "dirty_decay_ms:-1,muzzy_decay_ms:-1"  # jemalloc never hands freed pages back

# Applies the default profile's allocator setting first, as every command does, then lets delta-rs group a million
# distinct keys (its hash table and decoded batches: ~180 MB in Rust), drops the result and
# waits up to the given seconds for the RSS to fall below half of what the query added.
CHILD = """
import json, os, sys, time
from pipelines.core.config import load_config
from pipelines.runtime.tuning import allocator
allocator.apply(load_config().profile.get("delta_rs_allocator"))
from deltalake import DeltaTable, QueryBuilder
from tests.support.memory import rss_mb

table = DeltaTable(sys.argv[1])
before = rss_mb()
QueryBuilder().register("t", table).execute("select k, count(*) from t group by k").read_all()
peak = rss_mb()
deadline = time.monotonic() + float(sys.argv[3])
while time.monotonic() < deadline and rss_mb() > before + (peak - before) / 2:
    time.sleep(0.1)
print(json.dumps({"before": before, "peak": peak, "after": rss_mb(), "setting": os.environ.get(sys.argv[2])}))
"""


@pytest.fixture(scope="module")
def keyed_table(tmp_path_factory) -> str:
    rows = 1_000_000
    keys = pc.binary_join_element_wise("key-", pc.cast(pa.array(range(rows)), pa.string()), "")
    path = str(tmp_path_factory.mktemp("allocator") / "keys")
    write_deltalake(path, pa.table({"k": keys, "v": pa.array(range(rows))}))
    return path


def _query_in_new_interpreter(table: str, setting: str | None, wait: float = 4) -> tuple[dict, str]:
    env = {k: v for k, v in os.environ.items() if k != VARIABLE}
    if setting is not None:
        env[VARIABLE] = setting
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPOSITORY), env.get("PYTHONPATH")]))
    done = subprocess.run(
        [sys.executable, "-c", CHILD, table, VARIABLE, str(wait)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1]), done.stderr


def test_delta_rs_hands_the_memory_of_a_query_back_within_seconds(keyed_table):
    ours, warnings = _query_in_new_interpreter(keyed_table, None)
    assert ours["setting"] == SETTING
    assert "<jemalloc>" not in warnings  # jemalloc names a setting it does not understand here
    added = ours["peak"] - ours["before"]
    assert added >= 80, ours  # the query is big enough to tell
    assert ours["after"] - ours["before"] <= added / 2, ours


def test_a_users_own_allocator_setting_wins(keyed_table):
    # twice the decay time of the setting the test above checks: its pages would be back by then
    kept, _ = _query_in_new_interpreter(keyed_table, KEEP_EVERYTHING, wait=2)
    assert kept["setting"] == KEEP_EVERYTHING
    # the control: with jemalloc's pages kept, the RSS stays where the query left it
    assert kept["after"] - kept["before"] >= 0.9 * (kept["peak"] - kept["before"]), kept
