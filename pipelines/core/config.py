"""Load and validate the YAML configuration.

`conf/lakehouse.yaml` holds every default (the wheel carries it: `pipelines.core.defaults`);
a user file given with `--conf` is deep-merged over it. Validation is strict (unknown keys and wrong types are
errors naming the key) because a typo in a scheduled job should fail loudly,
not silently fall back to a default.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from pipelines.core import defaults
from pipelines.core.locations import NotALocalPath, local_path

PROJECT_ROOT = Path(__file__).resolve().parents[2]  # the repository, in a clone
DEFAULT_CONF = defaults.conf_file("lakehouse.yaml")
ENGINES = ("auto", "delta-rs", "delta-spark")
ALLOCATOR_SETTINGS = ("default", "return_freed")  # pipelines.runtime.tuning.allocator
GARBAGE_COLLECTORS = ("default", "parallel", "serial", "g1")  # pipelines.runtime.tuning.collector
COMPUTE_RULES = ("serverless", "standard")  # pipelines.runtime.compute_rules
# maps whose keys are not fixed by the defaults (`consumer`: librdkafka's settings of the Kafka collector;
# `tag_classes`: the governance tables' classes of tags; `families`: a feed's families with freshness
# hours of their own; `targets`: the notification targets)
FREE_FORM = {"spark_conf", "profiles", "consumer", "tag_classes", "families", "targets"}
# `auto` or a number (or a boolean): `_validate` checks these, not the merge
VALIDATED_KINDS = {"run.parallel_tasks", "bronze.skip_unchanged_folders"}


class ConfigError(ValueError):
    """A configuration file that cannot be used; the message names file and key."""


def _merge(base: dict, override: dict, where: str, origin: str) -> dict:
    merged = copy.deepcopy(base)
    for key, value in override.items():
        path = f"{where}.{key}" if where else key
        if key not in base and where.split(".")[-1] not in FREE_FORM and not _free_path(where):
            raise ConfigError(f"{origin}: unknown key '{path}'")
        if key in base and isinstance(base[key], dict):
            if not isinstance(value, dict):
                raise ConfigError(f"{origin}: '{path}' must be a mapping, got {type(value).__name__}")
            merged[key] = _merge(base[key], value, path, origin)
        elif (
            key in base
            and base[key] is not None
            and path not in VALIDATED_KINDS
            and not _same_kind(base[key], value)
        ):
            raise ConfigError(
                f"{origin}: '{path}' must be {type(base[key]).__name__}, got {type(value).__name__}"
            )
        else:
            merged[key] = copy.deepcopy(value)
    return merged


def _free_path(where: str) -> bool:
    return any(part in FREE_FORM for part in where.split("."))


def _same_kind(default: Any, value: Any) -> bool:
    if isinstance(default, bool) or isinstance(value, bool):
        return isinstance(default, bool) and isinstance(value, bool)
    if isinstance(default, (int, float)):
        return isinstance(value, (int, float))
    return isinstance(value, type(default))


def _read_yaml(path) -> dict:
    """A YAML mapping from a Path or a package resource (`pipelines.core.defaults`)."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read config {path}: {exc.strerror}") from exc
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML ({exc.__class__.__name__})") from exc
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: top level must be a mapping")
    return data


@dataclass(frozen=True)
class Config:
    """Validated settings; `raw` keeps the merged mapping for the rare deep look-up."""

    raw: dict

    @property
    def warehouse(self) -> Path:
        return _folder(self.raw["storage"]["warehouse"], "storage.warehouse")

    @property
    def landing(self) -> Path:
        return _folder(self.raw["landing"], "landing")

    @property
    def engine(self) -> str:
        return self.raw["storage"]["engine"]

    @property
    def profile(self) -> dict:
        return self.raw["profiles"][self.raw["profile"]]

    @property
    def profile_name(self) -> str:
        """`local`, `databricks`, `connect` or a profile of the user's own."""
        return self.raw["profile"]

    @property
    def sources(self) -> dict[str, dict]:
        return self.raw["sources"]

    def section(self, name: str) -> dict:
        return self.raw[name]

    def with_overrides(
        self,
        *,
        landing: str | None = None,
        warehouse: str | None = None,
        profile: str | None = None,
        engine: str | None = None,
        catalog: str | None = None,
        schema_prefix: str | None = None,
    ) -> Config:
        """A copy with command-line settings over the file's, validated like a file's.

        `landing`, `warehouse`, `profile` and `engine` apply when given and not empty;
        `catalog` and `schema_prefix` whenever given, since "" is a setting of its own."""
        raw = copy.deepcopy(self.raw)
        if landing:
            raw["landing"] = landing
        if warehouse:
            raw["storage"]["warehouse"] = warehouse
        if profile:
            raw["profile"] = profile
        if engine:
            raw["storage"]["engine"] = engine
        if catalog is not None:
            raw["storage"]["catalog"] = catalog
        if schema_prefix is not None:
            raw["storage"]["schema_prefix"] = schema_prefix
        _validate(raw, "command line")
        return Config(raw)


