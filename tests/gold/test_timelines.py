"""Association timelines end to end: silver rows -> relevant -> build, per source and rule."""

from __future__ import annotations

from functools import partial

import pytest

from gold import current_views, domain_timeline, glossary_term_timeline, ownership_timeline, tag_timeline
from gold.intervals import interval_columns
from tests.support.gold import (
    DAY,
    assert_extended_equals_full,
    assert_incremental_equals_full,
    at,
    build_all,
    build_extended,
    entity_change,
    rows,
)

DH = "silver.datahub_entity_changes"
OM_FIELDS = "silver.openmetadata_field_changes"
OM_EVENTS = "silver.openmetadata_change_events"
DS = "urn:li:dataset:(urn:li:dataPlatform:hive,shop.orders,PROD)"
FIELD = f"urn:li:schemaField:({DS},customer_id)"
PII = "urn:li:tag:PII"
SOFT_DELETED = "urn:li:dataset:(urn:li:dataPlatform:hive,shop.gone,PROD)"
TABLE = "openmetadata:table:shop.db.orders"
COLUMN = "openmetadata:column:shop.db.orders.email"
INTERVAL = ("entity_urn", "valid_from", "valid_to", "is_current", "added_by", "removed_by", "end_reason")


dh = partial(entity_change, entity=DS, actor="urn:li:corpuser:ann")


def label(fqn, origin="Classification"):
    return dict(tagFQN=fqn, source=origin, labelType="Manual", state="Confirmed")


def om_tags(event_id, time, kind, old=(), new=(), column=None, actor="ann"):
    field = f"columns.{column}.tags" if column else "tags"
    return dict(
        event_id=event_id,
        event_time=time,
        change_event_id=f"ce-{event_id}",
        entity_key=TABLE,
        entity_type="table",
        entity_fqn="shop.db.orders",
        actor=actor,
        change_kind=kind,
        field_name=field,
        field_base="tags",
        column_name=column,
        old_tags=[label(*t) if isinstance(t, tuple) else label(t) for t in old] or None,
        new_tags=[label(*t) if isinstance(t, tuple) else label(t) for t in new] or None,
    )


def test_tag_timeline_columns_and_modifier_fallback(sources):
    built = build_all(tag_timeline.SPEC, sources(datahub=[dh("e1", "10:00", "TAG", "ADD", modifier=PII)]))
    assert built.columns == interval_columns(["tag_urn"])
    assert rows(built, "source", "tag_urn", "is_current") == [("datahub", PII, True)]


def test_hard_delete_closes_dataset_and_field_tags(sources):
    built = build_all(
        tag_timeline.SPEC,
        sources(
            datahub=[
                dh("e1", "10:00", "TAG", "ADD", tagUrn=PII),
                dh("e2", "10:05", "TAG", "ADD", entity=FIELD, tagUrn=PII),
                dh("e3", "10:10", "DOCUMENTATION", "ADD", description="ignored"),
                dh("d1", "11:00", "LIFECYCLE", "HARD_DELETE", actor="urn:li:corpuser:admin"),
            ]
        ),
    )
    closed = (False, "urn:li:corpuser:ann", "urn:li:corpuser:admin", "ENTITY_DELETED")
    assert rows(built, *INTERVAL) == [(DS, "10:00", "11:00", *closed), (FIELD, "10:05", "11:00", *closed)]
    assert rows(built, "root_urn") == [(DS,), (DS,)]


def test_each_source_is_scanned_once_by_a_build(spark, tmp_path, sources):
    """The deletion fan-out uses the deduplicated events three ways (association events,
    associations, deletions); the three must share one scan of each source (a reused exchange),
    not read every source three times."""
    batch = sources(
        datahub=[
            dh("e1", "10:00", "TAG", "ADD", tagUrn=PII),
            dh("e2", "10:05", "TAG", "ADD", entity=FIELD, tagUrn=PII),
            dh("d1", "11:00", "LIFECYCLE", "HARD_DELETE", actor="urn:li:corpuser:admin"),
        ],
        fields=[om_tags("f1", "10:00", "added", new=["PII.Sensitive"])],
        events=[dict(event_id="x1", event_time="13:00", event_type="entityDeleted", entity_key=TABLE)],
    )
    stored = {}
    for table, frame in batch.items():
        frame.write.parquet(str(tmp_path / table))
        stored[table] = spark.read.parquet(str(tmp_path / table))
    built = build_all(tag_timeline.SPEC, stored)
    assert rows(built, *INTERVAL) == rows(build_all(tag_timeline.SPEC, batch), *INTERVAL)
    built.collect()  # runs `built` itself, so its adaptive plan below is the final one
    final_plan = built._jdf.queryExecution().executedPlan().toString().split("== Initial Plan ==")[0]
    assert final_plan.count("FileScan parquet") == len(stored), final_plan


