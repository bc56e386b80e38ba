"""Postprocessors: the root block's parallel / vectorize / unroll annotations become loops,
and reductions are decomposed — each checked against the primitives written by hand."""

from mlckit import meta_schedule as ms
from mlckit.ir import assert_structural_equal
from mlckit.tir import Schedule

from .workloads import Matmul


def _tiled(sch, annotate=True):
    block = sch.get_block("C")
    i, j, k = sch.get_loops(block)
    i0, i1 = sch.split(i, [4, 8])
    j0, j1, j2 = sch.split(j, [2, 4, 4])
    sch.reorder(i0, j0, i1, j1, k, j2)
    if annotate:
        root = sch.get_block("root")
        sch.annotate(root, "meta_schedule.parallel", 16)
        sch.annotate(root, "meta_schedule.vectorize", 64)
        sch.annotate(root, "meta_schedule.unroll_explicit", 64)
    return block, (i0, j0, i1, j1, k, j2)


def test_annotations_become_parallel_vectorized_and_unrolled_loops():
    sch = Schedule(Matmul)
    _tiled(sch)
    assert ms.postproc.RewriteParallelVectorizeUnroll().apply(sch)

    expected = Schedule(Matmul)
    block, (i0, j0, i1, j1, k, j2) = _tiled(expected, annotate=False)
    fused = expected.fuse(i0, j0, i1)  # 4 * 2 = 8 jobs < 16, so i1 joins: 64 jobs
    expected.parallel(fused)
    expected.vectorize(j2)  # the innermost spatial loop (k is a reduction)
    expected.annotate(fused, "pragma_auto_unroll_max_step", 64)
    expected.annotate(fused, "pragma_unroll_explicit", 1)
    assert_structural_equal(sch.mod, expected.mod)


def test_unannotated_root_is_left_alone():
    sch = Schedule(Matmul)
    _tiled(sch, annotate=False)
    before = sch.mod
    assert ms.postproc.RewriteParallelVectorizeUnroll().apply(sch)
    assert sch.mod is before


def test_reduction_is_decomposed_at_its_outermost_reduction_loop():
    sch = Schedule(Matmul)
    _tiled(sch, annotate=False)
    assert ms.postproc.RewriteReductionBlock().apply(sch)

    expected = Schedule(Matmul)
    block, loops = _tiled(expected, annotate=False)
    expected.decompose_reduction(block, loops[4])
    assert_structural_equal(sch.mod, expected.mod)


def test_default_postprocs_are_tvms_cpu_list():
    names = [type(p).__name__ for p in ms.postproc.Postproc.create("llvm")]
    assert names == ["DisallowDynamicLoop", "RewriteParallelVectorizeUnroll",
                     "RewriteReductionBlock"]
