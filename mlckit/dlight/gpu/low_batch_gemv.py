"""``dlight.gpu.LowBatchGEMV``: a matrix product whose number of rows is symbolic and small
(the batch of a decoding step), scheduled as matrix-vector products.

Applies to one reduction block ``Y[b, s] += X[b, k] * W[s, k]`` (perhaps with elementwise
blocks around it) whose one symbolic iterator is the spatial batch ``b``, whose other
extents are constants, and where some input — the "vectors" ``X`` — uses some but not all
of the constant iterators; ``k`` must be the innermost index of the matrix ``W`` (an inner
reduction).  ``GEMV`` declines such a block (every input uses ``b`` or is the matrix).  As
TVM's CUDA choice: each thread block computes ``TS x TILE_S`` outputs ``s`` (``threadIdx.y``,
``TILE_S = 2`` consecutive ones per thread), each output's dot product split over ``TR``
threads (``threadIdx.x``) that each sum a strided part of ``k`` (``rfactor``); ``TS, TR =
4, 64`` when there are more outputs than reduced elements, else ``16, 32``.

Where mlckit differs from TVM:

- TVM pads the batch to a multiple of ``bucket = 4`` (``pad_einsum``) and gives each thread
  block 4 batch rows (``blockIdx.y``), so that a row of ``W`` read once serves 4 products;
  mlckit has no ``pad_einsum`` and cannot split a symbolic loop, so each thread block takes
  one batch row (``blockIdx.y`` over ``b``).
- As in ``GEMV``, the ``TR`` partial sums of an output go to ``shared`` memory and one
  thread adds them up; TVM keeps them in registers (a second ``rfactor`` over ``VEC_C``
  lanes) and sums them with a warp all-reduce, which mlckit's CUDA backend lacks.
- A dequantizing prologue is inlined rather than computed into registers, and an outer
  reduction (``k`` not innermost in ``W``; TVM schedules it only for quantized weights) is
  left to the next rule.

Before / after on ``Y[b, s] = sum_k X[b, k] * W[s, k]``, ``W`` of shape (32, 96)::

    for b, s, k in T.grid(n, 32, 96):   for b in T.thread_binding(n, thread="blockIdx.y"):
        with T.block("Y"): ...              for s_0 in T.thread_binding(1, thread="blockIdx.x"):
                                                for s_1 in T.thread_binding(16, thread="threadIdx.y"):
                                                    for k_1 in T.thread_binding(32, thread="threadIdx.x"):
                                                        for s_2 in range(2): Y_rf_init       # Y_rf: shared
                                                        for k_0 in range(3):
                                                            for s_2 in range(2): Y_rf_update
                                                for ... in T.thread_binding(16, thread="threadIdx.y"):
                                                    for ... in T.thread_binding(1, thread="threadIdx.x"):
                                                        for s_2, k_1 in T.grid(2, 32):
                                                            Y  # Y[b, s] += Y_rf[k_1, b, s]
"""

from __future__ import annotations

from mlckit.tir import expr as E
from mlckit.tir.expr import IntImm
from mlckit.tir.schedule import Schedule

from ..analysis import max_threads_per_block, normalize_prim_func, reduction_rhs, vars_in_region
from .base import GPUScheduleRule
from .reduction import UNROLL, reduction_block

__all__ = ["LowBatchGEMV"]

TILE_S = 2  # consecutive outputs per thread, TVM's choice


def batch_gemv_vectors(sch, info) -> list | None:
    """The vector inputs of a low-batch GEMV block (TVM's ``is_gemv``): reads using some but
    not all of its constant iterators; None when the block is not one (no single symbolic,
    spatial iterator; not ``X += Y``; an index that is not a plain iterator)."""
    block = sch.get(info.block_rv)
    if (not info.is_reduction() or len(block.reads) < 2 or len(block.writes) != 1
            or reduction_rhs(block) is None or not _point_accesses(block)
            or not vars_in_region(block, block.writes[0].region)):
        return None
    symbolic = [iv for iv in block.iter_vars if not isinstance(iv.dom.extent, IntImm)]
    if len(symbolic) != 1 or symbolic[0].iter_type != E.IterVarType.DataPar:
        return None
    const = {id(iv.var) for iv in block.iter_vars} - {id(symbolic[0].var)}
    vectors = [r.buffer for r in block.reads
               if 0 < len(vars_in_region(block, r.region) & const) < len(const)]
    return vectors if 0 < len(vectors) < len(block.reads) else None


def _point_accesses(block) -> bool:
    """Every access is of one element at a plain iterator or a constant (what TVM's
    ``pad_einsum`` accepts)."""
    return all(isinstance(rng.extent, IntImm) and rng.extent.value == 1
               and isinstance(rng.min, (IntImm, E.Var))
               for region in [*block.reads, *block.writes] for rng in region.region)


