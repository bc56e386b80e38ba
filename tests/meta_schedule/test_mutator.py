"""Mutators change one sampling decision and keep the trace valid."""

import math
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from mlckit import meta_schedule as ms
from mlckit.tir import Schedule
from mlckit.tir.schedule import Trace

from .workloads import Matmul


def _sampled_trace(seed):
    sch = Schedule(Matmul, seed=seed)
    block = sch.get_block("C")
    i, j, k = sch.get_loops(block)
    sch.split(i, sch.sample_perfect_tile(i, n=4, max_innermost_factor=4))
    root = sch.get_block("root")
    v = sch.sample_categorical([0, 16, 64, 512], [0.25] * 4)
    sch.annotate(root, "meta_schedule.unroll_explicit", v)
    return sch.trace.as_json()


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), rng_seed=st.integers(0, 10_000))
def test_mutate_tile_size_keeps_the_product_and_the_innermost_limit(seed, rng_seed):
    trace = _sampled_trace(seed)
    new = ms.mutator.MutateTileSize().apply(trace, random.Random(rng_seed))
    (index, old), = [(i, d) for i, d in trace[1] if trace[0][i][0] == "SamplePerfectTile"]
    if new is None:  # nothing to move: every factor is 1 but one that cannot move
        return
    tile = dict((i, d) for i, d in new[1])[index]
    assert math.prod(tile) == 32 and tile[-1] <= 4 and tile != old
    sch = Schedule(Matmul)
    Trace.apply_json_to_schedule(new, sch)  # the mutated trace replays


def test_mutate_unroll_picks_another_depth():
    trace = _sampled_trace(0)
    (index, old), = [(i, d) for i, d in trace[1] if trace[0][i][0] == "SampleCategorical"]
    for seed in range(10):
        new = ms.mutator.MutateUnroll().apply(trace, random.Random(seed))
        assert dict((i, d) for i, d in new[1])[index] != old


def test_mutate_unroll_ignores_other_categoricals():
    sch = Schedule(Matmul, seed=0)
    sch.sample_categorical([1, 2], [0.5, 0.5])
    assert ms.mutator.MutateUnroll().apply(sch.trace.as_json(), random.Random(0)) is None


def test_mutate_compute_location_picks_another_valid_location():
    from mlckit.ir import IRModule
    from tests.tir.schedule.workloads import elementwise

    mod = IRModule({"main": elementwise})
    sch = Schedule(mod, seed=0)
    block = sch.get_block("B")
    sch.compute_at(block, sch.sample_compute_location(block, decision=-1))
    trace = sch.trace.as_json()
    mutator = ms.mutator.MutateComputeLocation()
    mutator.initialize_with_tune_context(ms.TuneContext(mod))
    for seed in range(6):
        new = mutator.apply(trace, random.Random(seed))
        decision = dict((i, d) for i, d in new[1])[1]
        assert decision in (-2, 0, 1)
        Trace.apply_json_to_schedule(new, Schedule(mod))  # replays
