"""DataHub's two feeds: Entity Change Events and audit search-response pages."""

from __future__ import annotations

import functools
import random
from collections.abc import Callable, Iterator

from pipelines.synthetic.common import (
    ACTORS,
    COLUMNS,
    DATABASES,
    DOMAINS,
    INGESTION_ACTORS,
    OWNER_TYPES,
    OWNERS,
    PLATFORMS,
    SYSTEM_ACTOR,
    TABLES,
    TAGS,
    TERMS,
    USERS,
    Bag,
    dumps,
    random_uuid,
    weighted,
)

# DataHub Entity Change Events ---------------------------------------------------------------


_quote = functools.lru_cache(maxsize=1 << 16)(dumps)  # URNs repeat a lot: encode each once


def _flat_object(values: dict) -> str:
    """Compact JSON of a flat dict, reusing the cached encodings of its strings."""
    return (
        "{"
        + ",".join([_quote(k) + ":" + (_quote(v) if type(v) is str else dumps(v)) for k, v in values.items()])
        + "}"
    )


def _ece(
    entity: str,
    entity_type: str,
    category: str,
    operation: str,
    actor: str,
    time: int,
    modifier: str | None = None,
    parameters: dict | None = None,
) -> str:
    """One ECE record as compact JSON (a string template: the hot path of `generate`)."""
    head = f'{{"entityUrn":{_quote(entity)},"entityType":{_quote(entity_type)},"category":{_quote(category)},"operation":{_quote(operation)}'
    if modifier is not None:
        head += ',"modifier":' + _quote(modifier)
    if parameters is not None:
        head += ',"parameters":' + _flat_object(parameters)
    return f'{head},"auditStamp":{{"actor":{_quote(actor)},"time":{time}}},"version":0}}'


