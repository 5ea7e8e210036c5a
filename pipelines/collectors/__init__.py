"""Collectors: what puts the catalogs' events into `<landing>/<source>/`.

- `datahub_audit`: pages DataHub's Audit Events Search API into `<landing>/datahub_audit/`
  (`lakehouse collect datahub-audit`), resumable through `collector_state`.
- `datahub_kafka`: consumes DataHub's `PlatformEvent_v1` topic into `<landing>/datahub_ece/`
  (`lakehouse collect datahub-kafka`), committing offsets only after landing; `platform_event`
  decodes its Confluent-framed Avro records into landing lines.
- `receiver`: an HTTP endpoint the catalogs push to (OpenMetadata's Generic Webhook, DataWorks
  through EventBridge, DataHub Actions), answering only once a body is durably landed
  (`lakehouse receive`); `openmetadata_signature` checks OpenMetadata's `X-OM-Signature`.
- `landing_writer`: the one way they all write landing files: fsync, then an atomic rename from a
  `_`-prefixed name, which landing discovery skips, so bronze never reads half a file.
- `commands`: their `lakehouse` subcommands.
"""
