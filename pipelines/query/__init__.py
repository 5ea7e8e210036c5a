"""Reading a warehouse: `lakehouse sql` (read-only SQL over every table as `<layer>.<table>`) and
`lakehouse timeline` (one entity's history in the shape of DataHub's Timeline API).

One module per job: `statements` (tokens, the read-only check), `names` (the tables and views a
statement mentions), `spark_session` and `duckdb_session` (the two query engines),
`portable` (which statements DuckDB answers as Spark SQL does), `auto_session` (DuckDB where it
does, else Spark), `engines` (which engine a command uses), `output` (table, csv, json),
`script` (a script or the prompt), `timeline` with `timeline_spark` (the Timeline API shape).
"""

from pipelines.query.statements import ReadOnlyViolation, check_read_only, split_statements, tokenize

__all__ = ["ReadOnlyViolation", "check_read_only", "split_statements", "tokenize"]
