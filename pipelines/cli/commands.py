"""`lakehouse`: run the pipeline, query it, generate data, report on quality, maintain tables.

`lakehouse-task --group KEY` (`task_main`) runs one group of the task graph
(`pipelines.core.task_groups`): it is the entry point of every task of the exported Databricks
job, which also passes it the landing and warehouse folders, the Unity Catalog catalog and
schema prefix, the profile and the engine; `--maintenance` is the job's last task.
"""

from __future__ import annotations

import argparse
import functools
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from pipelines.collectors.commands import add_commands as add_collector_commands
from pipelines.core.config import PROJECT_ROOT, Config, ConfigError, load_config
from pipelines.runtime.tuning import allocator
from pipelines.synthetic.arguments import add_arguments as generate_arguments


def _config(args: argparse.Namespace) -> Config:
    config = load_config(args.conf or None)  # an empty --conf (a bundle variable left unset): none
    config = config.with_overrides(
        landing=getattr(args, "landing", None),
        warehouse=getattr(args, "warehouse", None),
        profile=getattr(args, "profile", None),
        engine=getattr(args, "engine", None),
        catalog=getattr(args, "catalog", None),
        schema_prefix=getattr(args, "schema_prefix", None),
    )
    allocator.apply(config.profile.get("delta_rs_allocator"))  # before any command loads deltalake
    return config


def _run_and_summarize(
    config: Config,
    layers: tuple[str, ...],
    log_format: str,
    graph=None,
    spark=None,
    lock: bool = True,
    notes: dict[str, str] | None = None,
    compact: bool = True,
    session=None,
    in_sight=None,
) -> None:
    """One pipeline run, then its one-line summary."""
    from pipelines.orchestration.runner import run_pipeline

    summary = run_pipeline(
        config,
        layers,
        graph=graph,
        log_format=log_format,
        spark=spark,
        lock=lock,
        notes=notes,
        compact=compact,
        session=session,
        in_sight=in_sight,
    )
    print(
        f"done       run_id={summary.run_id}  bronze_rows={summary.total('rows_out', 'bronze')}  "
        f"silver_rows={summary.total('rows_out', 'silver')}  "
        f"quarantined={summary.total('rows_quarantined')}  "
        f"duplicates={summary.total('rows_duplicate', 'silver')}  seconds={summary.seconds:.1f}  "
        f"warehouse={config.warehouse}",
        flush=True,
    )


def _names(text: str) -> list[str]:
    """`a, b,,c` -> ["a", "b", "c"]: a comma-separated option's values."""
    return [name.strip() for name in text.split(",") if name.strip()]


@contextmanager
def _maintained_store(config: Config) -> Iterator:
    """The warehouse's store under the warehouse lock, for maintenance commands: no run writes
    beside them, and a busy warehouse sends them away with the same "in use" line."""
    from pipelines.orchestration.lock import warehouse_lock
    from pipelines.runtime.spark import get_spark
    from pipelines.store import open_configured_store

    if not config.warehouse.is_dir():
        raise FileNotFoundError(f"warehouse {config.warehouse} does not exist")
    with warehouse_lock(config.warehouse, config.section("run")["lock_timeout_seconds"]):
        yield open_configured_store(get_spark(config), config)


def _session_for_one_run(config: Config, layers: tuple[str, ...]):
    """(what starts the run's session, notes for the run's first line, the rows the run has in
    sight): a local profile's new JVM is tuned for this one run
    (`pipelines.runtime.tuning.for_local_run`, from the rows it has in sight), and started only
    if the run needs one; the rows are weighed once, for both."""
    from pipelines.runtime.spark import get_spark, uses_connect

    if config.profile.get("use_existing_session") or uses_connect(config):
        return (lambda: get_spark(config)), {}, None
    from pipelines.orchestration.weighing import rows_in_sight
    from pipelines.runtime import tuning

    in_sight = functools.cache(lambda: rows_in_sight(config, layers))
    local = tuning.for_local_run(config, in_sight)
    return (lambda: get_spark(config, local.java_options)), local.notes, in_sight


