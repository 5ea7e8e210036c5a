"""`lakehouse`: run the pipeline, query it, generate data, report on quality, maintain tables."""

from __future__ import annotations

import argparse
import sys

from pipelines.config import ConfigError, load_config


def _config(args: argparse.Namespace):
    config = load_config(args.conf)
    return config.with_overrides(
        landing=getattr(args, "landing", None), warehouse=getattr(args, "warehouse", None)
    )


def cmd_run(args: argparse.Namespace) -> int:
    from pipelines.runner import run_pipeline

    config = _config(args)
    layers = tuple(layer.strip() for layer in args.layers.split(",") if layer.strip())
    summary = run_pipeline(config, layers, log_format=args.log_format)
    quarantined = summary.total("rows_quarantined")
    print(
        f"done       run_id={summary.run_id}  bronze_rows={summary.total('rows_out', 'bronze')}  "
        f"silver_rows={summary.total('rows_out', 'silver')}  quarantined={quarantined}  "
        f"duplicates={summary.total('rows_duplicate', 'silver')}  seconds={summary.seconds:.1f}  "
        f"warehouse={config.warehouse}"
    )
    return 0


def cmd_generate(args: argparse.Namespace) -> int:
    from pipelines import generate

    return generate.main(args) or 0


def cmd_vacuum(args: argparse.Namespace) -> int:
    from pipelines.spark import get_spark
    from pipelines.store import open_store

    config = _config(args)
    store = open_store(get_spark(config), config.warehouse, config.engine)
    for table in store.tables():
        removed = store.vacuum(table, args.retention_hours, dry_run=args.dry_run)
        print(f"{table}: {len(removed)} files {'would be ' if args.dry_run else ''}removed")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="lakehouse", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    def common(p: argparse.ArgumentParser, landing: bool = False) -> None:
        p.add_argument("--conf", help="YAML file merged over conf/lakehouse.yaml")
        p.add_argument("--warehouse", help="warehouse folder (default from conf)")
        if landing:
            p.add_argument("--landing", help="landing folder (default from conf)")

    run = sub.add_parser("run", help="run the jobs in dependency order, incrementally")
    common(run, landing=True)
    run.add_argument(
        "--layers", default="bronze,silver,gold", help="comma-separated subset of bronze,silver,gold"
    )
    run.add_argument("--log-format", choices=("text", "json"), default="text")
    run.set_defaults(func=cmd_run)

    gen = sub.add_parser("generate", help="synthetic landing data for all four sources")
    gen.add_argument("--out", required=True)
    gen.add_argument("--events", type=int, required=True)
    gen.add_argument("--seed", type=int, default=0)
    gen.set_defaults(func=cmd_generate)

    vac = sub.add_parser("vacuum", help="delete data files no table version within the retention needs")
    common(vac)
    vac.add_argument("--retention-hours", type=float, default=168.0)
    vac.add_argument("--dry-run", action="store_true")
    vac.set_defaults(func=cmd_vacuum)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except ConfigError as exc:
        print(f"lakehouse: config error: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:
        from pipelines.runner import RunFailed

        from pipelines.lock import WarehouseLocked

        if isinstance(exc, (RunFailed, FileNotFoundError, WarehouseLocked)):
            print(f"lakehouse: {exc}", file=sys.stderr)
            return 1
        raise


if __name__ == "__main__":
    sys.exit(main())
