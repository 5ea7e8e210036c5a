"""`lakehouse collect datahub-audit`, `collect datahub-kafka`, `collect openmetadata` and `lakehouse
receive`: options and handlers.

`add_commands(subparsers)` is the whole hook into the CLI; `add_pull_commands` adds the two
pulls alone, which `lakehouse-collect` (a collect task of the Databricks job) runs with the same
options. Each handler returns an exit code and reports a known failure in one line on stderr
(`lakehouse collect: ...`). A pull's token is read from the environment variable its settings
name (`token_env`); `--token-secret SCOPE/KEY` fills that variable from a Databricks secret
first, as `lakehouse-task --ip-salt-secret` does for the IP salt (`pipelines.runtime.secrets`).
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import sys
import time
from pathlib import Path

from pipelines.core.config import Config, ConfigError, load_config

AUDIT_SOURCE = "datahub_audit"
ECE_SOURCE = "datahub_ece"
OPENMETADATA_SOURCE = "openmetadata"


def _config(args: argparse.Namespace) -> Config:
    return load_config(args.conf or None)


def _moment(text: str) -> dt.datetime:
    from pipelines.collectors.datahub_audit import parse_moment

    try:
        return parse_moment(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _interval(text: str) -> int:
    from pipelines.orchestration.schedule import parse_interval

    try:
        return parse_interval(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text} must be at least 1")
    return value


def _stderr(prefix: str):
    return lambda line: print(f"{prefix}: {line}", file=sys.stderr, flush=True)


# settings that may be 0; every other number must be positive
MAY_BE_ZERO = {"settle_seconds", "backoff_seconds", "port"}


def _checked(section: dict, where: str) -> dict:
    """The section, its numbers checked: a one-line config error names the key at fault."""
    for key, value in section.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            continue
        if value < 0 or (value == 0 and key not in MAY_BE_ZERO):
            least = "0 or more" if key in MAY_BE_ZERO else "more than 0"
            raise ConfigError(f"{where}.{key} must be {least}, got {value!r}")
    return section


def _source_folder(config: Config, source: str) -> str:
    return config.sources[source]["folder"]


def _token_from_secret(args: argparse.Namespace, token_env: str, what: str) -> None:
    """With `--token-secret`, the token into `token_env` from the Databricks secret (unless the
    variable is set already); a secret that cannot be read raises ConfigError."""
    if args.token_secret:
        from pipelines.runtime.secrets import secret_into_env

        secret_into_env(token_env, args.token_secret, what)


def cmd_collect_datahub_audit(args: argparse.Namespace) -> int:
    from pipelines.collectors.collector_state import StateError
    from pipelines.collectors.datahub_audit import (
        AccessRefused,
        AuditSettings,
        CollectError,
        DataHubAuditCollector,
        iso,
    )
    from pipelines.orchestration.schedule import next_tick

    report = _stderr("lakehouse collect")
    try:
        config = _config(args)
    except ConfigError as exc:
        report(f"config error: {exc}")
        return 2
    section = dict(config.section("collectors")["datahub_audit"])
    if args.page_size:
        section["page_size"] = args.page_size
    if args.token_env:
        section["token_env"] = args.token_env
    try:
        settings = AuditSettings.from_section(_checked(section, "collectors.datahub_audit"))
        _token_from_secret(args, settings.token_env, "the DataHub token")
    except ConfigError as exc:
        report(f"config error: {exc}")
        return 2
    event_types = [t.strip() for t in (args.event_types or "").split(",") if t.strip()]
    collector = DataHubAuditCollector(
        server=args.server,
        landing=Path(args.landing).expanduser().resolve(),
        folder_name=_source_folder(config, AUDIT_SOURCE),
        settings=settings,
        token=os.environ.get(settings.token_env) or None,
        event_types=event_types,
        report=report,
    )
    failures = 0
    try:
        while True:
            try:
                summary = collector.collect(since=args.since, until=args.until)
            except AccessRefused as exc:
                report(str(exc))
                return 1
            except (CollectError, StateError, OSError) as exc:
                failures += 1
                report(str(exc).splitlines()[0])
                if args.every is None:
                    return 1
            else:
                until = iso(summary.collected_until_ms) if summary.collected_until_ms is not None else "-"
                print(
                    f"collected  pages={summary.pages}  events={summary.events}  windows={summary.windows}  "
                    f"splits={summary.splits}  recovered_pages={summary.recovered}  until={until}  "
                    f"folder={collector.folder}",
                    flush=True,
                )
            if args.every is None:
                return 0
            wake = next_tick(time.time(), args.every)
            time.sleep(max(0.0, wake - time.time()))
    except KeyboardInterrupt:
        report("stopped")
        return 130 if failures == 0 else 1


def cmd_collect_openmetadata(args: argparse.Namespace) -> int:
    from pipelines.collectors.openmetadata import OpenMetadataPull, OpenMetadataSettings
    from pipelines.collectors.openmetadata_state import StateError
    from pipelines.collectors.retrying_http import AccessRefused, PullError
    from pipelines.orchestration.schedule import next_tick

    report = _stderr("lakehouse collect")
    try:
        config = _config(args)
        section = dict(config.section("collectors")["openmetadata"])
        if args.token_env:
            section["token_env"] = args.token_env
        settings = OpenMetadataSettings.from_section(_checked(section, "collectors.openmetadata"))
        _token_from_secret(args, settings.token_env, "the OpenMetadata token")
    except ConfigError as exc:
        report(f"config error: {exc}")
        return 2
    pull = OpenMetadataPull(
        server=args.server,
        landing=Path(args.landing).expanduser().resolve(),
        folder_name=_source_folder(config, OPENMETADATA_SOURCE),
        settings=settings,
        token=os.environ.get(settings.token_env) or None,
        subscriptions=[name for name in args.subscription or [] if name],  # an empty one: none
        report=report,
    )
    failures = 0
    try:
        while True:
            try:
                summary = pull.collect(since=args.since)
            except AccessRefused as exc:
                report(str(exc))
                return 1
            except (PullError, StateError, OSError) as exc:
                failures += 1
                report(str(exc).splitlines()[0])
                if args.every is None:
                    return 1
            else:
                print(f"{summary.line()}  folder={pull.folder}", flush=True)
            if args.every is None:
                return 0
            wake = next_tick(time.time(), args.every)
            time.sleep(max(0.0, wake - time.time()))
    except KeyboardInterrupt:
        report("stopped")
        return 130 if failures == 0 else 1


def cmd_collect_datahub_kafka(args: argparse.Namespace) -> int:
    import signal

    try:
        from pipelines.collectors.datahub_kafka import DataHubKafkaCollector, KafkaCollectError, KafkaSettings
    except ImportError as exc:
        print(
            f"lakehouse collect: {exc.name} is not installed: pip install 'catalog-lakehouse[kafka]'",
            file=sys.stderr,
        )
        return 2
    report = _stderr("lakehouse collect")
    try:
        config = _config(args)
        section = dict(config.section("collectors")["datahub_kafka"])
        if args.topic:
            section["topic"] = args.topic
        if args.group_id:
            section["group_id"] = args.group_id
        settings = KafkaSettings.from_section(_checked(section, "collectors.datahub_kafka"))
    except ConfigError as exc:
        report(f"config error: {exc}")
        return 2
    collector = DataHubKafkaCollector(
        bootstrap_servers=args.bootstrap_servers,
        landing=Path(args.landing).expanduser().resolve(),
        folder_name=_source_folder(config, ECE_SOURCE),
        settings=settings,
        schema_registry=args.schema_registry,
        report=report,
    )
    stopping: list[int] = []
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda number, frame: stopping.append(number))
    print(
        f"consuming {settings.topic} from {args.bootstrap_servers} as group {settings.group_id}  "
        f"folder={collector.folder}",
        flush=True,
    )
    try:
        summary = collector.run(stop=lambda summary: bool(stopping))
    except KafkaCollectError as exc:
        report(str(exc).splitlines()[0])
        print(collector.summary.line(), flush=True)
        return 1
    print(summary.line(), flush=True)
    return 0


def cmd_receive(args: argparse.Namespace) -> int:
    from pipelines.collectors.receiver import ROUTES, ReceiverSettings, run_receiver

    report = _stderr("lakehouse receive")
    try:
        config = _config(args)
    except ConfigError as exc:
        report(f"config error: {exc}")
        return 2
    section = dict(config.section("collectors")["receiver"])
    if args.host:
        section["host"] = args.host
    if args.port is not None:
        section["port"] = args.port
    try:
        settings = ReceiverSettings.from_section(_checked(section, "collectors.receiver"))
    except ConfigError as exc:
        report(f"config error: {exc}")
        return 2
    landing = Path(args.landing).expanduser().resolve() if args.landing else config.landing
    folders = {source: _source_folder(config, source) for source in ROUTES.values()}
    try:
        return run_receiver(landing, folders, settings, lambda line: print(line, flush=True))
    except OSError as exc:
        report(f"cannot serve on {settings.host}:{settings.port}: {exc.strerror or exc}")
        return 1


def _port(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"{text} is not a port number (0-65535; 0: any free port)")
    return value


def _token_secret(parser: argparse.ArgumentParser, variable: str) -> None:
    from pipelines.runtime.secrets import secret_reference

    parser.add_argument(
        "--token-secret",
        type=secret_reference,
        metavar="SCOPE/KEY",
        help=f"a Databricks secret holding the token, read into the token variable ({variable} "
        "unless --token-env names another) when that is unset; needs the databricks-sdk package",
    )


def add_commands(subparsers: argparse._SubParsersAction) -> None:
    """Add `collect` and `receive` to the `lakehouse` command's subparsers."""
    collect = subparsers.add_parser("collect", help="pull events from a catalog's API into landing")
    sources = collect.add_subparsers(dest="collect_source", required=True)
    add_pull_commands(sources)
    _add_kafka_command(sources)
    _add_receive_command(subparsers)


