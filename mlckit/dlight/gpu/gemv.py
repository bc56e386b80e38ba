"""``dlight.gpu.GEMV``: a matrix times a vector, rows spread over threads and the dot
products over warps.

Applies to one reduction block ``Y[.., i] += A[.., i, k] * X[.., k]`` (2 or 3 iterators,
perhaps followed by an elementwise epilogue) where some inputs — the vectors ``X`` — use
fewer of the block's iterators than the matrix ``A``, and ``k`` is ``A``'s innermost index
(an inner reduction).  As TVM's CUDA choice: each thread block computes ``TS = 16``
consecutive outputs (``threadIdx.y``), each output's dot product split over ``TR = 32``
threads (``threadIdx.x``) that each sum a strided part of ``k`` (``rfactor``); with a symbolic
number of outputs, ``TS = 1`` and ``TR = 64``.

The vector is read into ``shared`` memory once per thread block, all its threads copying
(when it fits, as TVM's ``LOAD_V_SHARED``).  As in ``Reduction``, the ``TR`` partial sums of
an output go to ``shared`` memory and one thread adds them up (TVM: a warp all-reduce); TVM's
further refinements are not done: the matrix loaded through registers with vector loads and
a second rfactor over ``VEC_C = 4`` lanes.  An outer reduction (``k`` not innermost in ``A``)
is left to the next rule.

Before / after on ``Y[i] = sum_k A[i, k] * X[k]`` over (64, 128)::

    for i, k in T.grid(64, 128):        for i_0 in T.thread_binding(4, thread="blockIdx.x"):
        with T.block("Y"): ...              X_shared <- X, by all 16 x 32 threads
                                            for i_1 in T.thread_binding(16, thread="threadIdx.y"):
                                                for k_1 in T.thread_binding(32, thread="threadIdx.x"):
                                                    with T.block("Y_rf_init"): ...      # Y_rf: shared
                                                    for k_0 in range(4):
                                                        with T.block("Y_rf_update"): ...  # A * X_shared
                                            for ax1 in T.thread_binding(16, thread="threadIdx.y"):
                                                for ax0_0 in T.thread_binding(1, thread="threadIdx.x"):
                                                    for ax0_1 in range(32):
                                                        with T.block("Y"): ...  # Y[i] += Y_rf[.., i]
"""

from __future__ import annotations

from mlckit.tir.dtype import bits
from mlckit.tir.expr import IntImm
from mlckit.tir.schedule import Schedule

from ..analysis import (
    max_shared_memory_per_block,
    max_threads_per_block,
    normalize_prim_func,
    vars_in_region,
)
from .base import GPUScheduleRule
from .reduction import UNROLL, dominant_read, reduction_block

__all__ = ["GEMV"]


def vector_inputs(sch, info) -> list | None:
    """The vector buffers of a GEMV block: reads that use some but not all of its
    iterators; None when the block is no GEMV (no such read, or every read is one)."""
    block = sch.get(info.block_rv)
    if len(block.reads) < 2 or not vars_in_region(block, block.writes[0].region):
        return None
    n = len(block.iter_vars)
    vectors = [r.buffer for r in block.reads
               if 0 < len(vars_in_region(block, r.region)) < n]
    return vectors if 0 < len(vectors) < len(block.reads) else None


