"""`gold.governance_violations` on real Delta tables, over batches whose events are days apart.

The story, from 2026-01-01 (day 0): five DataHub datasets are created by ann.
- A gets no owner until day 9 (second batch) and never a domain;
- B is owned by bob from the first hour, tagged pii, the tag taken off by ingestion on day 2
  and put back on day 4; it never gets a domain; a proposal on it is pending from day 1;
- C gets a domain on day 1; an owner given on day 5 arrives last (third batch, late);
- D is owned and in a domain from the first hour; a change with no actor on day 1 is followed
  by ann's on day 2;
- E is in a domain from the first hour and hard-deleted on day 8 without ever having an owner.
"""

from __future__ import annotations

import datetime as dt

import pytest
import yaml

from gold import (
    change_history,
    domain_timeline,
    entity_governance_timeline,
    entity_status_timeline,
    governance_violations,
    ownership_timeline,
    proposals,
    tag_timeline,
)
from gold.event_clock import event_clock
from gold.violation_rules import load_rules, parse_rules
from pipelines.core import defaults
from pipelines.core.config import ConfigError, load_config
from pipelines.core.context import RunContext
from pipelines.core.table_specs import ERRORS_COLUMN
from pipelines.executors import gold as gold_executor
from silver import datahub_action_requests, datahub_entity_changes
from tests.support.engines import engine_store, skip_without_delta_spark
from tests.support.tables import bronze_frame

DAY0 = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
ANN, BOB, INGESTION = "urn:li:corpuser:ann", "urn:li:corpuser:bob", "urn:li:corpuser:svc_ingestion"
PII = "urn:li:tag:pii"
TABLE = "gold.governance_violations"


def dataset(name: str) -> str:
    return f"urn:li:dataset:(urn:li:dataPlatform:hive,shop.{name},PROD)"


A, B, C, D, E = (dataset(n) for n in "abcde")


def at(days: float, hours: float = 0) -> dt.datetime:
    return DAY0 + dt.timedelta(days=days, hours=hours)


def ece(entity, category, operation, when, actor=ANN, entity_type="dataset", **parameters) -> dict:
    stamp = {"time": int(when.timestamp() * 1000)}
    if actor:
        stamp["actor"] = actor
    return {
        "entityUrn": entity, "entityType": entity_type, "category": category, "operation": operation,
        "parameters": parameters, "auditStamp": stamp,
    }  # fmt: skip


def owner(entity, when):
    return ece(entity, "OWNER", "ADD", when, ownerUrn=BOB, ownerType="TECHNICAL_OWNER")


def domain(entity, when):
    return ece(entity, "DOMAIN", "ADD", when, domainUrn="urn:li:domain:sales")


FIRST = [
    *[ece(e, "LIFECYCLE", "CREATE", at(0)) for e in (A, B, C, D, E)],
    owner(B, at(0, 1)),
    ece(B, "TAG", "ADD", at(0, 2), tagUrn=PII),
    ece(B, "TAG", "REMOVE", at(2), actor=INGESTION, tagUrn=PII),
    ece(B, "TAG", "ADD", at(4), tagUrn=PII),
    ece(
        "urn:li:actionRequest:p1",
        "LIFECYCLE",
        "CREATE",
        at(1),
        entity_type="actionRequest",
        actionRequestType="TAG_ASSOCIATION",
        resourceUrn=B,
        resourceType="dataset",
        tagUrn="urn:li:tag:gold",  # a tag B never gets: the proposal stays pending
    ),  # fmt: skip
    domain(C, at(1)),
    owner(D, at(0, 1)),
    domain(D, at(0, 1)),
    ece(D, "DOCUMENTATION", "ADD", at(1), actor=None, description="orders"),
    ece(D, "DOCUMENTATION", "ADD", at(2), description="one row per order"),
    domain(E, at(0, 1)),
    ece(E, "LIFECYCLE", "HARD_DELETE", at(8)),
]
SECOND = [owner(A, at(9))]
LATE = [owner(C, at(5))]
UPSTREAM = (
    tag_timeline.SPEC,
    ownership_timeline.SPEC,
    domain_timeline.SPEC,
    entity_status_timeline.SPEC,
    change_history.SPEC,
    proposals.SPEC,
    entity_governance_timeline.SPEC,
)
COLUMNS = ("rule_id", "entity_urn", "condition_since", "opened_at", "resolved_at", "responsible")