def test_owner_and_ownership_are_one_category_keyed_by_type(sources):
    ann = "urn:li:corpuser:ann"
    built = build_all(
        ownership_timeline.SPEC,
        sources(
            datahub=[
                dh("o1", "10:00", "OWNER", "ADD", ownerUrn=ann, ownerType="TECHNICAL_OWNER"),
                dh("o2", "10:00", "OWNERSHIP", "ADD", ownerUrn=ann, ownerType="BUSINESS_OWNER"),
                dh("o3", "11:00", "OWNERSHIP", "REMOVE", ownerUrn=ann, ownerType="TECHNICAL_OWNER"),
                dh("o4", "11:30", "OWNER", "MODIFY", ownerUrn=ann, ownerType="BUSINESS_OWNER"),
            ]
        ),
    )
    assert rows(built, "owner_urn", "owner_type", "valid_from", "valid_to", "end_reason") == [
        (ann, "BUSINESS_OWNER", "10:00", None, None),
        (ann, "TECHNICAL_OWNER", "10:00", "11:00", "REMOVED"),
    ]


def test_glossary_terms_and_domains(sources):
    term, domain = "urn:li:glossaryTerm:Email", "urn:li:domain:sales"
    batch = sources(
        datahub=[
            dh("t1", "10:00", "GLOSSARY_TERM", "ADD", entity=FIELD, termUrn=term),
            dh("t2", "10:30", "GLOSSARY_TERM", "REMOVE", entity=FIELD, termUrn=term),
            dh("m1", "10:00", "DOMAIN", "ADD", domainUrn=domain),
        ]
    )
    terms = build_all(glossary_term_timeline.SPEC, batch)
    assert rows(terms, "entity_urn", "parent_urn", "term_urn", "valid_to") == [(FIELD, DS, term, "10:30")]
    domains = build_all(domain_timeline.SPEC, {DH: batch[DH]})
    assert rows(domains, "entity_urn", "domain_urn", "is_current") == [(DS, domain, True)]


def test_openmetadata_tag_add_remove_and_column_tags(sources):
    batch = sources(
        fields=[
            om_tags("f1", "10:00", "added", new=["PII.Sensitive", ("Sales.Revenue", "Glossary")]),
            om_tags("f2", "11:00", "updated", old=["PII.Sensitive"], new=["Tier.Tier1"]),
            om_tags("f3", "10:30", "added", new=["PII.Email"], column="email"),
            om_tags("f4", "12:00", "deleted", old=["Tier.Tier1"], actor="bob"),
        ],
        events=[
            dict(event_id="x1", event_time="13:00", event_type="entityDeleted", entity_key=TABLE, actor="ops")
        ],
    )
    tags = build_all(tag_timeline.SPEC, batch)
    assert rows(
        tags, "source", "entity_urn", "parent_urn", "tag_urn", "valid_from", "valid_to", "end_reason"
    ) == [
        ("openmetadata", COLUMN, TABLE, "PII.Email", "10:30", "13:00", "ENTITY_DELETED"),
        ("openmetadata", TABLE, None, "PII.Sensitive", "10:00", "11:00", "REMOVED"),
        ("openmetadata", TABLE, None, "Tier.Tier1", "11:00", "12:00", "REMOVED"),
    ]
    terms = build_all(glossary_term_timeline.SPEC, batch)
    assert rows(terms, "term_urn", "valid_from", "end_reason") == [
        ("Sales.Revenue", "10:00", "ENTITY_DELETED")
    ]


