"""``dlight.gpu.Reduction``: one thread block per output, its threads sharing the reduction.

Applies to a function whose one block (after inlining elementwise neighbours; an elementwise
epilogue may stay) is ``X[s] = X[s] + Y`` over spatial iterators ``s`` and reduction ones.
Which of the two is innermost in the block's largest read decides the shape:

- inner reduction (``B[i] = sum_k A[i, k]``): each output ``i`` gets a thread block
  (``blockIdx.x``); its ``len_tx`` threads (``threadIdx.x``, the largest power of two up to
  the reduction's extent and 1024) each sum a strided part of ``k`` into a partial sum
  (``rfactor``); then the partial sums are added up.
- inner spatial (``B[j] = sum_i A[i, j]``): 16 consecutive outputs per thread block along
  ``threadIdx.x`` and 16 threads (``threadIdx.y``) splitting the reduction.

Adding up the partial sums is where mlckit differs from TVM: TVM keeps them in registers and
binds the summing loop to ``threadIdx.x`` (a warp-shuffle all-reduce made by its
``LowerThreadAllreduce`` pass, which mlckit's CUDA backend does not have).  Here the partial
sums go to ``shared`` memory and one thread per output adds them up; the barrier between the
two steps is inserted by the backend.

Before / after on ``B[i] = sum_k A[i, k]`` over (8, 512)::

    for i, k in T.grid(8, 512):          for i in T.thread_binding(8, thread="blockIdx.x"):
        with T.block("B"): ...               for k_1 in T.thread_binding(512, thread="threadIdx.x"):
                                                 with T.block("B_rf_init"): ...   # B_rf: shared
                                                 for k_0 in range(1):
                                                     with T.block("B_rf_update"): ...
                                             for ax1 in T.thread_binding(1, thread="threadIdx.x"):
                                                 for ax0 in range(512):
                                                     with T.block("B"): ...  # B[i] += B_rf[ax0, i]
"""

from __future__ import annotations

from mlckit.tir.expr import IntImm
from mlckit.tir.schedule import Schedule

from ..analysis import (
    is_broadcast_epilogue,
    normalize_prim_func,
    reduction_rhs,
    try_inline_contiguous_spatial,
    vars_in_region,
)
from .base import GPUScheduleRule

__all__ = ["Reduction"]

UNROLL = 256  # pragma_auto_unroll_max_step on the partial sums' loop, as TVM's CUDA choice


def suggest_threads(extent, limit: int = 1024) -> int:
    """The largest power of two not above ``extent`` and ``limit`` (``limit`` when the extent
    is symbolic), TVM's thread count for a reduction loop."""
    n = extent.value if isinstance(extent, IntImm) else limit
    threads = 1
    while threads * 2 <= min(n, limit):
        threads *= 2
    return threads


def dominant_read(block):
    """The read region using the most block iterators of extent > 1 (the big input of a
    reduction; the first such read on a tie)."""
    unit = {id(iv.var) for iv in block.iter_vars
            if isinstance(iv.dom.extent, IntImm) and iv.dom.extent.value == 1}
    return max(block.reads, key=lambda r: len(vars_in_region(block, r.region) - unit))


def reduction_block(sch, func_infos):
    """(reduction block info, epilogue info or None) when the function is one ``X += Y``
    block, perhaps followed by an elementwise one; else None."""
    infos = try_inline_contiguous_spatial(sch, func_infos)
    if infos is None or not 1 <= len(infos) <= 2:
        return None
    epilogue = infos[1] if len(infos) == 2 else None
    info = infos[0]
    stmt = sch.get(info.block_rv)
    if epilogue is not None and (not epilogue.is_injective()
                                 or not is_intermediate(sch, stmt.writes[0].buffer)):
        return None
    if (not info.is_reduction() or "O" in info.dom_kind() or len(stmt.writes) != 1
            or reduction_rhs(stmt) is None):
        return None
    return info, epilogue


def is_intermediate(sch, buffer) -> bool:
    """Whether ``buffer`` is allocated in the function (so its scope can change)."""
    func = sch.mod["main"]
    return all(b is not buffer for b in func.buffer_map.values())


