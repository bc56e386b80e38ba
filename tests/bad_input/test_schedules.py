"""Schedule misuse: each refused primitive raises a ScheduleError naming the loop, block or
argument and the primitive, and leaves the schedule as it was — the module structurally
equal to a copy taken before, and the trace not grown."""

import pytest

import mlckit
from mlckit import tir
from mlckit.ir import assert_structural_equal

from ..tir.schedule.workloads import elementwise, matmul
from .common import refused


def _loops(sch, block="C"):
    return sch.get_loops(sch.get_block(block))


def stale_after_fuse(sch):
    i, j = _loops(sch)
    sch.fuse(i, j)
    return lambda: sch.split(i, [4, None])


def stale_after_split(sch):
    i, _ = _loops(sch)
    sch.split(i, [4, 4])
    return lambda: sch.parallel(i)


def stale_block_after_inline(sch):
    b = sch.get_block("B")
    sch.compute_inline(b)
    return lambda: sch.get_loops(b)


def from_another_schedule(sch):
    other = tir.Schedule(elementwise)
    i, _ = _loops(other)
    return lambda: sch.parallel(i)


def loop_for_a_block(sch):
    i, _ = _loops(sch)
    return lambda: sch.get_loops(i)


def block_for_a_loop(sch):
    b = sch.get_block("C")
    return lambda: sch.split(b, [4, 4])


def split_factors(factors):
    def make(sch):
        i, _ = _loops(sch)
        return lambda: sch.split(i, factors)
    return make


def fuse_not_nested(sch):
    i, _ = _loops(sch, "B")
    _, j = _loops(sch, "C")
    return lambda: sch.fuse(i, j)


def reorder_twice(sch):
    i, j = _loops(sch)
    return lambda: sch.reorder(i, j, i)


def reorder_across_blocks(sch):
    i, _ = _loops(sch, "B")
    _, j = _loops(sch, "C")
    return lambda: sch.reorder(j, i)


def on(primitive, *args, block="C", loop=None, **kwargs):
    """``sch.<primitive>(target, *args)``: the block, or its loop number ``loop``."""
    def make(sch):
        target = sch.get_block(block) if loop is None else _loops(sch, block)[loop]
        return lambda: getattr(sch, primitive)(target, *args, **kwargs)
    return make


def compute_at_own_loop(sch):
    b = sch.get_block("C")
    i, _ = _loops(sch)
    return lambda: sch.compute_at(b, i)


def compute_at_consumer_loop_of_consumer(sch):
    c = sch.get_block("C")
    i, _ = _loops(sch, "B")
    return lambda: sch.compute_at(c, i)


CASES = [
    # (id, workload, make(sch) -> the refused call, phrases)
    ("loop_removed_by_fuse", elementwise, stale_after_fuse,
     ["split", "loop `i` no longer exists", "sch.fuse(...) removed or replaced it"]),
    ("loop_removed_by_split", elementwise, stale_after_split,
     ["parallel", "loop `i` no longer exists", "sch.split(...)"]),
    ("block_removed_by_compute_inline", elementwise, stale_block_after_inline,
     ["block `B` no longer exists", "sch.compute_inline(...)"]),
    ("loop_from_another_schedule", elementwise, from_another_schedule,
     ["LoopRV does not belong to this schedule"]),
    ("loop_where_a_block_is_expected", elementwise, loop_for_a_block,
     ["get_loops", "expected a BlockRV, got LoopRV"]),
    ("block_where_a_loop_is_expected", elementwise, block_for_a_loop,
     ["split", "expected a LoopRV, got BlockRV"]),
    ("unknown_block_name", elementwise, lambda sch: lambda: sch.get_block("D"), ["no block is named 'D' in function 'main' (its blocks are: B, C)"]),
    ("split_factors_whose_product_is_wrong", elementwise, split_factors([3, 5]),
     ["split", "(3 * 5 = 15) is smaller than the extent 16 of loop `i`"]),
    ("split_with_two_inferred_factors", elementwise, split_factors([None, None]),
     ["split", "only one factor can be None"]),
    ("split_with_a_zero_factor", elementwise, split_factors([0, None]),
     ["split", "factors must be positive, got [0, None]"]),
    ("split_with_a_negative_factor", elementwise, split_factors([-4, None]),
     ["factors must be positive, got [-4, None]"]),
    ("fuse_of_loops_that_are_not_nested", elementwise, fuse_not_nested,
     ["fuse", "loop `i` is not the parent of loop `j`"]),
    ("reorder_with_a_loop_twice", elementwise, reorder_twice, ["reorder", "loop `i` appears more than once"]),
    ("reorder_of_loops_of_two_nests", elementwise, reorder_across_blocks,
     ["reorder", "not in a single chain: `j`, `i`"]),
    ("parallel_of_a_reduction_loop", matmul, on("parallel", loop=2),
     ["parallel", "loop `k` cannot be parallelized", "reduction iterator `vk`"]),
    ("vectorize_of_a_reduction_loop", matmul, on("vectorize", loop=2),
     ["vectorize", "loop `k` cannot be vectorized"]),
    ("bind_to_an_unknown_thread", elementwise, on("bind", "threadIdx.q", loop=0),
     ["bind", "threadIdx.q"]),
    ("compute_inline_of_a_reduction", matmul, on("compute_inline"),
     ["compute_inline", "block `C` is a reduction"]),
    ("compute_inline_of_an_output_block", elementwise, on("compute_inline"),
     ["compute_inline", "block `C` writes `C`, a parameter"]),
    ("reverse_compute_inline_of_the_producer", elementwise, on("reverse_compute_inline",
                                                               block="B"),
     ["reverse_compute_inline", "block `B` has 0 producer blocks"]),
    ("compute_at_under_its_own_loop", elementwise, compute_at_own_loop,
     ["compute_at", "block `C` is already under loop `i`"]),
    ("compute_at_of_a_consumer_under_its_producer", elementwise,
     compute_at_consumer_loop_of_consumer,
     ["compute_at", "no consumer of block `C` is under loop `i`"]),
    ("decompose_reduction_of_a_spatial_block", elementwise,
     lambda sch: (lambda b=sch.get_block("C"), i=_loops(sch)[0]:
                  lambda: sch.decompose_reduction(b, i))(),
     ["decompose_reduction", "block `C` is not a reduction block"]),
    ("rfactor_of_a_spatial_loop", matmul, on("rfactor", 0, loop=0),
     ["rfactor", "loop `i` drives a spatial iterator of block `C`"]),
    ("cache_read_of_a_buffer_index_out_of_range", elementwise,
     on("cache_read", 3, "local"), ["cache_read", "read_buffer_index 3 is out of range"]),
    ("cache_write_of_a_buffer_index_out_of_range", elementwise,
     on("cache_write", 2, "local"), ["cache_write", "write_buffer_index 2 is out of range"]),
    ("unannotate_of_a_missing_key", elementwise, on("unannotate", "no_such_key"),
     ["unannotate", "block `C` has no annotation 'no_such_key'"]),
]


