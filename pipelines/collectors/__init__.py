"""Collectors: what puts the catalogs' events into `<landing>/<source>/`.

- `datahub_audit`: pages DataHub's Audit Events Search API into `<landing>/datahub_audit/`
  (`lakehouse collect datahub-audit`), resumable through `collector_state`.
- `datahub_kafka`: consumes DataHub's `PlatformEvent_v1` topic into `<landing>/datahub_ece/`
  (`lakehouse collect datahub-kafka`), committing offsets only after landing; `platform_event`
  decodes its Confluent-framed Avro records into landing lines.
- `receiver`: an HTTP endpoint the catalogs push to (OpenMetadata's Generic Webhook, DataWorks
  through EventBridge, DataHub Actions), answering only once a body is durably landed
  (`lakehouse receive`); `openmetadata_signature` checks OpenMetadata's `X-OM-Signature`;
  `group_commit` lands the requests waiting at once, in one write; `landing_segments` keeps one
  open segment per source, fsynced per batch, rolled into a landing file by size or age.
- `landing_writer`: how they all write landing files: fsync, then an atomic rename from a
  `_`-prefixed name, which landing discovery skips, so bronze never reads half a file (the
  receiver's open segments keep such a name until they roll).
- `commands`: their `lakehouse` subcommands.
"""