def _folder(location: str, key: str) -> Path:
    """A configured folder as a local path: a path, a `file:` URI or a volume's `dbfs:/Volumes/` URI."""
    try:
        return Path(local_path(str(location))).expanduser().resolve()
    except NotALocalPath as exc:
        raise ConfigError(f"{key}: {exc}") from None


def load_config(path: str | Path | None = None) -> Config:
    """Defaults merged with `path` (if given), validated."""
    raw = _read_yaml(DEFAULT_CONF)
    if path is not None:
        raw = _merge(raw, _read_yaml(Path(path)), "", str(path))
    _validate(raw, str(path or DEFAULT_CONF))
    return Config(raw)


def _whole_number(value, least: int) -> bool:
    return not isinstance(value, bool) and isinstance(value, int) and value >= least


def _validate(raw: dict, origin: str) -> None:
    if raw["profile"] not in raw["profiles"]:
        raise ConfigError(f"{origin}: profile '{raw['profile']}' is not one of {sorted(raw['profiles'])}")
    if raw["storage"]["engine"] not in ENGINES:
        raise ConfigError(f"{origin}: storage.engine must be one of {ENGINES}")
    parallel = raw["run"]["parallel_tasks"]
    if parallel != "auto" and not _whole_number(parallel, 1):
        raise ConfigError(
            f"{origin}: run.parallel_tasks must be 'auto' or a whole number >= 1, got {parallel!r}"
        )
    for section, key, least in (
        ("maintenance", "compact_min_files", 0),
        ("maintenance", "compact_target_file_mb", 1),
        ("maintenance", "validation_document_days", 0),
        ("maintenance", "vacuum_retention_hours", 0),
        ("maintenance", "vacuum_every_hours", 0),
    ):
        value = raw[section][key]
        if not _whole_number(value, least):
            raise ConfigError(f"{origin}: {section}.{key} must be a whole number >= {least}, got {value!r}")
    profile = raw["profiles"][raw["profile"]]
    for key in ("small_input_rows", "quick_jit_below_records"):  # optional; 0 or absent: off
        value = profile.get(key)
        if value is not None and not _whole_number(value, 0):
            raise ConfigError(
                f"{origin}: profiles.{raw['profile']}.{key} must be a whole number >= 0, got {value!r}"
            )
    rules = profile.get("rules")
    if rules is not None and rules not in COMPUTE_RULES:
        raise ConfigError(
            f"{origin}: profiles.{raw['profile']}.rules must be one of {list(COMPUTE_RULES)}, got {rules!r}"
        )
    collector = profile.get("garbage_collector")
    if collector is not None and collector not in GARBAGE_COLLECTORS:
        raise ConfigError(
            f"{origin}: profiles.{raw['profile']}.garbage_collector must be one of "
            f"{list(GARBAGE_COLLECTORS)}, got {collector!r}"
        )
    allocator = profile.get("delta_rs_allocator")
    if allocator is not None and allocator not in ALLOCATOR_SETTINGS:
        raise ConfigError(
            f"{origin}: profiles.{raw['profile']}.delta_rs_allocator must be one of "
            f"{list(ALLOCATOR_SETTINGS)}, got {allocator!r}"
        )
    _validate_governance(raw["governance"], origin)
    _validate_feeds(raw["feeds"], origin)
    _validate_notifications(raw["notifications"], origin)
    if raw["bronze"]["on_changed_file"] not in ("skip", "ingest"):
        raise ConfigError(f"{origin}: bronze.on_changed_file must be 'skip' or 'ingest'")
    if raw["bronze"]["skip_unchanged_folders"] not in ("auto", True, False):
        raise ConfigError(f"{origin}: bronze.skip_unchanged_folders must be auto, true or false")
    if raw["bronze"]["read_landing"] not in ("auto", "driver", "spark"):
        raise ConfigError(f"{origin}: bronze.read_landing must be auto, driver or spark")
    for name, source in raw["sources"].items():
        folder = Path(str(source.get("folder", "")))
        if folder.is_absolute() or ".." in folder.parts:
            raise ConfigError(
                f"{origin}: sources.{name}.folder must be a relative path inside the landing folder"
            )
        table = str(source.get("bronze_table", ""))
        if not table.startswith("bronze."):
            raise ConfigError(f"{origin}: sources.{name}.bronze_table must be named bronze.<table>")