class EceWorld:
    """A consistent DataHub history: associations are removed only while open, deleted datasets stay silent.

    Ingestion accounts create datasets and announce schema changes, the system actor hard-deletes
    some; people tag, own, describe and propose. Some edits of a person are undone by ingestion
    in the next record (a reversal), and some fields are renamed (TECHNICAL_SCHEMA MODIFY RENAME).
    """

    def __init__(self, rng: random.Random, clock: Callable[[], int], unique: int) -> None:
        self.rng, self.clock = rng, clock
        self.live = Bag()  # datasets that exist
        self.columns: dict[str, list[str]] = {}
        self.open: set[tuple] = set()  # ("tag"|"term"|"domain"|"owner", entity, value[, owner type])
        self.by_dataset: dict[str, set[tuple]] = {}
        self.domain: dict[str, str] = {}
        self.pending = Bag()  # proposals (urn, type, resource, key or None)
        self.runs = Bag()  # started dataProcessInstance runs
        self.target_live = max(8, unique // 80)
        self.serial = 0
        self.pick_action = weighted(
            rng,
            [
                (self._tag, 16),
                (self._field_tag, 10),
                (self._term, 7),
                (self._domain, 3),
                (self._owner, 12),
                (self._documentation, 4),
                (self._deprecation, 2),
                (self._schema_field, 3),
                (self._structured_property, 2),
                (self._hard_delete, 0.5),
                (self._propose, 4),
                (self._proposal_status, 2),
                (self._proposal_applied, 2),
                (self._run, 5),
                (self._assertion, 2),
                (self._reverted, 1.5),
                (self._field_rename, 1),
            ],
        )

    def records(self) -> Iterator[str]:
        """Endless stream of ECE lines in event-time order."""
        while True:
            if not self.live or (len(self.live) < self.target_live and self.rng.random() < 0.3):
                yield from self._create()
            else:
                yield from self.pick_action()()

    def _choice(self, items: tuple):
        return items[int(self.rng.random() * len(items))]

    def _actor(self) -> str:
        return self._choice(ACTORS)

    def _create(self) -> Iterator[str]:
        self.serial += 1
        rng = self.rng
        name = f"{self._choice(DATABASES)}.{self._choice(TABLES)}_{self.serial}"
        dataset = f"urn:li:dataset:(urn:li:dataPlatform:{self._choice(PLATFORMS)},{name},PROD)"
        self.live.add(dataset)
        self.columns[dataset] = rng.sample(COLUMNS, 3 + int(rng.random() * 5))
        self.by_dataset[dataset] = set()
        yield _ece(dataset, "dataset", "LIFECYCLE", "CREATE", self._choice(INGESTION_ACTORS), self.clock())

    def _toggle(self, key: tuple, dataset: str) -> str:
        """ADD when the association is closed, REMOVE when open (so REMOVE never precedes its ADD)."""
        if key in self.open:
            self.open.discard(key)
            self.by_dataset[dataset].discard(key)
            return "REMOVE"
        self.open.add(key)
        self.by_dataset[dataset].add(key)
        return "ADD"

    def _tag(self) -> Iterator[str]:
        dataset, tag = self.live.pick(self.rng), self._choice(TAGS)
        operation = self._toggle(("tag", dataset, tag), dataset)
        params = {"tagUrn": tag, "context": "{}"} if self.rng.random() < 0.5 else {"tagUrn": tag}
        yield _ece(
            dataset, "dataset", "TAG", operation, self._actor(), self.clock(), modifier=tag, parameters=params
        )

    def _field_tag(self) -> Iterator[str]:
        dataset = self.live.pick(self.rng)
        column = self._choice(tuple(self.columns[dataset]))
        field, tag = f"urn:li:schemaField:({dataset},{column})", self._choice(TAGS[:5])
        operation = self._toggle(("tag", field, tag), dataset)
        params = {"tagUrn": tag, "fieldPath": column, "parentUrn": dataset}
        yield _ece(
            field,
            "schemaField",
            "TAG",
            operation,
            self._actor(),
            self.clock(),
            modifier=tag,
            parameters=params,
        )

    def _term(self) -> Iterator[str]:
        dataset, term = self.live.pick(self.rng), self._choice(TERMS)
        operation = self._toggle(("term", dataset, term), dataset)
        yield _ece(
            dataset,
            "dataset",
            "GLOSSARY_TERM",
            operation,
            self._actor(),
            self.clock(),
            modifier=term,
            parameters={"termUrn": term},
        )

    def _domain(self) -> Iterator[str]:
        """A dataset has at most one domain: moving it removes the old one first."""
        dataset, actor = self.live.pick(self.rng), self._actor()
        old = self.domain.pop(dataset, None)
        if old is not None:
            self._toggle(("domain", dataset, old), dataset)
            yield _ece(
                dataset,
                "dataset",
                "DOMAIN",
                "REMOVE",
                actor,
                self.clock(),
                modifier=old,
                parameters={"domainUrn": old},
            )
            if self.rng.random() < 0.5:
                return
        new = self._choice(tuple(d for d in DOMAINS if d != old))
        self.domain[dataset] = new
        self._toggle(("domain", dataset, new), dataset)
        yield _ece(
            dataset,
            "dataset",
            "DOMAIN",
            "ADD",
            actor,
            self.clock(),
            modifier=new,
            parameters={"domainUrn": new},
        )

    def _owner(self) -> Iterator[str]:
        """OWNERSHIP (newer servers) or OWNER (older); both name the same association."""
        dataset, owner, kind = self.live.pick(self.rng), self._choice(OWNERS), self._choice(OWNER_TYPES)
        operation = self._toggle(("owner", dataset, owner, kind), dataset)
        if self.rng.random() < 0.7:
            category = "OWNERSHIP"
            params = {
                "ownerUrn": owner,
                "ownerType": kind,
                "ownerTypeUrn": f"urn:li:ownershipType:__system__{kind.lower()}",
            }
        else:
            category, params = "OWNER", {"ownerUrn": owner, "ownerType": kind}
        yield _ece(
            dataset,
            "dataset",
            category,
            operation,
            self._actor(),
            self.clock(),
            modifier=owner,
            parameters=params,
        )

    def _documentation(self) -> Iterator[str]:
        dataset = self.live.pick(self.rng)
        text = f"{dataset.split(',')[1]} as loaded by the nightly job (rev {self.serial})"
        yield _ece(
            dataset,
            "dataset",
            "DOCUMENTATION",
            "MODIFY",
            self._actor(),
            self.clock(),
            parameters={"description": text},
        )

    def _deprecation(self) -> Iterator[str]:
        dataset, status = self.live.pick(self.rng), self._choice(("DEPRECATED", "ACTIVE"))
        yield _ece(
            dataset,
            "dataset",
            "DEPRECATION",
            "MODIFY",
            self._actor(),
            self.clock(),
            modifier=status,
            parameters={"status": status},
        )

    def _schema_field(self) -> Iterator[str]:
        dataset = self.live.pick(self.rng)
        self.serial += 1
        column = f"col_{self.serial}"
        self.columns[dataset].append(column)
        field = f"urn:li:schemaField:({dataset},{column})"
        params = {"fieldUrn": field, "fieldPath": column, "nullable": self.rng.random() < 0.5}
        yield _ece(
            dataset,
            "dataset",
            "TECHNICAL_SCHEMA",
            "ADD",
            self._choice(INGESTION_ACTORS),
            self.clock(),
            modifier=field,
            parameters=params,
        )

    def _field_rename(self) -> Iterator[str]:
        """A column renamed: MODIFY with modificationCategory RENAME, the old field's urn as modifier."""
        dataset = self.live.pick(self.rng)
        columns = self.columns[dataset]
        position = int(self.rng.random() * len(columns))
        self.serial += 1
        old, new = columns[position], f"{columns[position].split('__')[0]}__v{self.serial}"
        columns[position] = new
        field = f"urn:li:schemaField:({dataset},{new})"
        params = {
            "fieldUrn": field,
            "fieldPath": new,
            "nullable": self.rng.random() < 0.5,
            "modificationCategory": "RENAME",
        }
        yield _ece(
            dataset,
            "dataset",
            "TECHNICAL_SCHEMA",
            "MODIFY",
            self._choice(INGESTION_ACTORS),
            self.clock(),
            modifier=f"urn:li:schemaField:({dataset},{old})",
            parameters=params,
        )

    def _reverted(self) -> Iterator[str]:
        """A person tags (or untags) a dataset and ingestion undoes it in the next record."""
        dataset, tag = self.live.pick(self.rng), self._choice(TAGS)
        person = self._choice(ACTORS[: len(USERS)])
        for actor in (person, self._choice(INGESTION_ACTORS)):
            operation = self._toggle(("tag", dataset, tag), dataset)
            params = {"tagUrn": tag}
            yield _ece(
                dataset, "dataset", "TAG", operation, actor, self.clock(), modifier=tag, parameters=params
            )

    def _structured_property(self) -> Iterator[str]:
        dataset = self.live.pick(self.rng)
        prop = self._choice(("urn:li:structuredProperty:retention", "urn:li:structuredProperty:tier"))
        values = dumps([self._choice(("30d", "90d", "1y", "gold", "silver"))])
        yield _ece(
            dataset,
            "dataset",
            "STRUCTURED_PROPERTY",
            self._choice(("ADD", "MODIFY")),
            self._actor(),
            self.clock(),
            modifier=prop,
            parameters={"propertyUrn": prop, "propertyValues": values},
        )

    def _hard_delete(self) -> Iterator[str]:
        """Closes every association of the dataset and its fields; the dataset is never used again."""
        if len(self.live) <= 4:
            yield from self._tag()
            return
        dataset = self.live.pick(self.rng)
        self.live.discard(dataset)
        self.open.difference_update(self.by_dataset.pop(dataset))
        self.domain.pop(dataset, None)
        self.columns.pop(dataset)
        actor = SYSTEM_ACTOR if self.rng.random() < 0.3 else self._actor()
        yield _ece(dataset, "dataset", "LIFECYCLE", "HARD_DELETE", actor, self.clock())

    def _propose(self) -> Iterator[str]:
        """An actionRequest CREATE proposing a tag, term, owner, domain or description on a live dataset."""
        rng, dataset = self.rng, self.live.pick(self.rng)
        urn = f"urn:li:actionRequest:{random_uuid(rng)}"
        kind = self._choice(
            ("TAG_ASSOCIATION", "TERM_ASSOCIATION", "OWNER_ASSOCIATION", "UPDATE_DESCRIPTION")
        )
        params = {"actionRequestType": kind, "resourceUrn": dataset, "resourceType": "dataset"}
        key = None
        if kind == "TAG_ASSOCIATION":
            params["tagUrn"] = self._choice(TAGS)
            key = ("tag", dataset, params["tagUrn"])
        elif kind == "TERM_ASSOCIATION":
            params["glossaryTermUrn"] = self._choice(TERMS)
            key = ("term", dataset, params["glossaryTermUrn"])
        elif kind == "OWNER_ASSOCIATION":
            owner, owner_type = self._choice(OWNERS), self._choice(OWNER_TYPES)
            typ = f"urn:li:ownershipType:__system__{owner_type.lower()}"
            params["owners"] = dumps([{"type": owner_type, "typeUrn": typ, "ownerUrn": owner}])
            key = ("owner", dataset, owner, owner_type)
        else:
            params["description"] = "Proposed: describe the grain and the refresh schedule."
        self.pending.add((urn, dataset, key))
        yield _ece(
            urn, "actionRequest", "LIFECYCLE", "CREATE", self._actor(), self.clock(), parameters=params
        )

    def _association_add(self, key: tuple, actor: str) -> str | None:
        """The ADD that makes a proposed association appear, when the dataset lives and it is not open yet."""
        dataset = key[1]
        if dataset not in self.live or key in self.open:
            return None
        self._toggle(key, dataset)
        kind, time = key[0], self.clock()
        if kind == "tag":
            return _ece(
                dataset, "dataset", "TAG", "ADD", actor, time, modifier=key[2], parameters={"tagUrn": key[2]}
            )
        if kind == "term":
            params = {"termUrn": key[2]}
            return _ece(
                dataset, "dataset", "GLOSSARY_TERM", "ADD", actor, time, modifier=key[2], parameters=params
            )
        params = {"ownerUrn": key[2], "ownerType": key[3]}
        return _ece(dataset, "dataset", "OWNERSHIP", "ADD", actor, time, modifier=key[2], parameters=params)

    def _proposal_status(self) -> Iterator[str]:
        """DataHub Cloud status change: COMPLETED with ACCEPTED (then the change appears) or REJECTED."""
        if not self.pending:
            yield from self._propose()
            return
        proposal = self.pending.pick(self.rng)
        self.pending.discard(proposal)
        urn, _, key = proposal
        result = "ACCEPTED" if self.rng.random() < 0.6 else "REJECTED"
        actor = self._actor()
        params = {"actionRequestStatus": "COMPLETED", "actionRequestResult": result}
        yield _ece(urn, "actionRequest", "LIFECYCLE", "COMPLETED", actor, self.clock(), parameters=params)
        if result == "ACCEPTED" and key is not None:
            line = self._association_add(key, actor)
            if line is not None:
                yield line

    def _proposal_applied(self) -> Iterator[str]:
        """No status event (older servers): the proposed association simply appears later."""
        if not self.pending:
            yield from self._propose()
            return
        proposal = self.pending.pick(self.rng)
        self.pending.discard(proposal)
        line = self._association_add(proposal[2], self._actor()) if proposal[2] is not None else None
        if line is None:
            yield from self._tag()
        else:
            yield line

    def _run(self) -> Iterator[str]:
        """A dataProcessInstance run: STARTED now, COMPLETED later."""
        rng = self.rng
        if self.runs and rng.random() < 0.5:
            run, job, attempt = self.runs.pick(rng)
            self.runs.discard((run, job, attempt))
            result = "SUCCESS" if rng.random() < 0.85 else "FAILURE"
            operation, params = "COMPLETED", {"runResult": result, "attempt": attempt}
        else:
            self.serial += 1
            run = f"urn:li:dataProcessInstance:{rng.getrandbits(64):016x}"
            job, attempt = self._choice(TABLES), 1 + int(rng.random() * 2)
            self.runs.add((run, job, attempt))
            operation, params = "STARTED", {"attempt": attempt}
        flow = "urn:li:dataFlow:(airflow,nightly_etl,prod)"
        params.update({"dataFlowUrn": flow, "dataJobUrn": f"urn:li:dataJob:({flow},load_{job})"})
        yield _ece(
            run,
            "dataProcessInstance",
            "RUN",
            operation,
            "urn:li:corpuser:datahub",
            self.clock(),
            parameters=params,
        )

    def _assertion(self) -> Iterator[str]:
        rng, dataset = self.rng, self.live.pick(self.rng)
        result = "SUCCESS" if rng.random() < 0.9 else "FAILURE"
        params = {
            "runResult": result,
            "runId": f"run-{rng.getrandbits(40):010x}",
            "asserteeUrn": dataset,
            "assertionResult": result,
        }
        urn = f"urn:li:assertion:{rng.getrandbits(48):012x}"
        yield _ece(
            urn, "assertion", "RUN", "COMPLETED", "urn:li:corpuser:datahub", self.clock(), parameters=params
        )


# DataHub audit events ---------------------------------------------------------------------

AUDIT_TYPES = (
    ("LogInEvent", 30),
    ("EntityEvent", 24),
    ("UpdateAspectEvent", 14),
    ("FailedLogInEvent", 6),
    ("CreateAccessTokenEvent", 3),
    ("RevokeAccessTokenEvent", 2),
    ("CreateUserEvent", 2),
    ("UpdateUserEvent", 3),
    ("CreatePolicyEvent", 1),
    ("UpdatePolicyEvent", 2),
    ("CreateIngestionSourceEvent", 1),
    ("UpdateIngestionSourceEvent", 3),
    ("DeleteEntityEvent", 1),
)
USER_AGENTS = (
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0 Safari/537.36",
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) Gecko/20100101 Firefox/126.0",
    "python-requests/2.31.0",
    "acryl-datahub/0.14.1",
)
LOGIN_SOURCES = ("PASSWORD_LOGIN", "SSO_LOGIN", "OIDC_IMPLICIT_LOGIN", "FALLBACK_LOGIN", "GUEST_LOGIN")


