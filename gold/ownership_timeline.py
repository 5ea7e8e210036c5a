"""`gold.ownership_timeline`: SCD2 intervals of owners (DataHub OWNER/OWNERSHIP and OpenMetadata owners).

Configuration only (kind OWNERSHIP). Key: (`owner_urn`, `owner_type`), so one
owner with two ownership types is two associations; an OpenMetadata owner is
its reference name (id when unnamed) with the reference type (user | team).
"""

from gold.associations import OWNERSHIP, timeline_spec

SPEC = timeline_spec(OWNERSHIP, "gold.ownership_timeline")