CLASS_NAME = r"[a-z][a-z0-9_]*"  # a tag class names map keys and appears in SQL as a value


def _validate_governance(governance: dict, origin: str) -> None:
    """Tag classes and actor kinds are lists of pattern strings; the reversal window is positive."""
    for name, patterns in governance["tag_classes"].items():
        if not re.fullmatch(CLASS_NAME, str(name)):
            raise ConfigError(
                f"{origin}: governance.tag_classes: a class name is lower case letters, digits and _, got {name!r}"
            )
        _pattern_list(patterns, f"governance.tag_classes.{name}", origin)
    for kind, patterns in governance["actor_kinds"].items():
        _pattern_list(patterns, f"governance.actor_kinds.{kind}", origin)
    window = governance["reversal_window_hours"]
    if isinstance(window, bool) or not isinstance(window, (int, float)) or window <= 0:
        raise ConfigError(f"{origin}: governance.reversal_window_hours must be a number > 0, got {window!r}")
    rules_file = governance["rules_file"]
    if not isinstance(rules_file, str) or not rules_file.strip():
        raise ConfigError(
            f"{origin}: governance.rules_file must be a path to a rules file, got {rules_file!r}"
        )


def _pattern_list(patterns: Any, key: str, origin: str) -> None:
    if not isinstance(patterns, list) or not all(isinstance(p, str) and p for p in patterns):
        raise ConfigError(f"{origin}: {key} must be a list of patterns (non-empty strings), got {patterns!r}")


FEED_SEVERITIES = ("warn", "fail")


def _positive(value) -> bool:
    return not isinstance(value, bool) and isinstance(value, (int, float)) and value > 0


def _validate_feeds(feeds: dict, origin: str) -> None:
    """The feed checks' severity, thresholds and freshness hours (per source and family)."""
    if feeds["severity"] not in FEED_SEVERITIES:
        raise ConfigError(
            f"{origin}: feeds.severity must be one of {list(FEED_SEVERITIES)}, got {feeds['severity']!r}"
        )
    for key in ("volume_min_ratio", "volume_min_baseline"):
        value = feeds[key]
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
            raise ConfigError(f"{origin}: feeds.{key} must be a number >= 0, got {value!r}")
    for source, settings in feeds.items():
        if not isinstance(settings, dict):
            continue
        if not _positive(settings["freshness_hours"]):
            raise ConfigError(
                f"{origin}: feeds.{source}.freshness_hours must be a number > 0, got {settings['freshness_hours']!r}"
            )
        for family, hours in (settings.get("families") or {}).items():
            if not _positive(hours):
                raise ConfigError(
                    f"{origin}: feeds.{source}.families.{family} must be a number of hours > 0, got {hours!r}"
                )


TARGET_TYPES = ("webhook", "slack", "email")
GROUPINGS = ("responsible", "channel")
NOTICE_KINDS = ("violation", "data_quality", "feed")
# each target type's keys: required, then optional (a secret is given as `<name>_env` or `<name>_secret`)
TARGET_KEYS = {
    "webhook": ({"type"}, {"url_env", "url_secret", "group_by", "kinds", "headers"}),
    "slack": ({"type"}, {"url_env", "url_secret", "group_by", "kinds"}),
    "email": (
        {"type", "host", "from", "to"},
        {"port", "starttls", "username", "password_env", "password_secret", "group_by", "kinds"},
    ),
}
TARGET_NAME = r"[A-Za-z0-9][A-Za-z0-9_.-]*"


