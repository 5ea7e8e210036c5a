"""bronze.datahub_entity_change_events: DataHub Entity Change Events (EntityChangeEvent_v1) as landed."""

from pipelines.core.table_specs import BronzeTableSpec

SPEC = BronzeTableSpec(table="bronze.datahub_entity_change_events", source="datahub_ece")