def _land(ctx, records, batch):
    bronze = bronze_frame(ctx.spark, records, source_file=f"/landing/batch{batch}.jsonl")
    for module in (datahub_entity_changes, datahub_action_requests):
        ctx.store.append(module.transform(bronze).drop(ERRORS_COLUMN), module.SPEC.table)


def _run(ctx, records, batch):
    _land(ctx, records, batch)
    for spec in UPSTREAM:
        gold_executor.run(spec, ctx)
    return gold_executor.run(governance_violations.SPEC, ctx)


def _rows(ctx) -> set[tuple]:
    def plain(value):
        return value.astimezone(dt.timezone.utc) if isinstance(value, dt.datetime) else value

    table = ctx.store.read(TABLE).select(*COLUMNS).collect()
    return {tuple(plain(v) for v in row) for row in table}


def _open_at(ctx, clock) -> set[tuple]:
    """The documented state at a clock: open when opened_at <= clock < resolved_at (or unresolved)."""
    rows = ctx.store.read(TABLE).collect()
    return {
        (r.rule_id, r.entity_urn)
        for r in rows
        if plain_utc(r.opened_at) <= clock and (r.resolved_at is None or plain_utc(r.resolved_at) > clock)
    }


def plain_utc(value: dt.datetime) -> dt.datetime:
    return value.astimezone(dt.timezone.utc)


# After every batch: what each rule found (rule, entity, began, opened, resolved, responsible)
OWNER_A = ("dataset_owner_missing", A, at(0), at(7), None, ANN)
OWNER_A_RESOLVED = ("dataset_owner_missing", A, at(0), at(7), at(9), ANN)
OWNER_C = ("dataset_owner_missing", C, at(0), at(7), None, ANN)
OWNER_E = ("dataset_owner_missing", E, at(0), at(7), at(8), ANN)  # ended by the deletion
DOMAIN_A = ("new_dataset_domain_missing", A, at(0), at(3), None, ANN)
DOMAIN_B = ("new_dataset_domain_missing", B, at(0), at(3), None, BOB)  # B's owner when it opened
SENSITIVE_B = ("sensitive_tag_removed", B, at(2), at(2), at(4), BOB)
PROPOSAL_B = ("proposal_pending", B, at(1), at(15), None, BOB)
UNATTRIBUTED_D = ("unattributed_change", D, at(1), at(1), at(2), BOB)
OTHERS = {DOMAIN_A, DOMAIN_B, SENSITIVE_B, PROPOSAL_B, UNATTRIBUTED_D, OWNER_E}


def scenario(spark, config, warehouse, engine, batches=(FIRST, SECOND, LATE)):
    store = engine_store(spark, warehouse, engine)
    ctx = RunContext(spark, store, config, "run-test", dt.datetime(2026, 2, 1, tzinfo=dt.timezone.utc))
    results, found, clocks, versions = [], [], [], []
    for batch, records in enumerate(batches):
        results.append(_run(ctx, records, batch))
        found.append(_rows(ctx))
        clocks.append(event_clock(store))
        versions.append(store.version(TABLE))
    results.append(gold_executor.run(governance_violations.SPEC, ctx))
    return ctx, results, found, clocks, versions


def _written(ctx, versions, batch) -> set[str]:
    """The entities whose rows the batch's commit wrote (its change data: rows copied unchanged
    by a group replacement are not new)."""
    added = ctx.store.read_added_since(TABLE, versions[batch - 1], versions[batch])
    return {r.entity_urn for r in added.select("entity_urn").collect()}


@pytest.fixture(scope="module")
def story(spark, config, tmp_path_factory):
    """The story on delta-rs, built batch by batch, then run once more with nothing new."""
    return scenario(spark, config, tmp_path_factory.mktemp("violations") / "warehouse", "delta-rs")