@pytest.mark.parametrize("workload, make, phrases", [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])
def test_refused_primitive_leaves_the_schedule_unchanged(workload, make, phrases):
    sch = tir.Schedule(workload)
    action = make(sch)
    before = sch.mod
    insts = len(sch.trace.insts)
    refused(action, *phrases, kind=mlckit.tir.ScheduleError)
    assert_structural_equal(sch.mod, before)
    assert len(sch.trace.insts) == insts
    # and the schedule still works
    sch.split(_loops(sch, "C")[0], [2, None])
    assert len(sch.trace.insts) > insts


def _decomposed_matmul():
    sch = tir.Schedule(matmul)
    block = sch.get_block("C")
    sch.decompose_reduction(block, sch.get_loops(block)[0])
    return sch


def test_cache_write_of_a_buffer_with_two_writers_is_refused():
    # as TVM: after decompose_reduction C_init and C_update both write C
    sch = _decomposed_matmul()
    before = sch.mod
    refused(lambda: sch.cache_write(sch.get_block("C_init"), 0, "local"),
            "cache_write", "buffer `C` is written by block `C_init` and by block `C_update`")
    assert sch.mod is before


def test_moving_an_init_block_that_another_block_accumulates_onto_is_refused():
    # moving C_init under C_update's row loop would zero C on every row: TVM refuses it too
    # (C_init is not the only writer of C, so it is not a complete block)
    sch = _decomposed_matmul()
    row = sch.get_loops(sch.get_block("C_update"))[0]
    before = sch.mod
    refused(lambda: sch.reverse_compute_at(sch.get_block("C_init"), row),
            "reverse_compute_at", "block `C_init` is not the only writer of `C`",
            "block `C_update` writes it too")
    assert sch.mod is before


def test_reverse_compute_at_past_a_consumer_is_refused():
    # B reads only a parameter; moving it under D's loop would put it after C, which reads
    # it (TVM 0.27 accepts this and computes wrong numbers)
    from mlckit.script import tir as T

    @T.prim_func
    def chain(A: T.Buffer((8,), "float32"), D: T.Buffer((8,), "float32")):
        B = T.alloc_buffer((8,), "float32")
        C = T.alloc_buffer((8,), "float32")
        for i in range(8):
            with T.block("B"):
                vi = T.axis.spatial(8, i)
                B[vi] = A[vi] * T.float32(2)
        for i in range(8):
            with T.block("C"):
                vi = T.axis.spatial(8, i)
                C[vi] = B[vi] + T.float32(1)
        for i in range(8):
            with T.block("D"):
                vi = T.axis.spatial(8, i)
                D[vi] = A[vi] + T.float32(1)

    sch = tir.Schedule(chain)
    loop = sch.get_loops(sch.get_block("D"))[0]
    before = sch.mod
    refused(lambda: sch.reverse_compute_at(sch.get_block("B"), loop), "reverse_compute_at",
            "block `B` cannot move under loop `i`: its consumer `C` comes before that loop")
    assert sch.mod is before


def test_cache_write_of_an_update_without_init_is_refused():
    # after blockize the inner block C accumulates onto what C_o's T.init() wrote; a cache
    # of C would start uninitialised (TVM 0.27 accepts this and computes wrong numbers)
    sch = tir.Schedule(matmul)
    block = sch.get_block("C")
    sch.blockize(sch.get_loops(block)[1])
    before = sch.mod
    refused(lambda: sch.cache_write(block, 0, "local"), "cache_write",
            "block `C` reads the `C` it updates but has no T.init()")
    assert sch.mod is before


def test_reverse_compute_at_that_would_read_a_partial_sum_once_is_refused():
    # expsum accumulates under exp's loop j; norm placed there too would compute each
    # element once, from a partial sum (TVM 0.27 accepts this and computes wrong numbers)
    from ..tir.schedule.workloads import softmax

    sch = tir.Schedule(softmax)
    j = sch.get_loops(sch.get_block("exp"))[1]
    sch.reverse_compute_at(sch.get_block("expsum"), j)
    j = sch.get_loops(sch.get_block("exp"))[1]
    before = sch.mod
    refused(lambda: sch.reverse_compute_at(sch.get_block("norm"), j), "reverse_compute_at",
            "block `norm` cannot be placed under loop `j`: every iteration of loop `j` touches "
            "the same elements")
    assert sch.mod is before