def test_openmetadata_owners_by_name_and_type(sources):
    def ref(name, kind):
        return dict(id=f"id-{name}", type=kind, name=name)

    owners = [
        dict(event_id="w1", event_time="10:00", entity_key=TABLE, actor="ann", change_kind="added",
             field_name="owners", field_base="owners", new_owners=[ref("ann", "user")]),
        dict(event_id="w2", event_time="11:00", entity_key=TABLE, actor="bob", change_kind="updated",
             field_name="owners", field_base="owners", old_owners=[ref("ann", "user")],
             new_owners=[ref("data-team", "team")]),
    ]  # fmt: skip
    built = build_all(ownership_timeline.SPEC, sources(fields=owners))
    assert rows(built, "owner_urn", "owner_type", "valid_from", "valid_to", "removed_by") == [
        ("ann", "user", "10:00", "11:00", "bob"),
        ("data-team", "team", "11:00", None, None),
    ]


@pytest.mark.slow  # builds three times
def test_incremental_late_and_delete_equal_full_rebuild(sources):
    other = "urn:li:dataset:(urn:li:dataPlatform:hive,shop.items,PROD)"
    first = sources(
        datahub=[
            dh("e1", "10:00", "TAG", "ADD", tagUrn=PII),
            dh("e3", "12:00", "TAG", "REMOVE", tagUrn=PII),
            dh("e4", "13:00", "TAG", "ADD", tagUrn=PII),
            dh("e5", "10:00", "TAG", "ADD", entity=FIELD, tagUrn=PII),
            dh("i1", "10:00", "TAG", "ADD", entity=other, tagUrn=PII),
        ],
        fields=[om_tags("f1", "10:00", "added", new=["PII.Sensitive"])],
    )
    second = sources(
        datahub=[
            dh("e2", "11:00", "TAG", "REMOVE", tagUrn=PII, actor="urn:li:corpuser:late"),  # late, between
            dh("e1", "10:00", "TAG", "ADD", tagUrn=PII),  # re-delivered duplicate
            dh("d1", "14:00", "LIFECYCLE", "HARD_DELETE"),
        ],
        fields=[om_tags("f2", "09:00", "deleted", old=["PII.Sensitive"])],  # REMOVE before the ADD: no-op
    )
    assert_incremental_equals_full(tag_timeline.SPEC, first, second)
    full = build_all(tag_timeline.SPEC, {name: first[name].unionByName(second[name]) for name in first})
    assert rows(full.filter(f"entity_urn = '{DS}'"), "valid_from", "valid_to", "end_reason") == [
        ("10:00", "11:00", "REMOVED"),
        ("13:00", "14:00", "ENTITY_DELETED"),
    ]


def test_current_view_and_as_of_sql(spark, sources):
    built = build_all(
        tag_timeline.SPEC,
        sources(
            datahub=[
                dh("e1", "10:00", "TAG", "ADD", tagUrn=PII),
                dh("e2", "11:00", "TAG", "REMOVE", tagUrn=PII),
                dh("e3", "10:30", "TAG", "ADD", entity=FIELD, tagUrn="urn:li:tag:Email"),
                dh("e4", "10:00", "TAG", "ADD", entity=SOFT_DELETED, tagUrn=PII),
            ]
        ),
    ).localCheckpoint()  # built once: the four queries below read it
    built.createOrReplaceTempView("tag_timeline_test")
    statuses = [(DS, "ACTIVE", True), (SOFT_DELETED, "ACTIVE", False), (SOFT_DELETED, "SOFT_DELETED", True)]
    spark.createDataFrame(
        statuses, "entity_urn string, status string, is_current boolean"
    ).createOrReplaceTempView("entity_status_timeline_test")

    def query(sql: str) -> list[tuple]:
        sql = sql.replace("gold.tag_timeline", "tag_timeline_test")
        sql = sql.replace("gold.entity_status_timeline", "entity_status_timeline_test")
        return rows(spark.sql(sql), "entity_urn", "tag_urn")

    assert query(current_views.VIEWS["gold.current_tags"]) == [(FIELD, "urn:li:tag:Email")]
    assert query(current_views.as_of_sql("gold.tag_timeline", DS, f"{DAY} 10:59:59")) == [(DS, PII)]
    assert query(current_views.as_of_sql("gold.tag_timeline", DS, f"{DAY} 11:00:00")) == []
    with_fields = current_views.as_of_sql("gold.tag_timeline", DS, at("10:45"), include_fields=True)
    assert query(with_fields) == [(DS, PII), (FIELD, "urn:li:tag:Email")]