def test_each_rule_opens_after_its_duration_and_resolves_when_the_condition_ends(story):
    _ctx, _results, found, _clocks, _versions = story
    assert found[0] == OTHERS | {OWNER_A, OWNER_C}
    assert found[1] == OTHERS | {OWNER_A_RESOLVED, OWNER_C}  # A's owner on day 9


def test_a_late_owner_before_the_duration_makes_the_violation_disappear(story):
    _ctx, _results, found, _clocks, _versions = story
    assert found[2] == OTHERS | {OWNER_A_RESOLVED}


def test_the_clock_decides_which_violations_are_open(story):
    ctx, _results, _found, clocks, _versions = story
    assert clocks == [at(8), at(9), at(9)]  # the newest change: E's deletion, then A's owner
    assert _open_at(ctx, at(9)) == {("new_dataset_domain_missing", A), ("new_dataset_domain_missing", B)}
    assert _open_at(ctx, at(7)) == {
        ("dataset_owner_missing", A),
        ("dataset_owner_missing", E),
        ("new_dataset_domain_missing", A),
        ("new_dataset_domain_missing", B),
    }
    assert ("proposal_pending", B) in _open_at(ctx, at(15))  # not yet a violation at the clock


def test_a_batch_rewrites_only_the_groups_it_touches(story):
    ctx, results, _found, _clocks, versions = story
    assert results[0].message == "full build"
    assert [r.message for r in results[1:3]] == ["incremental", "incremental"]
    assert results[1].rows_out == 2  # A's two violations, rebuilt; B's, D's and E's untouched
    assert _written(ctx, versions, 1) == {A}
    assert results[2].rows_out == 0  # C's group: its one violation gone, nothing in its place
    assert _written(ctx, versions, 2) == set()


def test_rerunning_changes_nothing(story):
    ctx, results, found, _clocks, versions = story
    assert results[3].status == "SKIPPED"
    assert ctx.store.version(TABLE) == versions[-1]
    assert _rows(ctx) == found[2]


def test_violation_ids_are_stable_and_unique(story):
    ctx, *_ = story
    table = ctx.store.read(TABLE)
    assert table.select("violation_id").distinct().count() == table.count() == len(OTHERS) + 1
    rebuilt = governance_violations.SPEC.build(
        {s: governance_violations.relevant(s, ctx.store.read(s)) for s in governance_violations.SOURCES}
    )
    assert {r.violation_id for r in rebuilt.collect()} == {r.violation_id for r in table.collect()}


# Delta's JVM engine; make test-all builds this table on delta-spark in every whole-pipeline run of
# that engine (the samples, catalog tables, Spark Connect, the job cluster), each compared with delta-rs
@pytest.mark.slow
@pytest.mark.exhaustive
def test_the_story_on_delta_spark(spark, config, tmp_path):
    """The first two batches and the idle run: a group replaced by Delta's own engine."""
    skip_without_delta_spark("delta-spark")
    warehouse = tmp_path / "warehouse"
    ctx, results, found, _clocks, versions = scenario(
        spark, config, warehouse, "delta-spark", (FIRST, SECOND)
    )
    assert found == [OTHERS | {OWNER_A, OWNER_C}, OTHERS | {OWNER_A_RESOLVED, OWNER_C}]
    assert results[1].rows_out == 2
    assert _written(ctx, versions, 1) == {A}
    assert results[2].status == "SKIPPED"


# The rules file ---------------------------------------------------------------------------------


def test_the_packaged_rules_are_valid_and_carry_the_defaults():
    rules = load_rules(defaults.resolve("conf/governance_rules.yaml"), ("sensitive", "pii"))
    by_kind = {r.kind: r for r in rules}
    assert by_kind["owner_missing"].after_hours == 7 * 24
    assert by_kind["proposal_pending"].after_hours == 14 * 24
    assert by_kind["domain_missing"].after_hours == 3 * 24 and by_kind["domain_missing"].new_only
    assert by_kind["sensitive_tag_removed"].after_hours == 0
    assert by_kind["sensitive_tag_removed"].tag_classes == ("sensitive",)
    assert by_kind["unattributed_change"].after_hours == 0