def add_pull_commands(sources: argparse._SubParsersAction) -> None:
    """Add the pulls, `datahub-audit` and `openmetadata`, to the subparsers of `collect` (or of
    `lakehouse-collect`)."""
    audit = sources.add_parser(
        "datahub-audit",
        help="page DataHub's Audit Events Search API into <landing>/datahub_audit/, resumably",
    )
    audit.add_argument("--server", required=True, help="DataHub GMS base URL, e.g. http://datahub-gms:8080")
    audit.add_argument("--landing", required=True, help="landing folder")
    audit.add_argument("--conf", help="YAML file merged over conf/lakehouse.yaml")
    audit.add_argument(
        "--token-env",
        metavar="NAME",
        help="environment variable with the bearer token (default DATAHUB_TOKEN)",
    )
    _token_secret(audit, "DATAHUB_TOKEN")
    audit.add_argument(
        "--since", type=_moment, metavar="ISO", help="start of the first collection (default: a day ago)"
    )
    audit.add_argument(
        "--until", type=_moment, metavar="ISO", help="collect up to this moment (default: now)"
    )
    audit.add_argument("--page-size", type=_positive, metavar="N", help="events per page (default from conf)")
    audit.add_argument("--event-types", metavar="T,...", help="only these event types (default: all)")
    audit.add_argument(
        "--every", type=_interval, metavar="INTERVAL", help="collect again on every tick, e.g. 15m"
    )
    audit.set_defaults(func=cmd_collect_datahub_audit)

    openmetadata = sources.add_parser(
        "openmetadata",
        help="pull the OpenMetadata change events the receiver missed into <landing>/openmetadata/, resumably",
    )
    openmetadata.add_argument(
        "--server", required=True, help="OpenMetadata base URL, e.g. http://openmetadata:8585"
    )
    openmetadata.add_argument("--landing", required=True, help="landing folder")
    openmetadata.add_argument("--conf", help="YAML file merged over conf/lakehouse.yaml")
    openmetadata.add_argument(
        "--token-env",
        metavar="NAME",
        help="environment variable with the bot's JWT (default OPENMETADATA_TOKEN)",
    )
    _token_secret(openmetadata, "OPENMETADATA_TOKEN")
    openmetadata.add_argument(
        "--since", type=_moment, metavar="ISO", help="start of the first pull (default: a day ago)"
    )
    openmetadata.add_argument(
        "--subscription",
        action="append",
        metavar="NAME",
        help="also land this alert's failed deliveries (repeatable; servers with the failed-events API; "
        "an empty name is none)",
    )
    openmetadata.add_argument(
        "--every", type=_interval, metavar="INTERVAL", help="pull again on every tick, e.g. 15m"
    )
    openmetadata.set_defaults(func=cmd_collect_openmetadata)


