"""A notice: one thing worth telling someone, with the key that makes it said once.

Why a key: a target's delivery log holds one row per notice key, so a notice already delivered
to a target is never planned for it again, whichever run meets it again (a violation's row is
rewritten whenever its entity gets new events). Keys name what happened, not when a run saw it:
`violation:opened:<violation_id>`, `violation:resolved:<id>`, `violation:withdrawn:<id>`,
`data_quality:failed:<table>:<expectation>:<run_id>` and `...:recovered:...`, and the same for
`feed`.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field

UNASSIGNED = "unassigned"  # the group of notices no one is named responsible for


@dataclass(frozen=True)
class Notice:
    key: str
    kind: str  # violation | data_quality | feed
    event: str  # opened | resolved | withdrawn (violations); failed | recovered (checks, feeds)
    severity: str
    title: str
    at: str  # when it happened, ISO 8601 UTC
    responsible: str | None = None
    fields: dict[str, str] = field(default_factory=dict)

    @property
    def owner(self) -> str:
        return self.responsible or UNASSIGNED

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @staticmethod
    def from_json(text: str) -> Notice:
        return Notice(**json.loads(text))


def violation_notice(event: str, row: dict, at: str) -> Notice:
    """A notice of one `gold.governance_violations` row (its columns as strings)."""
    name = row.get("entity_name") or row["entity_urn"]
    verb = {
        "opened": "opened",
        "resolved": "resolved",
        "withdrawn": "withdrawn (later events show it never happened)",
    }[event]
    fields = {
        k: str(row[k])
        for k in (
            "violation_id",
            "rule_id",
            "rule_kind",
            "source",
            "entity_urn",
            "entity_type",
            "condition_since",
            "opened_at",
            "resolved_at",
        )
        if row.get(k) is not None
    }
    fields.update({f"details.{k}": str(v) for k, v in sorted((row.get("details") or {}).items())})
    return Notice(
        key=f"violation:{event}:{row['violation_id']}",
        kind="violation",
        event=event,
        severity=row.get("severity") or "warn",
        title=f"[{row.get('severity') or 'warn'}] {row['rule_id']} on {name}: {verb}",
        at=at,
        responsible=row.get("responsible"),
        fields=fields,
    )


def check_notice(kind: str, event: str, row: dict) -> Notice:
    """A notice of one `ops.dq_results` outcome: a `fail` expectation (`data_quality`) or a feed
    check (`feed`, table `feeds.<source>`), failed or passing again."""
    table, expectation, run_id = row["table"], row["expectation"], row["run_id"]
    what = "stale or low" if kind == "feed" and event == "failed" else event
    fields = {
        "table": table,
        "expectation": expectation,
        "run_id": run_id,
        "unexpected_count": str(row.get("unexpected_count")),
        "element_count": str(row.get("element_count")),
    }
    if row.get("examples"):
        fields["examples"] = str(row["examples"])[:500]
    return Notice(
        key=f"{kind}:{event}:{table}:{expectation}:{run_id}",
        kind=kind,
        event=event,
        severity=({"fail": "critical"}.get(row.get("severity"), "warn") if event == "failed" else "info"),
        title=f"{table}: {expectation} {what}",
        at=str(row["validated_at"]),
        responsible=None,
        fields=fields,
    )
