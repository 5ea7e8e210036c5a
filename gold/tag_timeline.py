"""`gold.tag_timeline`: SCD2 intervals of tags on entities and schema fields (DataHub and OpenMetadata).

Configuration only: the events come from `gold.associations` (kind TAG), the
intervals from `gold.intervals`. Key: `tag_urn` (an OpenMetadata `tagFQN`).
"""

from gold.associations import TAG, timeline_spec

SPEC = timeline_spec(TAG, "gold.tag_timeline")
