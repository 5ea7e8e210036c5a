"""`gold.glossary_term_timeline`: SCD2 intervals of glossary terms on entities and schema fields.

Configuration only (kind GLOSSARY_TERM). Key: `term_urn`; OpenMetadata terms
are the tag labels whose source is `Glossary` (their `tagFQN`).
"""

from gold.associations import GLOSSARY_TERM, timeline_spec

SPEC = timeline_spec(GLOSSARY_TERM, "gold.glossary_term_timeline")
