"""bronze.dataworks_events: DataWorks OpenEvent messages.

EventBridge deliveries are CloudEvents records as they are; Function Compute
deliveries wrap the payload in `messageBody`, whose envelope (messageId,
eventType, ...) is kept in `container`.
"""

from pipelines.core.table_specs import BronzeTableSpec

SPEC = BronzeTableSpec(table="bronze.dataworks_events", source="dataworks", record_objects=("messageBody",))
