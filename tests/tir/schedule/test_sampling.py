"""sample_perfect_tile / sample_categorical: a fixed seed gives a fixed schedule (expected
TVMScript), the decisions are in the trace, and replaying the trace replays them."""

import json

from mlckit import tir
from mlckit.script import tir as T

from .common import check, expect_error, verify_numeric, verify_trace_roundtrip
from .workloads import matmul


@T.prim_func
def matmul_sampled(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32"),
                   C: T.Buffer((16, 16), "float32")):
    for i_0 in T.serial(4, annotations={"pragma_auto_unroll_max_step": 16}):
        for j_0, i_1, k, i_2, j_1 in T.grid(8, 2, 16, 2, 2):
            with T.block("C"):
                vi = T.axis.spatial(16, i_0 * 4 + i_1 * 2 + i_2)
                vj = T.axis.spatial(16, j_0 * 2 + j_1)
                vk = T.axis.reduce(16, k)
                T.reads(A[vi, vk], B[vk, vj])
                T.writes(C[vi, vj])
                with T.init():
                    C[vi, vj] = T.float32(0)
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


def sampled_schedule(sch: tir.Schedule) -> tir.Schedule:
    block = sch.get_block("C")
    i, j, k = sch.get_loops(block)
    i_factors = sch.sample_perfect_tile(i, n=3, max_innermost_factor=4)
    j_factors = sch.sample_perfect_tile(j, n=2, max_innermost_factor=8)
    i0, i1, i2 = sch.split(i, factors=i_factors)
    j0, j1 = sch.split(j, factors=j_factors)
    sch.reorder(i0, j0, i1, k, i2, j1)
    unroll = sch.sample_categorical(candidates=[0, 16, 64], probs=[0.25, 0.5, 0.25])
    sch.annotate(i0, "pragma_auto_unroll_max_step", unroll)
    return sch


def test_fixed_seed_gives_expected_script():
    sch = sampled_schedule(tir.Schedule(matmul, seed=2024))
    check(sch, matmul_sampled)
    verify_numeric(matmul, sch.mod)
    text = str(sch.trace)
    assert "sample_perfect_tile(loop=l1, n=3, max_innermost_factor=4, decision=[4, 2, 2])" in text
    assert "sample_perfect_tile(loop=l2, n=2, max_innermost_factor=8, decision=[8, 2])" in text
    assert ("sample_categorical(candidates=[0, 16, 64], probs=[0.25, 0.5, 0.25], decision=1)"
            in text)
    # TVM prints the key before the value
    assert ('sch.annotate(block_or_loop=l9, ann_key="pragma_auto_unroll_max_step", ann_val=v14)'
            in text)


def test_sampled_values_and_decisions():
    sch = tir.Schedule(matmul, seed=2024)
    sampled_schedule(sch)
    insts, decisions = json.loads(sch.trace.to_json())
    assert decisions == [[2, [4, 2, 2]], [3, [8, 2]], [7, 1]]
    assert [inst[0] for inst in insts] == [
        "GetBlock", "GetLoops", "SamplePerfectTile", "SamplePerfectTile", "Split", "Split",
        "Reorder", "SampleCategorical", "Annotate"]


def test_decisions_replay_under_another_seed():
    sch = sampled_schedule(tir.Schedule(matmul, seed=2024))
    verify_trace_roundtrip(sch, matmul)
    for seed in (0, 1, 99):  # the decisions, not the seed, decide the replay
        fresh = tir.Schedule(matmul, seed=seed)
        tir.Trace.apply_json_to_schedule(sch.trace.to_json(), fresh)
        check(fresh, matmul_sampled)


def test_same_seed_same_samples_other_seed_may_differ():
    def run(seed):
        return sampled_schedule(tir.Schedule(matmul, seed=seed)).trace.decisions

    assert run(2024) == run(2024)
    assert len({json.dumps(list(run(s).values())) for s in range(8)}) > 1


def test_sampled_factors_are_perfect_tiles():
    for seed in range(20):
        sch = tir.Schedule(matmul, seed=seed)
        i = sch.get_loops(sch.get_block("C"))[0]
        values = [sch.get(v) for v in sch.sample_perfect_tile(i, n=3, max_innermost_factor=4)]
        assert values[0] * values[1] * values[2] == 16 and values[2] <= 4
        v = sch.get(sch.sample_categorical([3, 5, 7], [0.0, 1.0, 0.0]))
        assert v == 5


def test_sample_categorical_rejects_bad_probabilities():
    sch = tir.Schedule(matmul)
    expect_error(sch, lambda: sch.sample_categorical([1, 2], [0.5]), "sample_categorical",
                 "non-empty and of equal length")
    expect_error(sch, lambda: sch.sample_categorical([1, 2], [-0.5, 1.5]), "sample_categorical",
                 "non-negative with a positive sum")