def _notify(config: Config, dry_run: bool = False, lock: bool = True, prog: str = "lakehouse notify") -> int:
    """Deliver the notices since the last run to every configured target (`pipelines.notifications`),
    under the warehouse lock (two runs at once would both send); 1 when a message failed."""
    from pipelines.notifications.run import notify
    from pipelines.notifications.settings import settings_from

    settings = settings_from(config)
    if not settings.enabled or not settings.targets:
        print(f"{prog}: notifications are off (notifications.enabled, notifications.targets)", flush=True)
        return 0
    if dry_run or not lock:
        from pipelines.runtime.spark import get_spark
        from pipelines.store import open_configured_store

        if not config.warehouse.is_dir():
            raise FileNotFoundError(f"warehouse {config.warehouse} does not exist")
        summary = notify(open_configured_store(get_spark(config), config), settings, dry_run=dry_run)
    else:
        with _maintained_store(config) as store:
            summary = notify(store, settings)
    if dry_run:
        return 0
    print(
        f"notified   messages_sent={summary.delivered}  messages_failed={summary.failed}  "
        f"new_targets={len(summary.baselines)}",
        flush=True,
    )
    if summary.failed:
        print(f"{prog}: {summary.failed} messages failed; the next run sends them again", file=sys.stderr)
        return 1
    return 0


def cmd_notify(args: argparse.Namespace) -> int:
    return _notify(_config(args), dry_run=args.dry_run)


def _notify_after_run(config: Config) -> None:
    """`notifications.after_run`: notify at the end of `lakehouse run`, whatever the run's outcome
    (a run stopped by a failed check has the failure to tell); a failed message waits for the
    next run and does not change the run's exit code."""
    if config.section("notifications")["after_run"]:
        _notify(config, prog="lakehouse run: notify")


def cmd_run(args: argparse.Namespace) -> int:
    config = _config(args)
    layers = tuple(_names(args.layers))
    if args.every is None:
        session, notes, in_sight = _session_for_one_run(config, layers)
        try:
            _run_and_summarize(
                config, layers, args.log_format, notes=notes, session=session, in_sight=in_sight
            )
        finally:
            _notify_after_run(config)
        return 0
    from pipelines.orchestration.lock import WarehouseLocked
    from pipelines.orchestration.schedule import run_every

    return run_every(
        args.every,
        lambda: _run_then_notify(config, layers, args.log_format),
        max_runs=args.max_runs,
        report=lambda line: print(f"lakehouse: {line}", file=sys.stderr, flush=True),
        is_locked=lambda exc: isinstance(exc, WarehouseLocked),
    )


def _run_then_notify(config: Config, layers: tuple[str, ...], log_format: str) -> None:
    try:
        _run_and_summarize(config, layers, log_format)
    finally:
        _notify_after_run(config)


def cmd_generate(args: argparse.Namespace) -> int:
    from pipelines.synthetic import generator as generate

    return generate.main(args) or 0


LEFTOVERS = "unfinished writes (_tmp, _staging)"


def cmd_vacuum(args: argparse.Namespace) -> int:
    """Under the warehouse lock, so files of a live run are never taken for a crash's leftovers."""
    from pipelines.ops.vacuum_schedule import VacuumRecord, now_ms
    from pipelines.quality import validation_documents

    verb = "would be removed" if args.dry_run else "removed"
    config = _config(args)
    days = config.section("maintenance")["validation_document_days"]
    if args.validation_document_days is not None:
        days = args.validation_document_days
    with _maintained_store(config) as store:
        record = VacuumRecord.load(store.warehouse)
        for table in store.tables():
            removed = store.vacuum(table, args.retention_hours, dry_run=args.dry_run)
            record.vacuumed(table, now_ms())
            print(f"{table}: {len(removed)} files {verb}")
        if not args.dry_run:
            record.save()  # the job's maintenance task then waits before vacuuming them again
        leftovers = store.vacuum_leftovers(args.retention_hours, dry_run=args.dry_run)
        print(f"{LEFTOVERS}: {len(leftovers)} folders {verb}")
        documents = validation_documents.remove_expired(store.warehouse, days, dry_run=args.dry_run)
        print(f"{validation_documents.LABEL}: {len(documents)} files {verb}")
    return 0


