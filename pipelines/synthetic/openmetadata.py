"""OpenMetadata ChangeEvents over a small evolving catalog."""

from __future__ import annotations

import random
import uuid
from collections.abc import Callable, Iterator

from pipelines.synthetic.common import COLUMNS, DATABASES, TABLES, Bag, dumps, random_uuid, weighted

# OpenMetadata ---------------------------------------------------------------------------

OM_TAGS = ("PII.Sensitive", "PII.NonSensitive", "PersonalData.Personal", "Tier.Tier1", "Tier.Tier2")
OM_USERS = ("aaron_johnson0", "adam_matthews2", "alec_kane4", "amanda_york8", "brian_smith7")


def _om_tag(fqn: str) -> dict:
    return {"tagFQN": fqn, "source": "Classification", "labelType": "Manual", "state": "Confirmed"}


def _om_owner(name: str) -> dict:
    display = name.rsplit("_", 1)[0].replace("_", " ").title()
    return {
        "id": str(uuid.uuid5(uuid.NAMESPACE_URL, f"openmetadata:user:{name}")),
        "type": "user",
        "name": name,
        "fullyQualifiedName": name,
        "displayName": display,
        "deleted": False,
    }


class OpenMetadataWorld:
    """Tables with tags, column tags, owners and descriptions; nothing is removed that is not there."""

    def __init__(self, rng: random.Random, clock: Callable[[], int]) -> None:
        self.rng, self.clock = rng, clock
        self.tables = Bag()
        self.state: dict[str, dict] = {}
        self.serial = 0
        self.pick_action = weighted(
            rng,
            [
                (self._tags, 30),
                (self._column_tags, 20),
                (self._owners, 18),
                (self._description, 12),
                (self._delete, 2),
            ],
        )

    def records(self) -> Iterator[str]:
        while True:
            if len(self.tables) < 5 or self.rng.random() < 0.06:
                yield self._create()
            else:
                yield self.pick_action()()

    def _event(self, fqn: str, event_type: str, change: dict | None, **extra) -> str:
        rng, table = self.rng, self.state[fqn]
        previous = table["version"]
        if change is not None:
            table["version"] = round(previous + 0.1, 1)
        event = {} if rng.random() < 0.05 else {"id": random_uuid(rng)}
        event.update(
            {
                "eventType": event_type,
                "entityType": "table",
                "entityId": table["id"],
                "entityFullyQualifiedName": fqn,
                "previousVersion": previous,
                "currentVersion": table["version"],
                "userName": OM_USERS[int(rng.random() * len(OM_USERS))],
                "timestamp": self.clock(),
                "changeDescription": change,
            }
        )
        if change is not None and rng.random() < 0.5:
            event["incrementalChangeDescription"] = change
        event.update(extra)
        return dumps(event)

    def _create(self) -> str:
        rng = self.rng
        self.serial += 1
        name = f"{TABLES[int(rng.random() * len(TABLES))]}_{self.serial}"
        fqn = f"mysql_prod.shop.{DATABASES[int(rng.random() * len(DATABASES))]}.{name}"
        columns = rng.sample(COLUMNS, 4)
        self.tables.add(fqn)
        self.state[fqn] = {
            "id": random_uuid(rng),
            "version": 0.1,
            "tags": [],
            "owners": [],
            "columns": {c: [] for c in columns},
        }
        entity = {"id": self.state[fqn]["id"], "name": name, "fullyQualifiedName": fqn, "version": 0.1}
        entity["columns"] = [{"name": c, "dataType": "VARCHAR"} for c in columns]
        return self._event(fqn, "entityCreated", None, entity=dumps(entity))

    @staticmethod
    def _change(previous: float, added=(), updated=(), deleted=()) -> dict:
        return {
            "fieldsAdded": list(added),
            "fieldsUpdated": list(updated),
            "fieldsDeleted": list(deleted),
            "previousVersion": previous,
        }

    def _toggle_tag(self, fqn: str, current: list, field: str) -> str:
        tag = OM_TAGS[int(self.rng.random() * len(OM_TAGS))]
        previous = self.state[fqn]["version"]
        if tag in current:
            current.remove(tag)
            item = {"name": field, "oldValue": dumps([_om_tag(tag)])}
            return self._event(fqn, "entityUpdated", self._change(previous, deleted=[item]))
        current.append(tag)
        item = {"name": field, "newValue": dumps([_om_tag(tag)])}
        return self._event(fqn, "entityUpdated", self._change(previous, added=[item]))

    def _tags(self) -> str:
        fqn = self.tables.pick(self.rng)
        return self._toggle_tag(fqn, self.state[fqn]["tags"], "tags")

    def _column_tags(self) -> str:
        fqn = self.tables.pick(self.rng)
        columns = self.state[fqn]["columns"]
        column = sorted(columns)[int(self.rng.random() * len(columns))]
        return self._toggle_tag(fqn, columns[column], f"columns.{column}.tags")

    def _owners(self) -> str:
        """Newer servers: `owners` lists added/deleted; older ones: `owner` updated as a single reference."""
        rng, fqn = self.rng, self.tables.pick(self.rng)
        table = self.state[fqn]
        name = OM_USERS[int(rng.random() * len(OM_USERS))]
        previous = table["version"]
        if rng.random() < 0.2:
            old = table["owners"][0] if table["owners"] else None
            table["owners"] = [name]
            item = {"name": "owner", "newValue": dumps(_om_owner(name))}
            if old is not None:
                item["oldValue"] = dumps(_om_owner(old))
            return self._event(fqn, "entityUpdated", self._change(previous, updated=[item]))
        if name in table["owners"]:
            table["owners"].remove(name)
            item = {"name": "owners", "oldValue": dumps([_om_owner(name)])}
            return self._event(fqn, "entityUpdated", self._change(previous, deleted=[item]))
        table["owners"].append(name)
        item = {"name": "owners", "newValue": dumps([_om_owner(name)])}
        return self._event(fqn, "entityUpdated", self._change(previous, added=[item]))

    def _description(self) -> str:
        fqn = self.tables.pick(self.rng)
        previous = self.state[fqn]["version"]
        old = self.state[fqn].get("description", "")
        new = f"Rows of {fqn.rsplit('.', 1)[1]}, refreshed hourly (v{previous})"
        self.state[fqn]["description"] = new
        item = {"name": "description", "oldValue": old, "newValue": new}
        return self._event(fqn, "entityUpdated", self._change(previous, updated=[item]))

    def _delete(self) -> str:
        fqn = self.tables.pick(self.rng)
        line = self._event(fqn, "entityDeleted", None)
        self.tables.discard(fqn)
        del self.state[fqn]
        return line