def threads(len_s: int, len_r: int, limit: int) -> tuple[int, int]:
    """(TS, TR): TVM's CUDA choice, halved (TS first) to fit ``limit`` threads."""
    ts, tr = (4, 64) if len_s > len_r else (16, 32)
    while ts * tr > limit:
        ts, tr = (ts // 2, tr) if ts > 1 else (ts, tr // 2)
    return ts, tr


class LowBatchGEMV(GPUScheduleRule):
    """Schedule a low-batch matrix product with a symbolic batch as GEMVs
    (``mlckit.dlight.gpu.LowBatchGEMV()``, as TVM's).  ``bucket`` is TVM's batch padding,
    accepted for compatibility: mlckit computes one batch row per thread block.

    A rule is given to ``ApplyDefaultSchedule`` under a GPU target::

        from mlckit import dlight as dl
        with tvm.target.Target("cuda"):
            mod = dl.ApplyDefaultSchedule(dl.gpu.LowBatchGEMV(), dl.gpu.Fallback())(mod)
    """

    def __init__(self, bucket: int = 4):
        self.bucket = bucket

    def schedule(self, func, target):
        sch = Schedule(func)
        infos = normalize_prim_func(sch)
        if infos is None:
            return None
        reductions = [info for info in infos if info.is_reduction()]
        if len(reductions) != 1 or batch_gemv_vectors(sch, reductions[0]) is None:
            return None
        found = reduction_block(sch, infos)
        if found is None:
            return None
        info, epilogue = found
        if len(info.iters) not in (2, 3) or batch_gemv_vectors(sch, info) is None:
            return None
        loops = self._normalize(sch, info)
        if loops is None:
            return None
        b, s, r = loops
        len_s, len_r = sch.get(s).extent, sch.get(r).extent
        ts, tr = threads(len_s.value, len_r.value, max_threads_per_block(target))
        self._schedule(sch, info.block_rv, b, s, r, ts, tr, epilogue)
        return sch

    @staticmethod
    def _normalize(sch, info):
        """The block's loops as (batch, spatial, reduction), the spatial and the reduction
        ones each fused; None for an outer reduction (the matrix's innermost index spatial)."""
        block = sch.get(info.block_rv)
        const = {id(i.var) for i in info.iters if isinstance(i.dom, int)}
        matrix = max(block.reads, key=lambda r: len(vars_in_region(block, r.region) & const))
        inner = matrix.region[-1].min
        kind = {id(i.var): i.kind for i in info.iters}
        if kind.get(id(inner)) != "R":
            return None
        batch = [i.loop_rv for i in info.iters if not isinstance(i.dom, int)]
        s_loops = [i.loop_rv for i in info.iters if isinstance(i.dom, int) and i.kind == "S"]
        r_loops = [i.loop_rv for i in info.iters if i.kind == "R"]
        if len(batch) != 1 or not s_loops:
            return None
        sch.reorder(*batch, *s_loops, *r_loops)
        return batch[0], sch.fuse(*s_loops), sch.fuse(*r_loops)

    @staticmethod
    def _schedule(sch, block, b, s, r, ts, tr, epilogue):
        bx, _, _ = sch.split(s, [None, ts, TILE_S])
        _, tx = sch.split(r, [None, tr])
        rf = sch.rfactor(tx, 0)
        b, bx, ty, tile_s, r_o, tx = sch.get_loops(rf)  # the rf block has the loops now
        sch.reorder(ty, tx, r_o, tile_s)
        sch.bind(ty, "threadIdx.y")
        sch.bind(tx, "threadIdx.x")
        sch.set_scope(rf, 0, "shared")  # read by the thread that adds the partial sums
        sch.annotate(r_o, "pragma_auto_unroll_max_step", UNROLL)
        sch.annotate(r_o, "pragma_unroll_explicit", 1)
        # thread (0, y) adds up the partial sums of its TILE_S outputs
        sch.reverse_compute_at(block, bx, preserve_unit_loops=True)
        partial, unit, *rest = sch.get_loops(block)[2:]  # in the block's iterator order
        ty, tile_s = sch.split(sch.fuse(*rest), [ts, None])
        one, partial = sch.split(partial, [1, None])
        sch.reorder(ty, one, unit, tile_s, partial)
        sch.bind(ty, "threadIdx.y")
        sch.bind(one, "threadIdx.x")
        if epilogue is not None:
            sch.set_scope(block, 0, "shared")
            sch.reverse_compute_at(epilogue.block_rv, bx, preserve_unit_loops=True)
            loops = sch.get_loops(epilogue.block_rv)[2:]
            if sch.get(loops[0]).extent.value == 1:
                loops = loops[1:]  # the batch's unit loop (int64: not fused with the int32 ones)
            fused = sch.fuse(*loops)
            _, ty = sch.split(fused, [None, ts])
            sch.bind(ty, "threadIdx.y")
        sch.bind(b, "blockIdx.y")
        sch.bind(bx, "blockIdx.x")
        sch.decompose_reduction(rf, r_o)  # last: no loop over its update may be bound after
