"""Feed checks: is each catalog still delivering events, and about as many as usual?

A stopped collector or a catalog that sends a fraction of its events breaks no rule of any
table: every row that arrives is fine. So after every run of `gold.feed_volume_daily`'s task,
changed or up to date, these checks judge the feeds against the run's wall clock (`now`) and
record one outcome per check in `ops.dq_results` under `feeds.<source>` (so the DQ report and
the notifications show them like any rule):

- `feed_is_fresh:all`: the source's newest event (from its silver tables' file statistics, no
  data read) is at most `feeds.<source>.freshness_hours` old; `feed_is_fresh:<family>` the same
  for each family given its own hours in `feeds.<source>.families` (read from the feed table);
- `feed_volume_near_baseline:<family>`: yesterday (UTC, the last complete day by the run's
  clock; its rows read by the table store, without a Spark job on delta-rs) had at least `feeds.volume_min_ratio` of the family's baseline, judged for the families
  whose baseline is at least `feeds.volume_min_baseline` events (smaller ones vary too much).

A breached check has severity `feeds.severity`: `warn` records it, `fail` also stops the run
(as `quality.fail_on_breach` says for every `fail` rule). A source that never delivered an
event is not judged.
"""

from __future__ import annotations

import datetime as dt
import functools
from collections.abc import Mapping
from dataclasses import dataclass

from pipelines.quality import Expectation, Outcome
from pipelines.store.pruning import In

ALL = "all"  # the family name of a check over every family of a source
TABLE_PREFIX = "feeds."
FRESH = "feed_is_fresh"
NEAR_BASELINE = "feed_volume_near_baseline"
SEVERITIES = ("warn", "fail")
BETWEEN = "expect_column_values_to_be_between"


def now() -> dt.datetime:
    """The wall-clock time (UTC) the checks judge a run against; tests set it."""
    return dt.datetime.now(dt.timezone.utc)


@dataclass(frozen=True)
class FeedSettings:
    """The `feeds` section: `freshness_hours` per source, `family_hours` per source and family,
    the volume thresholds, and the severity of a breach."""

    severity: str
    volume_min_ratio: float
    volume_min_baseline: float
    freshness_hours: tuple[tuple[str, float], ...]
    family_hours: tuple[tuple[str, str, float], ...]

    @classmethod
    def from_section(cls, section: Mapping) -> FeedSettings:
        """From the `feeds` section of a (validated) configuration."""
        sources = {k: v for k, v in section.items() if isinstance(v, Mapping)}
        return cls(
            severity=str(section["severity"]),
            volume_min_ratio=float(section["volume_min_ratio"]),
            volume_min_baseline=float(section["volume_min_baseline"]),
            freshness_hours=tuple((s, float(v["freshness_hours"])) for s, v in sorted(sources.items())),
            family_hours=tuple(
                (s, str(f), float(h))
                for s, v in sorted(sources.items())
                for f, h in sorted((v.get("families") or {}).items())
            ),
        )


@functools.cache
def default_settings() -> FeedSettings:
    """The packaged defaults, read on first use (the table's `SPEC` outside a run)."""
    from pipelines.core.config import load_config

    return FeedSettings.from_section(load_config().section("feeds"))


def _hours(later: dt.datetime, earlier: dt.datetime) -> float:
    return (later - earlier).total_seconds() / 3600


def _utc(micros: int) -> dt.datetime:
    return dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc) + dt.timedelta(microseconds=micros)


def _as_utc(value: dt.datetime | None) -> dt.datetime | None:
    """A timestamp Spark returned (naive, in the session's UTC) as an aware UTC datetime."""
    if value is None or value.tzinfo is not None:
        return value
    return value.replace(tzinfo=dt.timezone.utc)


def _latest(a: dt.datetime | None, b: dt.datetime | None) -> dt.datetime | None:
    """The later of two times, either of which may be unknown."""
    return b if a is None else (a if b is None else max(a, b))


def _text(moment: dt.datetime | None) -> str:
    return "never" if moment is None else moment.strftime("%Y-%m-%d %H:%M:%S UTC")