@pytest.mark.slow  # builds three times
def test_later_events_extend_current_rows_like_a_full_rebuild(sources):
    """Open intervals closed by a REMOVE and by a deletion of the dataset (which also closes its
    field's tag), a no-op ADD on an open tag, a REMOVE of a closed one, a tag re-added after its
    removal, OpenMetadata updates; and untouched groups keep their rows."""
    other = "urn:li:dataset:(urn:li:dataPlatform:hive,shop.items,PROD)"
    gold = "urn:li:tag:Gold"
    first = sources(
        datahub=[
            dh("e1", "10:00", "TAG", "ADD", tagUrn=PII),
            dh("e2", "10:05", "TAG", "ADD", entity=FIELD, tagUrn=PII),
            dh("e3", "10:10", "TAG", "ADD", tagUrn=gold),
            dh("e4", "10:20", "TAG", "REMOVE", tagUrn=gold),
            dh("i1", "10:00", "TAG", "ADD", entity=other, tagUrn=PII),
        ],
        fields=[om_tags("f1", "10:00", "added", new=["PII.Sensitive"])],
    )
    second = sources(
        datahub=[
            dh("e5", "11:00", "TAG", "ADD", tagUrn=PII),  # already open: nothing changes
            dh("e6", "11:10", "TAG", "REMOVE", tagUrn=gold),  # already closed: nothing changes
            dh("e7", "11:20", "TAG", "ADD", tagUrn=gold),  # re-added: a new interval
            dh("e8", "11:20", "TAG", "REMOVE", tagUrn=gold),  # same instant: zero length
            dh("d1", "12:00", "LIFECYCLE", "HARD_DELETE", actor="urn:li:corpuser:admin"),
            dh("e9", "13:00", "TAG", "ADD", tagUrn=PII),  # after the deletion: new life
        ],
        fields=[om_tags("f2", "11:00", "updated", old=["PII.Sensitive"], new=["Tier.Tier1"])],
    )
    assert_extended_equals_full(tag_timeline.SPEC, first, second)
    extended = build_extended(tag_timeline.SPEC, first, second).filter(f"entity_urn in ('{DS}', '{FIELD}')")
    assert rows(extended, "entity_urn", "tag_urn", "valid_from", "valid_to", "end_reason") == [
        (DS, gold, "10:10", "10:20", "REMOVED"),
        (DS, gold, "11:20", "11:20", "REMOVED"),
        (DS, PII, "10:00", "12:00", "ENTITY_DELETED"),
        (DS, PII, "13:00", None, None),
        (FIELD, PII, "10:05", "12:00", "ENTITY_DELETED"),
    ]


@pytest.mark.slow  # replays a stream at many cut points
@pytest.mark.parametrize("spec", [tag_timeline.SPEC, ownership_timeline.SPEC], ids=["tags", "owners"])
def test_a_random_in_order_stream_extended_at_any_cut_equals_a_full_rebuild(sources, spec):
    """Hundreds of random DataHub events on two datasets, a field and three tags/owners, with
    deletions, cut at three instants: the rows after the cut extend the rows before it."""
    import random

    rng = random.Random(7)
    entities = [DS, FIELD, "urn:li:dataset:(urn:li:dataPlatform:hive,shop.items,PROD)"]
    values = ["urn:li:tag:A", "urn:li:tag:B", "urn:li:corpuser:C"]
    events = []
    for n in range(240):
        time = f"{10 + n // 60:02d}:{n % 60:02d}"
        entity = rng.choice(entities)
        if rng.random() < 0.05:
            events.append(dh(f"x{n}", time, "LIFECYCLE", "HARD_DELETE", entity=entity))
            continue
        operation = rng.choice(["ADD", "ADD", "REMOVE"])
        value = rng.choice(values)
        if spec is tag_timeline.SPEC:
            events.append(dh(f"x{n}", time, "TAG", operation, entity=entity, tagUrn=value))
        else:
            events.append(
                dh(f"x{n}", time, "OWNER", operation, entity=entity, ownerUrn=value, ownerType="DATAOWNER")
            )
        if rng.random() < 0.1:  # a second event at the same instant
            events.append(dh(f"y{n}", time, "TAG" if spec is tag_timeline.SPEC else "OWNER", "REMOVE",
                             entity=entity, tagUrn=value, ownerUrn=value, ownerType="DATAOWNER"))  # fmt: skip
    for cut in ("10:30", "11:45", "13:15"):
        first = sources(datahub=[e for e in events if e["event_time"] <= cut])
        second = sources(datahub=[e for e in events if e["event_time"] > cut])
        assert_extended_equals_full(spec, first, second)
