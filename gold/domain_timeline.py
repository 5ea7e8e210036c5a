"""`gold.domain_timeline`: SCD2 intervals of DataHub domains on entities.

Configuration only (kind DOMAIN, DataHub events only). Key: `domain_urn`.
"""

from gold.associations import DOMAIN, timeline_spec

SPEC = timeline_spec(DOMAIN, "gold.domain_timeline")