def _audit_target(rng: random.Random, event_type: str) -> tuple[str, str, str]:
    """(entityUrn, entityType, aspectName) an audit event of this type is about."""
    hex_id = f"{rng.getrandbits(32):08x}"
    if "AccessToken" in event_type:
        return f"urn:li:dataHubAccessToken:{hex_id}", "dataHubAccessToken", "dataHubAccessTokenInfo"
    if "Policy" in event_type:
        return f"urn:li:dataHubPolicy:{hex_id}", "dataHubPolicy", "dataHubPolicyInfo"
    if "IngestionSource" in event_type:
        return (
            f"urn:li:dataHubIngestionSource:{hex_id}",
            "dataHubIngestionSource",
            "dataHubIngestionSourceInfo",
        )
    if "User" in event_type:
        return f"urn:li:corpuser:{USERS[int(rng.random() * len(USERS))]}", "corpuser", "corpUserInfo"
    platform, table = PLATFORMS[int(rng.random() * len(PLATFORMS))], TABLES[int(rng.random() * len(TABLES))]
    aspect = ("ownership", "globalTags", "schemaMetadata", "editableDatasetProperties", "status")[
        int(rng.random() * 5)
    ]
    return f"urn:li:dataset:(urn:li:dataPlatform:{platform},{table},PROD)", "dataset", aspect