class GEMV(GPUScheduleRule):
    """Schedule a matrix-vector product (``mlckit.dlight.gpu.GEMV()``, as TVM's).

    A rule is given to ``ApplyDefaultSchedule`` under a GPU target::

        from mlckit import dlight as dl
        with tvm.target.Target("cuda"):
            mod = dl.ApplyDefaultSchedule(dl.gpu.GEMV(), dl.gpu.Fallback())(mod)
    """

    def schedule(self, func, target):
        sch = Schedule(func)
        found = reduction_block(sch, normalize_prim_func(sch))
        if found is None:
            return None
        info, epilogue = found
        if len(info.iters) not in (2, 3) or vector_inputs(sch, info) is None:
            return None
        block = sch.get(info.block_rv)
        last = dominant_read(block).region[-1].min
        kinds = {id(i.var): i.kind for i in info.iters}
        if kinds.get(id(last)) != "R":
            return None  # an outer reduction: TVM's other schedule, not here
        s_loops = [i.loop_rv for i in info.iters if i.kind == "S"]
        r_loops = [i.loop_rv for i in info.iters if i.kind == "R"]
        sch.reorder(*s_loops, *r_loops)
        r = sch.fuse(*r_loops)
        if not isinstance(sch.get(r).extent, IntImm):
            return None
        constant = all(isinstance(sch.get(lp).extent, IntImm) for lp in s_loops)
        ts, tr = (16, 32) if constant else (1, 64)
        while ts * tr > max_threads_per_block(target):
            ts, tr = (ts // 2, tr) if ts > 1 else (ts, tr // 2)
        vectors = vector_inputs(sch, info)
        vector = vectors[0] if len(vectors) == 1 and _fits(vectors[0], ts * tr, target) else None
        self._schedule(sch, info.block_rv, s_loops, r, ts, tr, constant, epilogue, vector)
        return sch

    @staticmethod
    def _schedule(sch, block, s_loops, r, ts, tr, split_s, epilogue, vector):
        # The spatial loops are fused into blockIdx.x last, after the blocks are moved under
        # them (mlckit's compute_at cannot tell that the rows of a fused loop are disjoint).
        n_s = len(s_loops)
        if split_s:  # else a symbolic number of outputs: one per thread block
            sch.split(s_loops[-1], [None, ts])
        r_o, tx = sch.split(r, [None, tr])
        rf = sch.rfactor(tx, 0)
        loops = sch.get_loops(rf)
        outer, r_o, tx = loops[:n_s], loops[-2], loops[-1]
        sch.reorder(tx, r_o)
        if split_s:
            sch.bind(loops[n_s], "threadIdx.y")
        sch.bind(tx, "threadIdx.x")
        sch.set_scope(rf, 0, "shared")
        if vector is not None:
            _load_vector(sch, rf, vector, outer[-1], n_s, [ts, tr] if split_s else [tr])
        sch.annotate(r_o, "pragma_auto_unroll_max_step", UNROLL)
        sch.annotate(r_o, "pragma_unroll_explicit", 1)
        # thread (0, y) adds up the tr partial sums of output y
        sch.reverse_compute_at(block, outer[-1], preserve_unit_loops=True)
        partial, *rest = sch.get_loops(block)[n_s:]
        out = sch.fuse(*rest)
        one, partial = sch.split(partial, [1, None])
        sch.reorder(out, one, partial)
        sch.bind(out, "threadIdx.y")
        sch.bind(one, "threadIdx.x")
        if epilogue is not None:
            sch.set_scope(block, 0, "shared")
            sch.reverse_compute_at(epilogue.block_rv, outer[-1], preserve_unit_loops=True)
            fused = sch.fuse(*sch.get_loops(epilogue.block_rv)[n_s:])
            _, ty = sch.split(fused, [None, ts])
            sch.bind(ty, "threadIdx.y")
        sch.bind(sch.fuse(*outer), "blockIdx.x")
        sch.decompose_reduction(rf, r_o)  # last: no loop over its update may be bound after


def _fits(vector, partials: int, target) -> bool:
    """Whether the vector and the partial sums fit the thread block's shared memory."""
    shape = [d.value for d in vector.shape if isinstance(d, IntImm)]
    if len(shape) != len(vector.shape):
        return False
    size = 1
    for d in shape:
        size *= d
    return (size + partials) * bits(vector.dtype) // 8 <= max_shared_memory_per_block(target)


def _load_vector(sch, rf, vector, at, n_s: int, threads: list[int]):
    """Read ``vector`` into shared memory once per thread block, all its threads copying
    (TVM's LOAD_V_SHARED)."""
    index = next(i for i, r in enumerate(sch.get(rf).reads) if r.buffer is vector)
    shared = sch.cache_read(rf, index, "shared")
    sch.compute_at(shared, at, preserve_unit_loops=True)
    fused = sch.fuse(*sch.get_loops(shared)[n_s:])
    _, *bound = sch.split(fused, [None, *threads])
    for loop, tag in zip(bound, ["threadIdx.y", "threadIdx.x"][-len(threads):]):
        sch.bind(loop, tag)