def _rule(**fields) -> dict:
    return {"id": "r1", "kind": "owner_missing", "severity": "warn", **fields}


@pytest.mark.parametrize(
    ("rules", "message"),
    [
        ([_rule(kind="owner_gone")], "rules.yaml: rule 'r1': kind: must be one of"),
        ([_rule(severity="high")], "rules.yaml: rule 'r1': severity: must be one of"),
        ([_rule(after_days=-1)], "rules.yaml: rule 'r1': after_days: must be a number >= 0, got -1"),
        ([_rule(after_hours="7d")], "rules.yaml: rule 'r1': after_hours: must be a number >= 0, got '7d'"),
        ([_rule(after_days=1, after_hours=2)], "rule 'r1': after_days: give after_days or after_hours"),
        ([_rule(), _rule()], "rules.yaml: rule 'r1': id: duplicate id"),
        ([_rule(id="Bad Id")], "rules.yaml: rule 1: id: must be lower case"),
        ([_rule(sources=["hive"])], "rule 'r1': sources: each must be one of"),
        ([_rule(entity_types="dataset")], "rule 'r1': entity_types: must be a list of names"),
        ([_rule(kind="sensitive_tag_removed")], "rule 'r1': tag_classes: required"),
        ([_rule(tag_classes=["sensitive"])], "rule 'r1': tag_classes: only for kind sensitive_tag_removed"),
        (
            [_rule(kind="sensitive_tag_removed", tag_classes=["secret"])],
            "['secret'] not in governance.tag_classes",
        ),
        ([_rule(kind="proposal_pending", new_only=True)], "rule 'r1': new_only: only for kinds"),
        ([_rule(owner="bob")], "rule 'r1': owner: unknown field"),
        ("not a list", "rules.yaml: must be a mapping with one key, 'rules'"),
    ],
)
def test_rule_file_errors_name_the_rule_and_field(rules, message):
    with pytest.raises(ConfigError) as error:
        parse_rules({"rules": rules}, "rules.yaml", ("sensitive",))
    assert message in str(error.value)
    assert "\n" not in str(error.value)


def test_a_rules_file_that_is_not_yaml_is_one_line(tmp_path):
    path = tmp_path / "rules.yaml"
    path.write_text("rules: [\n  - id: x\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"^rules.yaml: cannot be read: ") as error:
        load_rules(path)
    assert "\n" not in str(error.value)


def test_changing_the_rules_changes_the_revision(tmp_path):
    packaged = yaml.safe_load(defaults.resolve("conf/governance_rules.yaml").read_text(encoding="utf-8"))
    rules = parse_rules(packaged, "rules.yaml")
    packaged["rules"][0]["after_days"] = 8
    edited = parse_rules(packaged, "rules.yaml")
    packaged["rules"][0]["description"] = "reworded"
    reworded = parse_rules(packaged, "rules.yaml")
    revisions = [governance_violations.spec_for(r).revision for r in (rules, edited, reworded)]
    assert revisions[0] != revisions[1] == revisions[2]  # a description changes no row


def test_the_configured_rules_file_is_the_one_evaluated(tmp_path):
    rules = tmp_path / "rules.yaml"
    rules.write_text(
        "rules:\n  - {id: stale_owner, kind: owner_missing, severity: critical, after_hours: 1}\n",
        encoding="utf-8",
    )
    conf = tmp_path / "lakehouse.yaml"
    conf.write_text(f"governance:\n  rules_file: {rules}\n", encoding="utf-8")
    configured = governance_violations.configured_spec(load_config(conf))
    packaged = governance_violations.configured_spec(load_config())
    assert configured.revision and packaged.revision and configured.revision != packaged.revision
    rules.write_text("rules:\n  - {id: stale_owner, kind: owner_missing, severity: high}\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"^rules.yaml: rule 'stale_owner': severity: must be one of"):
        governance_violations.configured_spec(load_config(conf))
