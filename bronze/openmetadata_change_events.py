"""bronze.openmetadata_change_events: OpenMetadata ChangeEvents as landed."""

from pipelines.jobs import BronzeJob

JOB = BronzeJob(table="bronze.openmetadata_change_events", source="openmetadata")
