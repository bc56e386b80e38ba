"""Design spaces: ScheduleFn (the course's stochastic schedule) and PostOrderApply (the
built-in CPU rules), checked against the same primitives written by hand."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mlckit
from mlckit import meta_schedule as ms
from mlckit.ir import assert_structural_equal
from mlckit.tir import Schedule

from .workloads import Linear, Matmul, run_matmul, stochastic_schedule_mm

TARGET = "llvm --num-cores=1"


def _context(mod, space, seed=0):
    return ms.TuneContext(mod, TARGET, space_generator=space, rand_state=seed)


def _decisions(sch):
    return [d for _, d in sch.trace.as_json()[1]]


def test_schedule_fn_gives_the_functions_schedule():
    (sch,) = _context(Matmul, ms.space_generator.ScheduleFn(stochastic_schedule_mm)) \
        .generate_design_space()
    j_factors = _decisions(sch)[0]
    expected = Schedule(Matmul)
    block = expected.get_block("C")
    i, j, k = expected.get_loops(block)
    j0, j1 = expected.split(j, factors=j_factors)
    expected.reorder(i, j0, k, j1)
    expected.decompose_reduction(block, k)
    assert_structural_equal(sch.mod, expected.mod)


def test_a_plain_function_is_a_schedule_fn():
    space = ms.space_generator.SpaceGenerator.create(stochastic_schedule_mm)
    assert isinstance(space, ms.space_generator.ScheduleFn)


def test_space_function_that_raises_is_named():
    def broken_space(sch):
        sch.get_block("no_such_block", "main")

    ctx = _context(Matmul, ms.space_generator.ScheduleFn(broken_space))
    with pytest.raises(ms.SpaceGeneratorError, match=r"'broken_space' raised ScheduleError.*"
                                                     r"no_such_block"):
        ctx.generate_design_space()


def test_space_function_returning_junk_is_refused():
    ctx = _context(Matmul, ms.space_generator.ScheduleFn(lambda sch: 42))
    with pytest.raises(ms.SpaceGeneratorError, match="must return a tir.Schedule.*int"):
        ctx.generate_design_space()


def test_post_order_apply_tiles_matmul_into_three_spaces():
    spaces = _context(Matmul, "post-order-apply").generate_design_space()
    assert len(spaces) == 3  # no write cache; a cache at tile level 1; at tile level 2
    for sch in spaces:
        d = _decisions(sch)
        assert [len(x) for x in d[:3]] == [4, 4, 2]
        assert [int(np.prod(x)) for x in d[:3]] == [32, 32, 32]
        assert d[0][-1] <= 64 and d[1][-1] <= 64
    # the first space is the tiling alone, as these primitives write it
    sch = spaces[0]
    ti, tj, tk, unroll = _decisions(sch)
    expected = Schedule(Matmul)
    block = expected.get_block("C")
    root = expected.get_block("root")
    expected.annotate(block, "meta_schedule.tiling_structure", "SSRSRS")
    i, j, k = expected.get_loops(block)
    i0, i1, i2, i3 = expected.split(i, ti)
    j0, j1, j2, j3 = expected.split(j, tj)
    k0, k1 = expected.split(k, tk)
    expected.reorder(i0, j0, i1, j1, k0, i2, j2, k1, i3, j3)
    expected.annotate(root, "meta_schedule.parallel", 16)
    expected.annotate(root, "meta_schedule.vectorize", 64)
    expected.annotate(root, "meta_schedule.unroll_explicit", [0, 16, 64, 512][unroll])
    assert_structural_equal(sch.mod, expected.mod)
    # the other two write through a cache placed at the end of tile level 1 and 2
    scripts = [s.mod.script() for s in spaces[1:]]
    assert all('T.block("C_global")' in s for s in scripts)


def test_post_order_apply_fuses_the_bias_add_into_the_tiles():
    spaces = _context(Linear, "post-order-apply").generate_design_space()
    assert len(spaces) == 3
    for sch in spaces[1:]:  # Z moved under Y's tiles instead of a cache
        assert "Y_global" not in sch.mod.script()
        loops_z = sch.get_loops(sch.get_block("Z"))
        loops_y = sch.get_loops(sch.get_block("Y"))
        assert sch.get(loops_z[0]) is sch.get(loops_y[0])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_every_built_in_candidate_computes_the_matmul(seed):
    ctx = _context(Matmul, "post-order-apply", seed)
    for space in ctx.generate_design_space():
        sch, _ = ms.search_strategy.search_strategy.replay(
            ctx.mod, ms.search_strategy.search_strategy.strip_postproc(space.trace.as_json()),
            seed, ctx.space_generator.postprocs, keep_decisions=False)
        got, want = run_matmul(sch.mod, "lnumpy")
        np.testing.assert_allclose(got, want, rtol=1e-5)


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 2**16))
def test_random_candidates_of_the_linear_layer_agree_with_numpy(seed):
    """Differential: any sampled, post-processed program of the built-in space computes
    what NumPy computes (run by the checked lnumpy reference)."""
    ctx = _context(Linear, "post-order-apply", seed)
    strategy = ms.search_strategy.ReplayTrace()
    strategy.initialize_with_tune_context(ctx)
    strategy.pre_tuning(3, 3, ctx.generate_design_space())
    rng = np.random.default_rng(seed)
    x, w, b = (rng.random(s, dtype=np.float32) for s in [(1, 64), (32, 64), (32,)])
    for cand in strategy.generate_measure_candidates():
        z = np.zeros((1, 32), np.float32)
        mlckit.build(cand.sch.mod, "lnumpy")["main"](x, w, b, z)
        np.testing.assert_allclose(z, x @ w.T + b, rtol=1e-5)


def test_random_compute_location_moves_an_untiled_producer():
    from tests.tir.schedule.workloads import elementwise

    mod = mlckit.IRModule({"main": elementwise})
    seen = set()
    for seed in range(8):
        sch = Schedule(mod, seed=seed)
        (out,) = ms.schedule_rule.RandomComputeLocation().apply(sch, sch.get_block("B"))
        insts = [i.kind.name for i in out.trace.insts]
        assert insts[-2:] == ["SampleComputeLocation", "ComputeAt"]
        seen.add(out.trace.insts[-2].decision)
        a = np.random.default_rng(seed).random((16, 16), dtype=np.float32)
        c = np.zeros((16, 16), np.float32)
        mlckit.build(out.mod, "lnumpy")["main"](a, c)
        np.testing.assert_allclose(c, a * 2 + 1, rtol=1e-6)
    assert seen == {-2, -1, 0, 1}


def test_random_compute_location_skips_tiled_and_output_blocks():
    sch = Schedule(Matmul)
    (out,) = ms.schedule_rule.RandomComputeLocation().apply(sch, sch.get_block("C"))
    assert out is sch  # C has no consumer
