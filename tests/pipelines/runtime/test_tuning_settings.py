"""Machine tuning is configuration: named profile settings, applied by a command, off on Databricks."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from pipelines.core.config import PROJECT_ROOT, ConfigError, load_config
from pipelines.runtime.tuning import allocator, class_archive
from pipelines.runtime.tuning.jit import PROFILE_KEY

APPLY = """
import json, os, sys
from pipelines.runtime.tuning import allocator
if sys.argv[2] == "late":
    import deltalake
applied = allocator.apply(sys.argv[1])
print(json.dumps({"applied": applied, "value": os.environ.get(allocator.ENV)}))
"""


def _apply_in_new_interpreter(setting: str, env: dict[str, str], when: str = "early") -> dict:
    done = subprocess.run(
        [sys.executable, "-c", APPLY, setting, when],
        capture_output=True,
        text=True,
        check=True,
        cwd=PROJECT_ROOT,
        env={"PATH": os.environ.get("PATH", ""), **env},
    )
    return json.loads(done.stdout.splitlines()[-1])


def test_the_local_profile_turns_the_tuning_on_and_the_databricks_profile_off():
    local = load_config().with_overrides(profile="local").profile
    assert local["class_archive"] == "auto" and local[PROFILE_KEY] > 0
    assert local["delta_rs_allocator"] == "return_freed"
    databricks = load_config().with_overrides(profile="databricks").profile
    assert class_archive.archive_folder(databricks["class_archive"]) is None
    assert databricks[PROFILE_KEY] == 0 and databricks["delta_rs_allocator"] == "default"


def test_the_allocator_setting_is_set_for_the_process_only_when_applied():
    assert _apply_in_new_interpreter("return_freed", {}) == {
        "applied": True,
        "value": allocator.SETTINGS["return_freed"],
    }
    assert _apply_in_new_interpreter("default", {}) == {"applied": False, "value": None}


def test_a_users_allocator_variable_wins_and_a_loaded_deltalake_is_left_alone():
    own = "dirty_decay_ms:-1"
    assert _apply_in_new_interpreter("return_freed", {allocator.ENV: own}) == {"applied": False, "value": own}
    assert _apply_in_new_interpreter("return_freed", {}, when="late") == {"applied": False, "value": None}


def test_an_unknown_allocator_setting_is_a_config_error(tmp_path):
    conf = tmp_path / "conf.yaml"
    conf.write_text("profiles:\n  local:\n    delta_rs_allocator: fast\n")
    with pytest.raises(ConfigError, match="delta_rs_allocator"):
        load_config(conf)
