"""Collectors: what puts the catalogs' events into `<landing>/<source>/`.

- `datahub_audit`: pages DataHub's Audit Events Search API into `<landing>/datahub_audit/`
  (`lakehouse collect datahub-audit`), resumable through `collector_state`.
- `receiver`: an HTTP endpoint the catalogs push to (OpenMetadata's Generic Webhook, DataWorks
  through EventBridge, DataHub Actions), answering only once a body is durably landed
  (`lakehouse receive`).
- `landing_writer`: the one way both write landing files: fsync, then an atomic rename from a
  `_`-prefixed name, which landing discovery skips, so bronze never reads half a file.
- `commands`: their `lakehouse` subcommands.
"""
