"""OpenMetadata ChangeEvents in the forms its server and clients send them.

The model's full form carries `entityFullyQualifiedName`, `previousVersion`, `domains` (domain
ids) and `entity` as an object. The server keeps and sends a copy (its
`ChangeEventHandler.copyChangeEvent`: what `change_event` stores, webhooks post and
`/api/v1/events` answers) without those three fields and with `entity` as the entity's JSON
text. Tests build an event once and send it in each form.
"""

from __future__ import annotations

import json

STORED_FORM_DROPS = ("entityFullyQualifiedName", "previousVersion", "domains")


def full_form(event: dict, entity: dict | None) -> dict:
    """The event as the model holds it: `entity` an object (left out when None)."""
    return {**event, **({"entity": entity} if entity is not None else {})}


def stored_form(event: dict, entity: dict | None) -> dict:
    """The event as the server stores and sends it: no FQN, previous version or domains, and
    `entity` as JSON text (left out when None)."""
    kept = {k: v for k, v in event.items() if k not in STORED_FORM_DROPS}
    return {**kept, **({"entity": json.dumps(entity)} if entity is not None else {})}


def table_entity(entity_id: str, fqn: str, columns: list[str], domains: list[dict] = ()) -> dict:
    """A small Table entity as the server serialises it (service, database, schema, columns)."""
    service, database, schema, name = fqn.split(".")
    return {
        "id": entity_id,
        "name": name,
        "fullyQualifiedName": fqn,
        "version": 0.2,
        "service": {"id": f"svc-{service}", "type": "databaseService", "name": service},
        "database": {"type": "database", "fullyQualifiedName": f"{service}.{database}"},
        "databaseSchema": {"type": "databaseSchema", "fullyQualifiedName": f"{service}.{database}.{schema}"},
        "columns": [
            {"name": c, "dataType": "VARCHAR", "fullyQualifiedName": f"{fqn}.{c}", "tags": []}
            for c in columns
        ],
        "tags": [],
        "domains": list(domains),
    }
