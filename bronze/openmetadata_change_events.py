"""bronze.openmetadata_change_events: OpenMetadata ChangeEvents as landed."""

from pipelines.core.table_specs import BronzeTableSpec

SPEC = BronzeTableSpec(table="bronze.openmetadata_change_events", source="openmetadata")