def cmd_optimize(args: argparse.Namespace) -> int:
    """Under the warehouse lock, like a run: a compaction commits beside no other writer."""
    from pipelines.ops.compaction import MB, CompactionPolicy, compact_tables, fragmented_tables

    config = _config(args)
    target = (
        args.target_file_mb * MB if args.target_file_mb else CompactionPolicy.from_config(config).target_bytes
    )
    with _maintained_store(config) as store:
        if not store.compacts:
            print(
                f"lakehouse optimize: the {store.engine_name} engine does not compact tables", file=sys.stderr
            )
            return 1
        tables = store.tables()
        if args.tables:
            wanted = _names(args.tables)
            unknown = sorted(set(wanted) - set(tables))
            if unknown:
                raise ConfigError(f"no such tables: {', '.join(unknown)}")
            tables = wanted
        if args.dry_run:
            found = fragmented_tables(store, tables, target)
            for table, small in found.items():
                print(f"{table}: {small} small files would be compacted")
            print(
                f"{len(found)} tables would be compacted, {len(tables) - len(found)} have nothing to compact"
            )
            return 0
        done = compact_tables(store, tables, target)
        for c in done:
            print(f"{c.table}: {c.files_removed} small files -> {c.files_added} ({c.seconds:.1f} s)")
        print(f"{len(done)} tables compacted, {len(tables) - len(done)} had nothing to compact")
    return 0


def cmd_sql(args: argparse.Namespace) -> int:
    from pipelines.query import script, statements

    config = _config(args)
    text = Path(args.file).read_text(encoding="utf-8") if args.file else args.query
    if text is not None:  # refuse before paying for a session
        found = statements.split_statements(text)
        if not found:
            print("lakehouse sql: no statement given", file=sys.stderr)
            return 2
        try:
            for number, tokens in enumerate(found, start=1):
                statements.check_read_only(tokens, number)
        except statements.ReadOnlyViolation as exc:
            print(f"lakehouse sql: refused: {exc}", file=sys.stderr)
            return 2
    with _query_session(config, args) as session:
        if text is None:
            return script.interactive(session, args.format, sys.stdin, sys.stdout, sys.stderr)
        return script.run_script(session, text, args.format, sys.stdout, sys.stderr)


def _query_session(config: Config, args: argparse.Namespace):
    """The session `lakehouse sql` runs statements on: `--engine`'s, or DuckDB where it answers
    alike and Spark SQL otherwise (Spark SQL alone where DuckDB cannot read the warehouse)."""
    from pipelines.query import engines

    version = args.as_of_version
    if args.query_engine == engines.DUCKDB:
        return engines.duckdb_session(config, "sql", version)
    if args.query_engine == engines.SPARK or engines.why_not_duckdb(config):
        return engines.spark_session(config, version)
    from pipelines.query.auto_session import AutoSession
    from pipelines.query.duckdb_session import DuckDbSession

    duck = DuckDbSession(engines.warehouse_folder(config), version)
    return AutoSession(duck, lambda: engines.spark_session(config, version))


def cmd_timeline(args: argparse.Namespace) -> int:
    from pipelines.query import engines
    from pipelines.query import timeline as timeline_api

    config = _config(args)
    start, end = timeline_api.parse_time(args.start), timeline_api.parse_time(args.end)
    engine = args.query_engine
    if engine == engines.AUTO:
        reason = engines.why_not_duckdb(config)
        engine = engines.SPARK if reason else engines.DUCKDB
        print(
            f"lakehouse timeline: note: answered by {'Spark SQL: ' + reason if reason else 'DuckDB'}",
            file=sys.stderr,
        )
    if engine == engines.DUCKDB:
        with engines.duckdb_session(config, "timeline") as session:
            rows = timeline_api.entity_change_rows(session, args.urn, args.category, start, end)
            result = timeline_api.transactions(rows)
    else:
        from pipelines.query.timeline_spark import entity_changes
        from pipelines.runtime.spark import get_spark
        from pipelines.store import open_configured_store

        engines.warehouse_folder(config)  # a missing warehouse is said in one line, before Spark starts
        store = open_configured_store(get_spark(config), config)
        changes = entity_changes(store.read(timeline_api.CHANGE_HISTORY), args.urn, args.category, start, end)
        result = timeline_api.transactions(changes.toLocalIterator())
    (timeline_api.print_json if args.format == "json" else timeline_api.print_table)(result, sys.stdout)
    return 0


