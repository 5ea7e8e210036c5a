"""`gold.failed_logins`: failed DataHub logins per day, actor and (hashed) source IP.

The IP is personal data: gold exposes only `sha256(salt || ip)`. The salt is a
secret read from the environment variable named by the config key
`privacy.ip_salt_env` (default LAKEHOUSE_IP_SALT), never from a file. An empty
or unset salt is allowed (local demos) but then the hash is a plain sha256 of
the IP, which anyone can reverse by hashing the IPv4 space: set a salt in
production. Hashing is a pure function of (ip, salt) so tests pass the salt.
"""

from __future__ import annotations

import os

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from gold import GROUP, column_names, empty_frame
from gold.actor_activity_daily import activity_group
from pipelines.core.table_specs import Accumulate, GoldTableSpec
from silver.common import deterministic_id

AUDIT_EVENTS = "silver.datahub_audit_events"
FAILED_LOGIN = "FailedLogInEvent"
DEFAULT_SALT_ENV = "LAKEHOUSE_IP_SALT"
GROUP_COLUMN = "activity_group"
SCHEMA = (
    "failed_login_id string, event_date date, actor string, source_ip_hash string, failed_logins long, "
    "first_failed_at timestamp, last_failed_at timestamp, source_ip string, activity_group string"
)
COLUMNS = column_names(SCHEMA)


def ip_hash(ip: Column, salt: str) -> Column:
    """Hex sha256 of salt + ip (null for a null ip)."""
    return F.when(ip.isNotNull(), F.sha2(F.concat(F.lit(salt), ip), 256))


def salt_from_environment(env_name: str | None = None) -> str:
    """The salt from `env_name`, else from the variable the config's `privacy.ip_salt_env` names."""
    if env_name is None:
        from pipelines.core.config import load_config

        env_name = load_config().section("privacy").get("ip_salt_env") or DEFAULT_SALT_ENV
    return os.environ.get(env_name, "")


def relevant(source_table: str, rows: DataFrame) -> DataFrame:
    if source_table != AUDIT_EVENTS:
        raise ValueError(f"gold.failed_logins: unknown source table {source_table!r}")
    failed = rows.filter(F.col("event_type") == FAILED_LOGIN)
    return failed.withColumn(GROUP, activity_group(F.col("event_date"), F.col("actor")))


def build_failed_logins(audit_events: DataFrame, salt: str, expose_ip: bool = False) -> DataFrame:
    """Counts (`COLUMNS`) of failed logins per (event_date, actor, salted IP hash).

    `source_ip` stays null unless `expose_ip` (config `privacy.hash_ip_in_gold: false`).
    """
    failed = audit_events.filter(F.col("event_type") == FAILED_LOGIN).select(
        "event_date",
        "actor",
        ip_hash(F.col("source_ip"), salt).alias("source_ip_hash"),
        (F.col("source_ip") if expose_ip else F.lit(None).cast("string")).alias("source_ip"),
        "event_time",
        "event_id",
    )
    counted = (
        failed.dropDuplicates(["event_id"])
        .groupBy("event_date", "actor", "source_ip_hash", "source_ip")
        .agg(
            F.count("*").alias("failed_logins"),
            F.min("event_time").alias("first_failed_at"),
            F.max("event_time").alias("last_failed_at"),
        )
    )
    return counted.select(
        deterministic_id(F.date_format("event_date", "yyyy-MM-dd"), "actor", "source_ip_hash").alias(
            "failed_login_id"
        ),
        *COLUMNS[1:-1],
        activity_group(F.col("event_date"), F.col("actor")).alias(GROUP_COLUMN),
    )


def accumulate(current: DataFrame, increment: DataFrame) -> DataFrame:
    """Rows of `current` and `increment` for the same day, actor and IP become one: their counts
    added, the earliest first and the latest last failure kept (silver holds each event once)."""
    labels = [c for c in COLUMNS if c not in ("failed_logins", "first_failed_at", "last_failed_at")]
    both = current.select(*COLUMNS).unionByName(increment.select(*COLUMNS))
    counted = both.groupBy(*labels).agg(
        F.sum("failed_logins").alias("failed_logins"),
        F.min("first_failed_at").alias("first_failed_at"),
        F.max("last_failed_at").alias("last_failed_at"),
    )
    return counted.select(*COLUMNS)


def spec_for(salt_env: str | None = None, expose_ip: bool = False) -> GoldTableSpec:
    """The job reading its salt from `salt_env` (None: the variable the default config names)."""

    def build(sources: dict[str, DataFrame]) -> DataFrame:
        if sources.get(AUDIT_EVENTS) is None:
            return empty_frame(SCHEMA)
        return build_failed_logins(sources[AUDIT_EVENTS], salt_from_environment(salt_env), expose_ip)

    return GoldTableSpec(
        table="gold.failed_logins",
        sources=(AUDIT_EVENTS,),
        relevant=relevant,
        build=build,
        group_key=GROUP_COLUMN,
        row_key=("failed_login_id",),
        incremental=Accumulate(accumulate),
        locality="event_date",  # a failed login changes its own day's rows
        cluster_by=("event_date",),
    )


SPEC = spec_for()


def configured_spec(config) -> GoldTableSpec:
    """The job as the run's configuration asks (`privacy.ip_salt_env`, `privacy.hash_ip_in_gold`)."""
    privacy = config.section("privacy")
    return spec_for(privacy["ip_salt_env"], expose_ip=not privacy["hash_ip_in_gold"])
