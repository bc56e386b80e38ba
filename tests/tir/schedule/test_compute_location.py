"""sample_compute_location: each decision is one of compute_inline, staying at the root, or
compute_at under a consumer loop — the same module as those primitives give."""

import pytest

from mlckit.ir import assert_structural_equal
from mlckit.tir import Schedule, ScheduleError
from mlckit.tir.schedule import Trace
from mlckit.tir.schedule.compute_location import compute_locations

from .workloads import elementwise, matmul


def _sampled(decision):
    sch = Schedule(elementwise)
    block = sch.get_block("B")
    loc = sch.sample_compute_location(block, decision=decision)
    sch.compute_at(block, loc, preserve_unit_loops=True)
    return sch


def test_locations_are_inline_root_and_the_consumers_loops():
    sch = Schedule(elementwise)
    assert compute_locations(sch, sch.get_block("B")) == [-2, -1, 0, 1]


def test_root_leaves_the_block_where_it_is():
    assert_structural_equal(_sampled(-1).mod, Schedule(elementwise).mod)


def test_inline_is_compute_inline():
    expected = Schedule(elementwise)
    expected.compute_inline(expected.get_block("B"))
    assert_structural_equal(_sampled(-2).mod, expected.mod)


@pytest.mark.parametrize("decision", [0, 1])
def test_a_loop_index_is_compute_at_that_consumer_loop(decision):
    expected = Schedule(elementwise)
    loop = expected.get_loops(expected.get_block("C"))[decision]
    expected.compute_at(expected.get_block("B"), loop, preserve_unit_loops=True)
    assert_structural_equal(_sampled(decision).mod, expected.mod)


def test_the_trace_replays_the_sampled_location():
    for seed in range(4):
        sch = Schedule(elementwise, seed=seed)
        block = sch.get_block("B")
        sch.compute_at(block, sch.sample_compute_location(block), preserve_unit_loops=True)
        again = Schedule(elementwise)
        Trace.apply_json_to_schedule(sch.trace.as_json(), again)
        assert_structural_equal(again.mod, sch.mod)


def test_a_block_without_consumers_can_only_stay():
    sch = Schedule(matmul)
    assert compute_locations(sch, sch.get_block("C")) == [-1]


def test_an_invalid_decision_is_refused():
    sch = Schedule(elementwise)
    with pytest.raises(ScheduleError, match=r"decision 5 is not a compute location of block `B`"
                                            r".*\[-2, -1, 0, 1\]"):
        sch.sample_compute_location(sch.get_block("B"), decision=5)