def _add_kafka_command(sources: argparse._SubParsersAction) -> None:
    kafka = sources.add_parser(
        "datahub-kafka",
        help="consume DataHub's PlatformEvent_v1 topic into <landing>/datahub_ece/, committing after landing",
    )
    kafka.add_argument(
        "--bootstrap-servers", required=True, metavar="HOSTS", help="Kafka brokers, host:port,..."
    )
    kafka.add_argument("--landing", required=True, help="landing folder")
    kafka.add_argument("--topic", help="topic (default collectors.datahub_kafka.topic, PlatformEvent_v1)")
    kafka.add_argument(
        "--schema-registry", metavar="URL", help="schema registry base URL (default: DataHub's own schema)"
    )
    kafka.add_argument("--group-id", metavar="ID", help="consumer group (default catalog-lakehouse)")
    kafka.add_argument("--conf", help="YAML file merged over conf/lakehouse.yaml")
    kafka.set_defaults(func=cmd_collect_datahub_kafka)


def _add_receive_command(subparsers: argparse._SubParsersAction) -> None:
    receive = subparsers.add_parser(
        "receive", help="HTTP receiver for OpenMetadata, DataWorks and DataHub events, landing each durably"
    )
    receive.add_argument("--landing", help="landing folder (default from conf)")
    receive.add_argument("--host", help="address to listen on (default collectors.receiver.host, 127.0.0.1)")
    receive.add_argument(
        "--port", type=_port, help="port (default collectors.receiver.port; 0: any free port)"
    )
    receive.add_argument("--conf", help="YAML file merged over conf/lakehouse.yaml")
    receive.set_defaults(func=cmd_receive)