def _validate_notifications(notifications: dict, origin: str) -> None:
    """Retry settings are positive; each target has a known type, its keys, and a secret given
    once, as an environment variable's name or a Databricks secret `{scope, key}`."""
    for key in ("enabled", "after_run"):
        if not isinstance(notifications[key], bool):
            raise ConfigError(f"{origin}: notifications.{key} must be true or false")
    if not _whole_number(notifications["max_attempts"], 1):
        raise ConfigError(f"{origin}: notifications.max_attempts must be a whole number >= 1")
    for key in ("backoff_seconds", "max_backoff_seconds", "timeout_seconds"):
        value = notifications[key]
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
            raise ConfigError(f"{origin}: notifications.{key} must be a number >= 0, got {value!r}")
    for name, target in (notifications["targets"] or {}).items():
        _validate_target(str(name), target, origin)


def _validate_target(name: str, target: Any, origin: str) -> None:
    where = f"notifications.targets.{name}"
    if not re.fullmatch(TARGET_NAME, name):
        raise ConfigError(f"{origin}: {where}: a target name is letters, digits, '_', '.' and '-'")
    if not isinstance(target, dict) or target.get("type") not in TARGET_TYPES:
        raise ConfigError(f"{origin}: {where}.type must be one of {list(TARGET_TYPES)}")
    required, optional = TARGET_KEYS[target["type"]]
    missing = sorted(required - set(target))
    if missing:
        raise ConfigError(f"{origin}: {where} needs {', '.join(missing)}")
    unknown = sorted(set(target) - required - optional)
    if unknown:
        raise ConfigError(f"{origin}: unknown key '{where}.{unknown[0]}'")
    if target.get("group_by", "responsible") not in GROUPINGS:
        raise ConfigError(f"{origin}: {where}.group_by must be one of {list(GROUPINGS)}")
    kinds = target.get("kinds", list(NOTICE_KINDS))
    if not isinstance(kinds, list) or not kinds or not set(kinds) <= set(NOTICE_KINDS):
        raise ConfigError(f"{origin}: {where}.kinds must be a non-empty list of {list(NOTICE_KINDS)}")
    secret = "password" if target["type"] == "email" else "url"
    given = [key for key in (f"{secret}_env", f"{secret}_secret") if key in target]
    if target["type"] != "email" and not given:
        raise ConfigError(f"{origin}: {where} needs url_env or url_secret (the URL is a secret)")
    if len(given) > 1:
        raise ConfigError(f"{origin}: {where}: give {secret}_env or {secret}_secret, not both")
    if f"{secret}_env" in given and not (isinstance(target[given[0]], str) and target[given[0]]):
        raise ConfigError(f"{origin}: {where}.{secret}_env must name an environment variable")
    if f"{secret}_secret" in given:
        reference = target[given[0]]
        if not (
            isinstance(reference, dict)
            and set(reference) == {"scope", "key"}
            and all(isinstance(v, str) and v for v in reference.values())
        ):
            raise ConfigError(f"{origin}: {where}.{secret}_secret must be {{scope: NAME, key: NAME}}")
    if target["type"] == "email":
        to = target["to"]
        if isinstance(to, str):
            to = [to]
        if not (isinstance(to, list) and to and all(isinstance(a, str) and "@" in a for a in to)):
            raise ConfigError(f"{origin}: {where}.to must be an address or a list of addresses")
        port = target.get("port", 25)
        if not _whole_number(port, 1) or port > 65535:
            raise ConfigError(f"{origin}: {where}.port must be a port number, got {port!r}")
        if not isinstance(target.get("starttls", False), bool):
            raise ConfigError(f"{origin}: {where}.starttls must be true or false")
    if "headers" in target and not (
        isinstance(target["headers"], dict) and all(isinstance(v, str) for v in target["headers"].values())
    ):
        raise ConfigError(f"{origin}: {where}.headers must map header names to strings")