def cmd_asof(args: argparse.Namespace) -> int:
    from gold.current_views import state_as_of_sql
    from pipelines.query import script
    from pipelines.query.timeline import parse_time

    config = _config(args)
    try:
        at = parse_time(args.at)
    except ValueError:
        print(f"lakehouse asof: --at {args.at!r} is not an ISO date or date-time", file=sys.stderr)
        return 2
    with _query_session(config, args) as session:
        sql = state_as_of_sql(at, args.entity)
        return script.run_script(session, sql, args.format, sys.stdout, sys.stderr, prog="lakehouse asof")


def _pinned_versions(given: str | None) -> dict[str, int] | None:
    """The table versions of `--versions-from`: an earlier pack's folder or its versions.json."""
    import json

    if not given:
        return None
    path = Path(given)
    path = path / "versions.json" if path.is_dir() else path
    try:
        tables = json.loads(path.read_text(encoding="utf-8"))["tables"]
        return {str(name): int(version) for name, version in tables.items()}
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ConfigError(f"--versions-from {given}: not a pack's versions.json ({exc})") from None


def cmd_evidence(args: argparse.Namespace) -> int:
    """Build an evidence pack (`pipelines.evidence`), or check one (`evidence verify DIR`)."""
    if args.evidence_action == "verify":
        return cmd_evidence_verify(args)
    from pipelines.evidence.pack import PackError, build_pack
    from pipelines.evidence.provenance import code_version, rules_in_force
    from pipelines.evidence.scope import Scope, ScopeError

    missing = [
        option
        for option, value in (("--from", args.start), ("--to", args.end), ("--out", args.out))
        if not value
    ]
    if missing:
        print(
            f"lakehouse evidence: {', '.join(missing)} required (or: lakehouse evidence verify DIR)",
            file=sys.stderr,
        )
        return 2
    try:
        scope = Scope.parse(args.start, args.end, args.actor, args.entity, args.source_catalog)
    except ScopeError as exc:
        print(f"lakehouse evidence: {exc}", file=sys.stderr)
        return 2
    config = _config(args)
    versions = _pinned_versions(args.versions_from)
    if not config.warehouse.is_dir():
        raise FileNotFoundError(f"warehouse {config.warehouse} does not exist")
    from pipelines.runtime.spark import get_spark
    from pipelines.store import open_configured_store

    store = open_configured_store(get_spark(config), config)
    try:
        pack = build_pack(store, scope, args.out, rules_in_force(config, args.conf), code_version(), versions)
    except PackError as exc:
        print(f"lakehouse evidence: {exc}", file=sys.stderr)
        return 1
    print(
        f"evidence pack {pack.folder}: {pack.changes} changes, {pack.records} raw records"
        + (f", {pack.untraced} changes without their raw record" if pack.untraced else "")
    )
    return 0


def cmd_evidence_verify(args: argparse.Namespace) -> int:
    """Every file against the pack's manifest; one line per problem, exit 1 when any."""
    from pipelines.evidence.manifest import pack_files, verify

    folder = Path(args.pack)
    if not folder.is_dir():
        print(f"lakehouse evidence verify: {folder} is not a folder", file=sys.stderr)
        return 2
    problems = verify(folder)
    for problem in problems:
        print(problem.line())
    if problems:
        print(
            f"lakehouse evidence verify: {folder}: {len(problems)} files do not match the manifest",
            file=sys.stderr,
        )
        return 1
    print(f"pack {folder} verified: {len(pack_files(folder))} files match the manifest")
    return 0


