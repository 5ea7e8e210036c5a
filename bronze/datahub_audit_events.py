"""bronze.datahub_audit_events: DataHub audit-event search pages; each `usageEvents` element is a record.

The page's `nextScrollId`, `total` and `count`, and the `scrollId` that fetched it
(when the page file records it), stay beside every record so a gap in a scroll can be
noticed later (`silver.audit_completeness`).
"""

from pipelines.core.table_specs import BronzeTableSpec

SPEC = BronzeTableSpec(
    table="bronze.datahub_audit_events",
    source="datahub_audit",
    record_arrays=("usageEvents",),
    page_columns={
        "next_scroll_id": ("nextScrollId", "string"),
        "page_total": ("total", "long"),
        "page_count": ("count", "long"),
        "scroll_id": ("scrollId", "string"),
    },
)