@dataclass(frozen=True)
class FeedChecks:
    """The checks of the feeds of `table` (`gold.feed_volume_daily`), whose sources' silver
    tables are `feeds` (source -> tables); called with the table store after every run of the
    table's task, it returns {`feeds.<source>`: outcomes}."""

    table: str
    feeds: Mapping[str, tuple[str, ...]]
    settings: FeedSettings | None = None

    def __hash__(self) -> int:
        return hash((self.table, tuple(self.feeds), self.settings))

    def __call__(self, store) -> dict[str, list[Outcome]]:
        settings = self.settings or default_settings()
        at = now()
        found: dict[str, list[Outcome]] = {}
        limits = dict(settings.freshness_hours)
        for source, tables in self.feeds.items():
            newest = [store.max_micros(t, "event_time") for t in tables if store.exists(t)]
            newest = [m for m in newest if m is not None]
            if newest and source in limits:
                moment = _utc(max(newest))
                found.setdefault(source, []).append(
                    self._fresh(settings, ALL, limits[source], moment, None, at)
                )
        if store.exists(self.table):
            for source, outcome in self._family_freshness(store, settings, at):
                found.setdefault(source, []).append(outcome)
            for source, outcome in self._volume(store, settings, at):
                found.setdefault(source, []).append(outcome)
        return {TABLE_PREFIX + source: outcomes for source, outcomes in sorted(found.items())}

    def _fresh(
        self,
        settings: FeedSettings,
        family: str,
        hours: float,
        newest: dt.datetime | None,
        landed: dt.datetime | None,
        at: dt.datetime,
    ) -> Outcome:
        expectation = Expectation(
            f"{FRESH}:{family}",
            BETWEEN,
            {"column": "hours_since_newest_event", "max_value": hours},
            settings.severity,
        )
        if newest is None:
            return Outcome(expectation, 0, 0, ())
        age = _hours(at, newest)
        stale = age > hours
        landing = f", newest landed {_text(landed)}" if landed is not None else ""
        example = f"newest event {_text(newest)}{landing}: {age:.1f} h before {_text(at)}, over {hours:g} h"
        return Outcome(expectation, 1, int(stale), (example,) if stale else ())

    def _family_freshness(self, store, settings: FeedSettings, at: dt.datetime):
        """`feed_is_fresh:<family>` for the families given hours of their own (one filtered read
        by the table store: no Spark job on delta-rs)."""
        wanted = settings.family_hours
        if not wanted:
            return []
        rows = store.read_rows(
            self.table,
            ["source", "family", "newest_event_time", "newest_landed_at"],
            selections=[[In("family", sorted({f for _, f, _ in wanted}))]],
        )
        newest: dict[tuple, tuple] = {}
        for r in rows:
            event, landed = newest.get((r["source"], r["family"]), (None, None))
            newest[(r["source"], r["family"])] = (
                _latest(event, _as_utc(r["newest_event_time"])),
                _latest(landed, _as_utc(r["newest_landed_at"])),
            )
        outcomes = []
        for source, family, hours in wanted:
            event, landed = newest.get((source, family), (None, None))
            outcomes.append((source, self._fresh(settings, family, hours, event, landed, at)))
        return outcomes

    def _volume(self, store, settings: FeedSettings, at: dt.datetime):
        """`feed_volume_near_baseline:<family>` for yesterday's rows whose baseline is large
        enough (one read of yesterday's rows)."""
        yesterday = at.astimezone(dt.timezone.utc).date() - dt.timedelta(days=1)
        rows = store.read_rows(
            self.table,
            ["source", "family", "events", "baseline_events", "ratio"],
            selections=[[In("event_date", [yesterday])]],
        )
        judged = [
            r
            for r in rows
            if r["baseline_events"] is not None and r["baseline_events"] >= settings.volume_min_baseline
        ]
        outcomes = []
        for r in sorted(judged, key=lambda r: (r["source"], r["family"])):
            expectation = Expectation(
                f"{NEAR_BASELINE}:{r['family']}",
                BETWEEN,
                {"column": "ratio", "min_value": settings.volume_min_ratio},
                settings.severity,
            )
            low = r["ratio"] is None or r["ratio"] < settings.volume_min_ratio
            example = (
                f"{yesterday.isoformat()}: {r['events']} events, baseline {r['baseline_events']:g} "
                f"(ratio {r['ratio'] or 0:.2f}, below {settings.volume_min_ratio:g})"
            )
            outcomes.append((r["source"], Outcome(expectation, 1, int(low), (example,) if low else ())))
        return outcomes
