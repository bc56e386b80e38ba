"""Trace printing, JSON round trip, sampling with seeds and replayed decisions."""

import json

from mlckit import tir
from mlckit.ir import assert_structural_equal

from .common import expect_error, verify_numeric, verify_trace_roundtrip
from .workloads import matmul


def stochastic_schedule_mm(sch: tir.Schedule):
    block_C = sch.get_block("C", "main")
    i, j, k = sch.get_loops(block=block_C)
    j_factors = sch.sample_perfect_tile(loop=j, n=2)
    j_0, j_1 = sch.split(loop=j, factors=j_factors)
    sch.reorder(i, j_0, k, j_1)
    sch.decompose_reduction(block_C, k)
    return sch


def test_trace_as_python():
    sch = tir.Schedule(matmul)
    block = sch.get_block("C")
    i, j, k = sch.get_loops(block)
    j0, j1 = sch.split(j, factors=[None, 4])
    sch.reorder(i, j0, k, j1)
    lines = sch.trace.as_python()
    assert lines == [
        'b0 = sch.get_block(name="C", func_name="main")',
        "l1, l2, l3 = sch.get_loops(block=b0)",
        "l4, l5 = sch.split(loop=l2, factors=[None, 4], preserve_unit_iters=True, "
        "disable_predication=False)",
        "sch.reorder(l1, l4, l3, l5)",
    ]
    assert str(sch.trace).startswith("# from tvm import tir\ndef apply_trace(sch: tir.Schedule)")
    json.loads(sch.trace.to_json())
    verify_trace_roundtrip(sch, matmul)


def test_stochastic_schedule_replays():
    sch = tir.Schedule(matmul, seed=7)
    stochastic_schedule_mm(sch)
    text = str(sch.trace)
    assert "sample_perfect_tile(loop=l2, n=2, max_innermost_factor=16, decision=[" in text
    factors = [sch.get(lp).extent.value for lp in sch.get_loops(sch.get_block("C_update"))]
    assert factors[1] * factors[3] == 16 and factors[3] <= 16
    verify_trace_roundtrip(sch, matmul)
    verify_numeric(matmul, sch.mod)


def test_seed_makes_sampling_reproducible():
    def run(seed):
        sch = tir.Schedule(matmul, seed=seed)
        return [tuple(sch.get(v) for v in sch.sample_perfect_tile(
            sch.get_loops(sch.get_block("C"))[1], n=3)) for _ in range(5)]

    assert run(1) == run(1)
    results = {tuple(run(s)) for s in range(5)}
    assert len(results) > 1
    sch = tir.Schedule(matmul, seed=3)
    assert isinstance(sch.fork_seed(), int)


def test_sample_categorical_and_decision():
    sch = tir.Schedule(matmul, seed=0)
    v = sch.sample_categorical(candidates=[1, 2, 4], probs=[0.0, 0.0, 1.0])
    assert sch.get(v) == 4
    fresh = tir.Schedule(matmul)
    tir.Trace.apply_json_to_schedule(sch.trace.to_json(), fresh)
    assert_structural_equal(fresh.mod, sch.mod)


def test_replay_with_other_decision():
    sch = tir.Schedule(matmul, seed=0)
    stochastic_schedule_mm(sch)
    trace = sch.trace.with_decision(2, [4, 4])
    fresh = tir.Schedule(matmul)
    trace.apply_to_schedule(fresh)
    assert [fresh.get(lp).extent.value for lp in fresh.get_loops(fresh.get_block("C_update"))] == [16, 4, 16, 4]


def test_sample_perfect_tile_errors():
    sch = tir.Schedule(matmul)
    j = sch.get_loops(sch.get_block("C"))[1]
    expect_error(sch, lambda: sch.sample_perfect_tile(j, n=2, decision=[3, 5]),
                 "sample_perfect_tile", "decision [3, 5] is not 2 factors of 16")