class Reduction(GPUScheduleRule):
    """Schedule a plain reduction ``X[s] += Y`` with threads cooperating on each output
    (``mlckit.dlight.gpu.Reduction()``, as TVM's).

    A rule is given to ``ApplyDefaultSchedule`` under a GPU target::

        from mlckit import dlight as dl
        with tvm.target.Target("cuda"):
            mod = dl.ApplyDefaultSchedule(dl.gpu.Reduction(), dl.gpu.Fallback())(mod)
    """

    def schedule(self, func, target):
        sch = Schedule(func)
        found = reduction_block(sch, normalize_prim_func(sch))
        if found is None:
            return None
        info, epilogue = found
        block = sch.get(info.block_rv)
        read = dominant_read(block)
        last = read.region[-1].min
        kind_of = {id(i.var): i.kind for i in info.iters}
        if id(last) not in kind_of:
            return None  # the innermost index is not a plain iterator: no simple shape
        used = vars_in_region(block, read.region)
        if any(id(i.var) not in used and i.dom != 1 for i in info.iters):
            return None  # as TVM: the big input must be indexed by every iterator
        s_loops = [i.loop_rv for i in info.iters if i.kind == "S"]
        r_loops = [i.loop_rv for i in info.iters if i.kind == "R"]
        if not s_loops:
            s_loops = [sch.add_unit_loop(info.block_rv)]
        sch.reorder(*s_loops, *r_loops)
        r = sch.fuse(*r_loops)
        if not isinstance(sch.get(r).extent, IntImm):
            return None  # mlckit's split needs a constant extent
        if kind_of[id(last)] == "R":
            self._inner_reduction(sch, info.block_rv, len(s_loops), r, epilogue)
        else:
            if not isinstance(sch.get(s_loops[-1]).extent, IntImm):
                return None
            self._inner_spatial(sch, info.block_rv, s_loops[-1], r, epilogue)
        return sch

    # The spatial loops are fused into the blockIdx.x loop last, after the blocks are moved
    # under them: mlckit's compute_at cannot tell that the rows of a fused loop are disjoint.

    def _inner_reduction(self, sch, block, n_s: int, r, epilogue):
        len_tx = suggest_threads(sch.get(r).extent)
        _, tx = sch.split(r, [None, len_tx])
        rf = sch.rfactor(tx, 0)
        *s, r, tx = sch.get_loops(rf)
        sch.reorder(tx, r)
        sch.bind(tx, "threadIdx.x")
        sch.annotate(tx, "pragma_auto_unroll_max_step", UNROLL)
        sch.annotate(tx, "pragma_unroll_explicit", 1)
        sch.set_scope(rf, 0, "shared")  # read by the thread that adds the partial sums
        # One thread per output adds the len_tx partial sums.
        sch.reverse_compute_at(block, s[-1], preserve_unit_loops=True)
        tx, *rest = sch.get_loops(block)[n_s:]
        out = sch.fuse(*rest)
        sch.reorder(out, tx)
        sch.bind(out, "threadIdx.x")
        if epilogue is not None:
            self._epilogue(sch, block, s, epilogue.block_rv, [len_tx])
        sch.bind(sch.fuse(*s), "blockIdx.x")
        sch.decompose_reduction(rf, r)  # last: no loop over its update may be bound after

    def _inner_spatial(self, sch, block, s_last, r, epilogue):
        len_tx = next(t for t in range(16, 0, -1) if sch.get(s_last).extent.value % t == 0)
        len_ty = 16
        sch.split(s_last, [None, len_tx])
        _, ty = sch.split(r, [None, len_ty])
        rf = sch.rfactor(ty, 0)
        *s, tx, r_rf, ty = sch.get_loops(rf)
        sch.reorder(tx, ty, r_rf)
        sch.bind(tx, "threadIdx.x")
        sch.bind(ty, "threadIdx.y")
        sch.set_scope(rf, 0, "shared")
        # Thread (x, 0) adds the len_ty partial sums of output x.
        sch.reverse_compute_at(block, s[-1], preserve_unit_loops=True)
        r, *rest = sch.get_loops(block)[len(s):]
        out = sch.fuse(*rest)
        one, r = sch.split(r, [1, None])
        sch.reorder(out, one, r)
        sch.bind(out, "threadIdx.x")
        sch.bind(one, "threadIdx.y")
        if epilogue is not None:
            self._epilogue(sch, block, s, epilogue.block_rv, [len_tx, len_ty])
        sch.bind(sch.fuse(*s), "blockIdx.x")
        sch.decompose_reduction(rf, r_rf)  # last: no loop over its update may be bound after

    @staticmethod
    def _epilogue(sch, block, outer: list, epilogue, threads: list[int]):
        """The elementwise block after the reduction, under the same thread block, reading
        the results from shared memory (one thread wrote each)."""
        broadcast = is_broadcast_epilogue(sch, block, epilogue)
        # shared first: a global buffer would be relaxed over blockIdx (the whole result)
        sch.set_scope(block, 0, "shared")
        sch.reverse_compute_at(epilogue, outer[-1], preserve_unit_loops=True)
        rest = sch.get_loops(epilogue)[len(outer):]
        fused = sch.fuse(*rest)
        if broadcast or len(threads) == 1:
            _, *bound = sch.split(fused, [None, *threads])
        else:  # each thread x applies the epilogue to its own output
            bound, _ = sch.split(fused, [threads[0], None])
            bound = [bound]
        for loop, tag in zip(bound, ["threadIdx.x", "threadIdx.y"]):
            sch.bind(loop, tag)