def cmd_dq_report(args: argparse.Namespace) -> int:
    from pipelines.quality.governance_report import FILE_NAME, write_governance_report
    from pipelines.quality.report import write_report
    from pipelines.runtime.spark import get_spark
    from pipelines.store import open_configured_store

    config = _config(args)
    store = open_configured_store(get_spark(config), config)
    bronze_tables = {name: source["bronze_table"] for name, source in config.sources.items()}
    dq_report = write_report(store, Path(args.out) if args.out else None, bronze_tables, args.runs)
    print(dq_report)
    print(write_governance_report(store, dq_report.parent / FILE_NAME))
    return 0


def cmd_bundle(args: argparse.Namespace) -> int:
    from pipelines import deploy

    config = load_config(args.conf)
    root = Path(args.out) if args.out else PROJECT_ROOT
    if args.check:
        problems = deploy.check(root, config=config)
        for problem in problems:
            print(f"lakehouse bundle: {problem}", file=sys.stderr)
        if not problems:
            print(f"bundle under {root} is current and valid")
            # current: the committed files are a fresh export's
            from pipelines.core.graph import load_graph
            from pipelines.deploy.bundle import bundle_documents

            for grant in deploy.grants_to_give(bundle_documents(load_graph(), config)):
                print(grant)
        return 1 if problems else 0
    for path in deploy.export(root, config=config):
        print(path)
    return 0