def audit_records(rng: random.Random, clock: Callable[[], int]) -> Iterator[str]:
    """Endless audit usage events; failed logins cluster on one suspicious IP."""
    pick = weighted(rng, [((lambda t=t: t), w) for t, w in AUDIT_TYPES])
    ips = tuple(f"10.20.{i}.{j}" for i in range(3) for j in (11, 42, 77))
    while True:
        event_type = pick()()
        actor = ACTORS[int(rng.random() * len(ACTORS))]
        ip = ips[int(rng.random() * len(ips))]
        if event_type == "FailedLogInEvent" and rng.random() < 0.7:
            ip = "203.0.113.66"
        event = {
            "eventType": event_type,
            "timestamp": clock(),
            "actorUrn": actor,
            "sourceIP": ip,
            "eventSource": ("GRAPHQL", "RESTLI", "OPENAPI", "SSO_SCIM")[int(rng.random() * 4)],
            "userAgent": USER_AGENTS[int(rng.random() * len(USER_AGENTS))],
            "telemetryTraceId": f"{rng.getrandbits(64):016x}",
        }
        if event_type.endswith("LogInEvent"):
            event["loginSource"] = LOGIN_SOURCES[int(rng.random() * len(LOGIN_SOURCES))]
        else:
            event["entityUrn"], event["entityType"], event["aspectName"] = _audit_target(rng, event_type)
        if rng.random() < 0.3:
            raw = {
                "type": event_type,
                "actorUrn": actor,
                "timestamp": event["timestamp"],
                "usageSource": "BACKEND",
            }
            event["rawUsageEvent"] = raw
        yield dumps(event)
