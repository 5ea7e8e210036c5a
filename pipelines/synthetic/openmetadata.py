"""OpenMetadata ChangeEvents over a small evolving catalog."""

from __future__ import annotations

import json
import random
import uuid
from collections.abc import Callable, Iterator

from pipelines.synthetic.common import COLUMNS, DATABASES, TABLES, Bag, dumps, random_uuid, weighted

# OpenMetadata ---------------------------------------------------------------------------

OM_TAGS = ("PII.Sensitive", "PII.NonSensitive", "PersonalData.Personal", "Tier.Tier1", "Tier.Tier2")
OM_USERS = ("aaron_johnson0", "adam_matthews2", "alec_kane4", "amanda_york8", "brian_smith7")
INGESTION_BOT = "ingestion-bot"  # OpenMetadata's ingestion (and auto-classification) account
TASK_TYPES = ("RequestTag", "UpdateTag", "RequestDescription", "UpdateDescription", "RequestApproval")


def _om_tag(fqn: str, label_type: str = "Manual") -> dict:
    return {"tagFQN": fqn, "source": "Classification", "labelType": label_type, "state": "Confirmed"}


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
    """Tables with tags, column tags, owners and descriptions; nothing is removed that is not there.

    The ingestion bot creates most tables and classifies some columns; tables are renamed now and
    then (a `name` update, the events after it under the new FQN); tasks (threads of type Task)
    ask for tags, descriptions or approval and are resolved or closed later, or never.
    """

    def __init__(self, rng: random.Random, clock: Callable[[], int]) -> None:
        self.rng, self.clock = rng, clock
        self.tables = Bag()
        self.state: dict[str, dict] = {}
        self.tasks = Bag()  # open tasks: (thread id, thread JSON object)
        self.serial = 0
        self.pick_action = weighted(
            rng,
            [
                (self._tags, 30),
                (self._column_tags, 20),
                (self._owners, 18),
                (self._description, 12),
                (self._delete, 2),
                (self._rename, 1.5),
                (self._task, 3),
                (self._task_done, 2),
            ],
        )

    def records(self) -> Iterator[str]:
        while True:
            if len(self.tables) < 5 or self.rng.random() < 0.06:
                yield self._create()
            else:
                yield self.pick_action()()

    def _user(self) -> str:
        return OM_USERS[int(self.rng.random() * len(OM_USERS))]

    def _event(
        self, fqn: str, event_type: str, change: dict | None, actor: str | None = None, **extra
    ) -> str:
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
                "userName": actor or OM_USERS[int(rng.random() * len(OM_USERS))],
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
        actor = INGESTION_BOT if rng.random() < 0.7 else None
        return self._event(fqn, "entityCreated", None, actor=actor, entity=dumps(entity))

    @staticmethod
    def _change(previous: float, added=(), updated=(), deleted=()) -> dict:
        return {
            "fieldsAdded": list(added),
            "fieldsUpdated": list(updated),
            "fieldsDeleted": list(deleted),
            "previousVersion": previous,
        }

    def _toggle_tag(self, fqn: str, current: list, field: str, actor: str | None = None) -> str:
        tag = OM_TAGS[int(self.rng.random() * len(OM_TAGS))]
        previous = self.state[fqn]["version"]
        label = "Automated" if actor == INGESTION_BOT else "Manual"
        if tag in current:
            current.remove(tag)
            item = {"name": field, "oldValue": dumps([_om_tag(tag, label)])}
            return self._event(fqn, "entityUpdated", self._change(previous, deleted=[item]), actor=actor)
        current.append(tag)
        item = {"name": field, "newValue": dumps([_om_tag(tag, label)])}
        return self._event(fqn, "entityUpdated", self._change(previous, added=[item]), actor=actor)

    def _tags(self) -> str:
        fqn = self.tables.pick(self.rng)
        return self._toggle_tag(fqn, self.state[fqn]["tags"], "tags")

    def _column_tags(self) -> str:
        fqn = self.tables.pick(self.rng)
        columns = self.state[fqn]["columns"]
        column = sorted(columns)[int(self.rng.random() * len(columns))]
        actor = INGESTION_BOT if self.rng.random() < 0.3 else None  # auto-classification
        return self._toggle_tag(fqn, columns[column], f"columns.{column}.tags", actor)

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

    def _rename(self) -> str:
        """A table renamed: `name` updated, the event (and every later one) under the new FQN."""
        old_fqn = self.tables.pick(self.rng)
        self.serial += 1
        prefix, old_name = old_fqn.rsplit(".", 1)
        new_name = f"{old_name.split('__')[0]}__r{self.serial}"
        new_fqn = f"{prefix}.{new_name}"
        self.tables.discard(old_fqn)
        self.tables.add(new_fqn)
        self.state[new_fqn] = self.state.pop(old_fqn)
        previous = self.state[new_fqn]["version"]
        item = {"name": "name", "oldValue": old_name, "newValue": new_name}
        return self._event(new_fqn, "entityUpdated", self._change(previous, updated=[item]))

    def _thread_event(self, event_type: str, thread: dict, actor: str, time: int) -> str:
        """A change event of a task's thread (no entity version: a thread is not versioned)."""
        event = {} if self.rng.random() < 0.05 else {"id": random_uuid(self.rng)}
        event.update(
            {
                "eventType": event_type,
                "entityType": "THREAD",
                "entityId": thread["id"],
                "userName": actor,
                "timestamp": time,
                "entity": dumps(thread),
            }
        )
        return dumps(event)

    def _task(self) -> str:
        """A user asks for a tag, a description or an approval on a table or one of its columns."""
        rng, fqn, time = self.rng, self.tables.pick(self.rng), self.clock()
        self.serial += 1
        about = f"<#E::table::{fqn}>"
        if rng.random() < 0.4:
            columns = sorted(self.state[fqn]["columns"])
            about = f"<#E::table::{fqn}::columns::{columns[int(rng.random() * len(columns))]}>"
        creator, assignee = self._user(), self._user()
        thread = {
            "id": random_uuid(rng),
            "type": "Task",
            "about": about,
            "createdBy": creator,
            "threadTs": time,
            "task": {
                "id": self.serial,
                "type": TASK_TYPES[int(rng.random() * len(TASK_TYPES))],
                "assignees": [_om_owner(assignee)],
                "status": "Open",
                "suggestion": dumps([_om_tag(OM_TAGS[int(rng.random() * len(OM_TAGS))])]),
            },
        }
        self.tasks.add((thread["id"], dumps(thread)))
        return self._thread_event("threadCreated", thread, creator, time)

    def _task_done(self) -> str:
        """An open task resolved (its suggestion applied) or closed by its assignee."""
        if not self.tasks:
            return self._task()
        picked = self.tasks.pick(self.rng)
        self.tasks.discard(picked)
        thread = json.loads(picked[1])
        assignee = thread["task"]["assignees"][0]["name"]
        resolved = self.rng.random() < 0.7
        time = self.clock()
        thread["task"].update({"status": "Closed", "closedBy": assignee, "closedAt": time})
        return self._thread_event("taskResolved" if resolved else "taskClosed", thread, assignee, time)