def _interval(text: str) -> int:
    from pipelines.orchestration.schedule import parse_interval

    try:
        return parse_interval(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _count(minimum: int) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"{text} must be at least {minimum}")
        return value

    return parse


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="lakehouse", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)

    def common(p: argparse.ArgumentParser, landing: bool = False) -> None:
        p.add_argument("--conf", help="YAML file merged over conf/lakehouse.yaml")
        p.add_argument("--warehouse", help="warehouse folder (default from conf)")
        if landing:
            p.add_argument("--landing", help="landing folder (default from conf)")

    def query_engine(p: argparse.ArgumentParser) -> None:
        # not `engine`: that name overrides the table engine (storage.engine) in `_config`
        p.add_argument(
            "--engine",
            dest="query_engine",
            choices=("spark", "duckdb"),
            default="auto",
            help="force one query engine: spark (Spark SQL) or duckdb (DuckDB's dialect, no JVM); "
            "default: DuckDB on a local warehouse where it answers as Spark SQL does, else Spark SQL",
        )

    run = sub.add_parser("run", help="run the jobs in dependency order, incrementally")
    common(run, landing=True)
    run.add_argument(
        "--layers", default="bronze,silver,gold", help="comma-separated subset of bronze,silver,gold"
    )
    run.add_argument("--log-format", choices=("text", "json"), default="text")
    run.add_argument(
        "--every", type=_interval, metavar="INTERVAL", help="run again on every tick, e.g. 30s, 15m, 1h"
    )
    run.add_argument("--max-runs", type=_count(1), metavar="N", help="with --every: stop after N runs")
    run.set_defaults(func=cmd_run)

    sql = sub.add_parser(
        "sql", help="read-only Spark SQL over bronze.*, silver.*, gold.*, ops.* (DuckDB answers where it can)"
    )
    common(sql)
    sql.add_argument("query", nargs="?", help="statements separated by ';' (none: interactive prompt)")
    sql.add_argument("-f", "--file", help="read the statements from FILE")
    sql.add_argument("--format", choices=("table", "csv", "json"), default="table")
    sql.add_argument("--as-of-version", type=_count(0), metavar="N", help="read every table at version N")
    query_engine(sql)
    sql.set_defaults(func=cmd_sql)

    timeline = sub.add_parser(
        "timeline", help="one entity's change history, shaped like DataHub's Timeline API"
    )
    common(timeline)
    timeline.add_argument("urn", help="the entity (a DataHub urn, an OpenMetadata or DataWorks entity key)")
    timeline.add_argument("--category", action="append", default=[], help="only this category (repeatable)")
    timeline.add_argument("--start", help="from this ISO date-time (inclusive, UTC unless given)")
    timeline.add_argument("--end", help="until this ISO date-time (exclusive)")
    timeline.add_argument("--format", choices=("json", "table"), default="json")
    query_engine(timeline)
    timeline.set_defaults(func=cmd_timeline)

    asof = sub.add_parser(
        "asof",
        help="every entity's (or one entity's) status, domain, owners, glossary terms and tags at a time",
    )
    common(asof)
    asof.add_argument("--at", required=True, help="the ISO date or date-time (UTC unless given)")
    asof.add_argument("--entity", help="only this entity (and its schema fields)")
    asof.add_argument("--format", choices=("table", "csv", "json"), default="table")
    asof.set_defaults(func=cmd_asof, as_of_version=None)
    query_engine(asof)

    report = sub.add_parser(
        "dq-report",
        help="write the data-quality report and the governance report (HTML) and print their paths",
    )
    common(report)
    report.add_argument(
        "--out",
        help="the data-quality report's HTML file (default <warehouse>/reports/dq_report.html); "
        "the governance report goes beside it, as governance_report.html",
    )
    report.add_argument("--runs", type=_count(1), default=10, help="runs shown per table (default 10)")
    report.set_defaults(func=cmd_dq_report)

    evidence = sub.add_parser(
        "evidence",
        help="write an evidence pack (changes in scope, their raw records, versions, rules, code); "
        "`evidence verify DIR` checks one",
    )
    common(evidence)
    evidence.add_argument("--from", dest="start", help="ISO date or date-time, inclusive (UTC unless given)")
    evidence.add_argument("--to", dest="end", help="ISO date or date-time, exclusive")
    evidence.add_argument("--actor", help="only changes by this actor (as the catalog names it)")
    evidence.add_argument("--entity", help="only changes of this entity and of its fields")
    evidence.add_argument(
        "--catalog",
        dest="source_catalog",
        choices=("datahub", "openmetadata", "dataworks"),
        help="only changes from this catalog",
    )
    evidence.add_argument("--out", help="the pack's folder (new or empty)")
    evidence.add_argument(
        "--versions-from",
        metavar="PACK",
        help="read each table at the version an earlier pack names (its folder or versions.json)",
    )
    evidence_actions = evidence.add_subparsers(dest="evidence_action")
    verify = evidence_actions.add_parser("verify", help="check every file of a pack against its manifest")
    verify.add_argument("pack", help="the pack's folder")
    evidence.set_defaults(func=cmd_evidence)

    bundle = sub.add_parser("bundle", help="export conf/jobs.yaml as a Databricks Asset Bundle")
    bundle.add_argument("--conf", help="YAML file merged over conf/lakehouse.yaml")
    bundle.add_argument("--out", help="bundle root (default: the project folder)")
    bundle.add_argument(
        "--check", action="store_true", help="validate the files under --out instead of writing them"
    )
    bundle.set_defaults(func=cmd_bundle)

    gen = sub.add_parser("generate", help="synthetic landing data for all four sources")
    generate_arguments(gen)  # the generator itself loads only when the command runs
    gen.set_defaults(func=cmd_generate)

    vac = sub.add_parser(
        "vacuum",
        help="delete data files no table version within the retention needs and unfinished writes' leftovers",
    )
    common(vac)
    vac.add_argument("--retention-hours", type=float, default=168.0)
    vac.add_argument(
        "--validation-document-days",
        type=_count(0),
        metavar="DAYS",
        help="delete GX validation documents older than this, each table's newest kept; 0 keeps all "
        "(default: maintenance.validation_document_days)",
    )
    vac.add_argument("--dry-run", action="store_true")
    vac.set_defaults(func=cmd_vacuum)

    opt = sub.add_parser("optimize", help="compact each table's small files (data and versions unchanged)")
    common(opt)
    opt.add_argument(
        "--tables", help="comma-separated tables, e.g. bronze.datahub_entity_change_events (default: all)"
    )
    opt.add_argument(
        "--target-file-mb",
        type=_count(1),
        metavar="MB",
        help="compacted file size; smaller files are merged (default maintenance.compact_target_file_mb)",
    )
    opt.add_argument("--dry-run", action="store_true", help="list the tables that would be compacted")
    opt.set_defaults(func=cmd_optimize)

    notify = sub.add_parser(
        "notify",
        help="send violations opened and resolved, failed checks and stale feeds to the configured targets, once",
    )
    common(notify)
    notify.add_argument(
        "--dry-run", action="store_true", help="print what would be sent; send and record nothing"
    )
    notify.set_defaults(func=cmd_notify)

    add_collector_commands(sub)  # collect, receive
    return parser


