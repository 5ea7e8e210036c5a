"""The receiver's open segments on real files: what bronze may see, when they roll, what a restart
makes of one a dead receiver left open."""

from __future__ import annotations

import os

from pipelines.collectors.landing_segments import SegmentWriter, open_name, recover
from pipelines.landing import discover

GOOD = b'{"id": 1}'


def _segment(folder, clock=None, **limits) -> SegmentWriter:
    limits = {"max_bytes": 1 << 20, "max_seconds": 60.0, **limits}
    return SegmentWriter(folder, clock=clock or (lambda: 0.0), **limits)


def test_an_open_segment_is_invisible_to_discovery_until_it_rolls(tmp_path):
    segment = _segment(tmp_path)
    segment.append([(GOOD, True)])
    segment.append([(b'{"id": 2}', True)])
    assert discover(tmp_path) == [] and len(list(tmp_path.glob("_open.*"))) == 1
    final = segment.roll()
    assert [f.path for f in discover(tmp_path)] == [str(final)]
    assert final.read_bytes() == b'{"id": 1}\n{"id": 2}\n'
    assert list(tmp_path.glob("_*")) == [] and segment.files == 1


def test_a_batch_puts_the_bodies_that_parse_first_and_each_body_on_one_line(tmp_path):
    segment = _segment(tmp_path)
    segment.append([(b"{broken", False), (b'{"id":\n 1}', True)])
    assert segment.roll().read_bytes() == b'{"id":  1}\n{broken\n'


def test_unparseable_bodies_that_would_open_a_segment_get_a_file_each_and_later_ones_join_it(tmp_path):
    segment = _segment(tmp_path)
    segment.append([(b"{broken", False), (b"nope", False)])
    assert sorted(p.read_bytes() for p in tmp_path.iterdir()) == [b"nope\n", b"{broken\n"]
    segment.append([(GOOD, True)])
    segment.append([(b"[1,", False)])
    rolled = segment.roll()
    assert rolled.read_bytes() == b'{"id": 1}\n[1,\n' and segment.files == 3


def test_a_segment_is_due_when_full_or_old_and_not_before(tmp_path):
    now = [0.0]
    segment = _segment(tmp_path, clock=lambda: now[0], max_bytes=30, max_seconds=5.0)
    assert segment.seconds_until_due() is None and segment.roll_if_due() is None
    segment.append([(GOOD, True)])
    now[0] = 4.0
    assert segment.seconds_until_due() == 1.0 and segment.roll_if_due() is None
    segment.append([(GOOD, True), (GOOD, True)])  # 30 bytes: full
    assert segment.roll_if_due() is not None
    segment.append([(GOOD, True)])  # a new segment, opened at 4 s
    now[0] = 8.5
    assert segment.roll_if_due() is None
    now[0] = 9.0
    assert segment.roll_if_due() is not None
    assert len(discover(tmp_path)) == 2


def test_recovery_keeps_the_complete_lines_cuts_a_torn_one_and_drops_a_segment_with_none(tmp_path):
    torn = tmp_path / open_name("received-20261202T100000000000-1-000001.jsonl")
    torn.write_bytes(b'{"id": 1}\n{"id": 2}\n{"id": 3, "na')  # a power cut in the middle of a write
    empty = tmp_path / open_name("received-20261202T100000000000-1-000002.jsonl")
    empty.write_bytes(b'{"id": 4, "na')
    made = recover(tmp_path)
    assert [p.name for p in made] == ["received-20261202T100000000000-1-000001.jsonl"]
    assert made[0].read_bytes() == b'{"id": 1}\n{"id": 2}\n'
    assert list(tmp_path.glob("_*")) == []


def test_recovery_leaves_alone_a_segment_a_live_writer_holds(tmp_path):
    live = _segment(tmp_path)
    live.append([(GOOD, True)])
    assert recover(tmp_path) == []
    live.append([(GOOD, True)])
    assert live.roll().read_bytes() == b'{"id": 1}\n{"id": 1}\n'
    assert [name for name in os.listdir(tmp_path) if name.startswith("_")] == []
