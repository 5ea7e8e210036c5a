"""`gold.domain_timeline`: SCD2 intervals of domains on entities (DataHub and OpenMetadata).

Configuration only (kind DOMAIN). Key: `domain_urn` (an OpenMetadata domain's
fullyQualifiedName, else its name or id), from DataHub DOMAIN events and
OpenMetadata `domain`/`domains` field changes and created entities.
"""

from gold.associations import DOMAIN, timeline_spec

SPEC = timeline_spec(DOMAIN, "gold.domain_timeline")
