"""Loop features and the ridge cost model: features tell schedules apart, and the model
learns to rank candidates by a run time that depends on them."""

import numpy as np

from mlckit import meta_schedule as ms
from mlckit.meta_schedule.runner import RunnerResult
from mlckit.tir import Schedule

from .workloads import Matmul


def _candidates(n):
    ctx = ms.TuneContext(Matmul, "llvm --num-cores=1", space_generator="post-order-apply",
                         search_strategy="replay-trace", rand_state=0)
    ctx.search_strategy.pre_tuning(n, n, ctx.generate_design_space())
    return ctx.search_strategy.generate_measure_candidates()


def test_features_see_tiling_and_loop_kinds():
    extract = ms.feature_extractor.PerStoreFeature().extract_from
    plain = extract(Matmul)
    sch = Schedule(Matmul)
    i, j, k = sch.get_loops(sch.get_block("C"))
    sch.parallel(i)
    j0, j1 = sch.split(j, [8, 4])
    sch.reorder(j0, k, j1)
    sch.vectorize(j1)
    tiled = extract(sch.mod)
    assert plain.shape == tiled.shape == (ms.feature_extractor.PerStoreFeature().n_features,)
    assert plain[0] == tiled[0] == 15.0  # log2(32 * 32 * 32) iterations either way
    assert plain[8] == 0 and tiled[8] == 5.0  # log2 of the parallel extent
    assert plain[9] == 0 and tiled[9] == 2.0  # log2 of the vector length
    assert not np.array_equal(plain[13:], tiled[13:])  # strides and working sets differ


def test_ridge_model_learns_to_rank():
    cands = _candidates(60)
    extract = ms.feature_extractor.PerStoreFeature().extract_from
    # a synthetic run time: bigger innermost working sets are slower
    secs = [2.0 ** (0.3 * extract(c.sch.mod)[16]) * 1e-4 for c in cands]
    model = ms.cost_model.RidgeModel(alpha=1.0, num_warmup_samples=40, seed=0)
    model.update(cands[:40], [RunnerResult([s]) for s in secs[:40]])
    assert model.ready
    pred = model.predict(cands[40:])  # candidates it has not seen
    assert np.corrcoef(pred, -np.log(secs[40:]))[0, 1] > 0.9


def test_ridge_model_is_random_while_warming_up():
    cands = _candidates(4)
    a = ms.cost_model.RidgeModel(seed=3).predict(cands)
    b = ms.cost_model.RidgeModel(seed=3).predict(cands)
    np.testing.assert_array_equal(a, b)  # seeded: the same search for the same seed
    assert not ms.cost_model.RidgeModel(seed=3).ready


def test_failed_measurements_are_not_learned():
    cands = _candidates(2)
    model = ms.cost_model.RidgeModel(num_warmup_samples=1)
    model.update(cands, [RunnerResult(None, "build failed"), RunnerResult([1e-3])])
    assert len(model.ys) == 1
