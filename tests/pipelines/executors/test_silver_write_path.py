"""Silver's write path follows from the measured batch alone."""

from pipelines.executors.silver import WritePath, write_path
from pipelines.quality import BatchMeasure


def test_a_batch_with_every_row_quarantined_writes_no_rows():
    assert write_path(BatchMeasure(rows=3, outcomes=[], rejected=3)) is WritePath.NO_ROWS
    assert write_path(BatchMeasure(rows=0, outcomes=[], rejected=0)) is WritePath.NO_ROWS


def test_distinct_keys_measured_as_new_are_appended_as_they_are():
    batch = BatchMeasure(rows=5, outcomes=[], rejected=1, accepted_uniqueness=[], accepted_distinct=4)
    assert write_path(batch) is WritePath.APPEND_AS_IS


def test_a_repeated_key_or_keys_not_measured_are_deduplicated():
    repeated = BatchMeasure(rows=5, outcomes=[], rejected=1, accepted_uniqueness=[], accepted_distinct=3)
    assert write_path(repeated) is WritePath.DEDUPLICATE
    assert write_path(BatchMeasure(rows=5, outcomes=[], rejected=1)) is WritePath.DEDUPLICATE