def _guarded(func: Callable[[argparse.Namespace], int], args: argparse.Namespace) -> int:
    """Known failures as one line on stderr and a non-zero exit; anything else is a bug and raises."""
    try:
        return func(args)
    except ConfigError as exc:
        print(f"lakehouse: config error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("lakehouse: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:
        from pipelines.orchestration.lock import WarehouseLocked
        from pipelines.orchestration.runner import RunFailed
        from pipelines.runtime.spark import DeltaJarsUnavailable
        from pipelines.store.catalog_access import CatalogUnusable

        if isinstance(
            exc, (RunFailed, FileNotFoundError, WarehouseLocked, DeltaJarsUnavailable, CatalogUnusable)
        ):
            print(f"lakehouse: {exc}", file=sys.stderr)
            return 1
        raise


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "max_runs", None) is not None and args.every is None:
        parser.error("--max-runs needs --every")
    return _guarded(args.func, args)


# -- lakehouse-task -------------------------------------------------------------


def cmd_task(args: argparse.Namespace) -> int:
    """One task of the Databricks job: a group of tables (`--group`), one table (`--task`), or
    the maintenance step (`--maintenance`). Upstream tasks are the Jobs service's to order: the
    tables run alone, their dependencies on other tasks taken as met, and leave compaction to
    the maintenance step, which runs after every group."""
    from pipelines.core.graph import load_graph
    from pipelines.core.task_groups import group_graph

    config = _config(args)
    if args.profile is None and os.environ.get("DATABRICKS_RUNTIME_VERSION"):
        config = config.with_overrides(profile="databricks")  # on a cluster: its session
    _check_catalog(config)
    if args.ip_salt_secret:
        from pipelines.runtime.secrets import salt_from_secret

        salt_from_secret(config.section("privacy")["ip_salt_env"], args.ip_salt_secret)
    on_cluster = bool(config.profile.get("use_existing_session"))
    if args.notify:
        code = _notify(config, lock=not on_cluster, prog="lakehouse-task --notify")
        return code
    if args.maintenance:
        from pipelines.orchestration.maintenance import run_maintenance

        run_maintenance(config, log_format=args.log_format)
        return 0
    graph = load_graph()
    part = group_graph(graph, args.group) if args.group else graph.only([args.task])
    layers = tuple(dict.fromkeys(t.layer for t in part.ordered()))
    # a task of the Databricks job: the Jobs service runs one run of the job at a time
    _run_and_summarize(config, layers, args.log_format, graph=part, lock=not on_cluster, compact=False)
    return 0


def _check_catalog(config: Config) -> None:
    """First of all, with a Unity Catalog catalog (the bundle's tasks: `--catalog`, delta-spark):
    stop with the grant to give when this identity may not use it, before anything else fails
    for want of it."""
    catalog = config.section("storage").get("catalog")
    if catalog and config.engine != "delta-rs":
        from pipelines.runtime.spark import get_spark
        from pipelines.store.catalog_access import check_catalog

        check_catalog(get_spark(config), catalog)


def task_main(argv: list[str] | None = None) -> int:
    """`lakehouse-task (--group KEY | --task KEY | --maintenance) [--conf FILE] [--landing DIR]
    [--warehouse DIR] [--catalog NAME] [--schema-prefix PREFIX] [--profile NAME] [--engine ENGINE]
    [--ip-salt-secret SCOPE/KEY]`: run part of conf/jobs.yaml as a task of the Databricks job.

    Returns 0; a failure raises SystemExit with its exit code, as a refused option does. The
    Databricks Jobs service calls a wheel task's entry point as a function and fails the task
    only when the call raises: a returned code would let a failed task pass."""
    from pipelines.deploy.task_parameters import task_parser

    code = _guarded(cmd_task, task_parser().parse_args(argv))
    if code:
        raise SystemExit(code)
    return 0
