"""`lakehouse-collect`: one pull of a catch-up collector, as a collect task of the Databricks job.

The job's collect tasks (`pipelines.deploy.collect_tasks`) start this entry point from the wheel
with `lakehouse collect`'s own options, so a task pulls exactly as the command does. Two things
differ, because the Jobs service calls it:
- a failure is raised: the service calls a wheel task's entry point as a function and fails the
  task only when the call raises, so a returned code would let a failed pull pass;
- an empty `--server` (its bundle variable left unset: a workspace without that catalog) is a
  pull with nothing to do, which succeeds saying so, rather than a deploy that fails every run
  until the variable is set. The bundle check makes sure the job passes the variable.
"""

from __future__ import annotations


def collect_main(argv: list[str] | None = None) -> int:
    """`lakehouse-collect (openmetadata | datahub-audit) --server URL --landing DIR [--conf FILE]
    [--token-secret SCOPE/KEY] [...]`: `lakehouse collect`'s pull, once. Returns 0; a failure
    raises SystemExit with its exit code, as a refused option does."""
    from pipelines.deploy.collect_tasks import COLLECTORS
    from pipelines.deploy.task_parameters import parse_collect_task

    args = parse_collect_task(argv)
    if not args.server.strip():
        variable = COLLECTORS[args.collect_source].server_variable
        print(
            f"lakehouse-collect: {args.collect_source}: no server given (bundle variable {variable} "
            "is empty): nothing pulled",
            flush=True,
        )
        return 0
    code = args.func(args)
    if code:
        raise SystemExit(code)
    return 0
