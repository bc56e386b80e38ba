"""``dlight.gpu.GeneralReduction``: softmax, layer norm and other row-wise reductions, one
thread block per row.

Applies to a chain of blocks (after inlining elementwise ones) whose first ones reduce over
trailing iterators (``S..R..``, e.g. a row's max, then its sum of exponentials) and whose
last one is elementwise over the same iterators (the normalised row).  Each row gets a thread
block (``blockIdx.x``, the leading spatial loops fused); its threads (``threadIdx.x``: 256
for the last block, TVM's CUDA choice; for a reduction the largest divisor of the row up to
256) stride along the row in every block of the chain; the reduced values of the row live in
``shared`` memory, computed at the row's loop.

Each reduction of the row is, as in ``Reduction``, one partial result per thread
(``rfactor``, in shared memory) that one thread then combines: TVM binds the reduction loop
itself to ``threadIdx.x`` and lets ``LowerThreadAllreduce`` build a warp all-reduce, which
mlckit's CUDA backend lacks.  A reduction ``rfactor`` cannot split (a block computing two
values at once, as layer norm's mean and mean of squares) is done by one thread alone.

Before / after on softmax over (n, 256) (abridged)::

    for i, k in T.grid(n, 256): maxelem     for i in T.thread_binding(n, thread="blockIdx.x"):
    for i, k in T.grid(n, 256): expsum          for k_1 in T.thread_binding(256, thread="threadIdx.x"):
    for i, j in T.grid(n, 256): norm                for k_0 in range(1): maxelem_rf      # shared
                                                for ax in T.thread_binding(1, thread="threadIdx.x"):
                                                    for k_1 in range(256): maxelem        # shared
                                                ... the same for expsum ...
                                                for j_1 in T.thread_binding(256, thread="threadIdx.x"):
                                                    for j_0 in range(1): norm
"""

from __future__ import annotations

from mlckit.tir.analysis.var_use import var_ids
from mlckit.tir.expr import IntImm
from mlckit.tir.schedule import Schedule, ScheduleError

from ..analysis import normalize_prim_func, try_inline_contiguous_spatial
from .base import GPUScheduleRule

__all__ = ["GeneralReduction"]

LEN_TX = 256  # threads per row, TVM's CUDA choice
UNROLL = 256


def _dividing_threads(extent) -> int | None:
    """The threads sharing a row's reduction: the largest divisor of its extent up to
    LEN_TX (mlckit's compute_at does not carry a split's ``T.where`` over to the partial
    results' block, so the split must divide), None when that is below a warp or the
    extent is symbolic."""
    if not isinstance(extent, IntImm):
        return None
    best = max(d for d in range(1, min(LEN_TX, extent.value) + 1) if extent.value % d == 0)
    return best if best >= 32 or best == extent.value else None


class GeneralReduction(GPUScheduleRule):
    """Schedule a row-wise chain of reductions and a final elementwise block, one thread block
    per row (``mlckit.dlight.gpu.GeneralReduction()``, as TVM's).

    A rule is given to ``ApplyDefaultSchedule`` under a GPU target::

        from mlckit import dlight as dl
        with tvm.target.Target("cuda"):
            mod = dl.ApplyDefaultSchedule(dl.gpu.GeneralReduction(), dl.gpu.Fallback())(mod)
    """

    def schedule(self, func, target):
        sch = Schedule(func)
        infos = try_inline_contiguous_spatial(sch, normalize_prim_func(sch))
        if not infos:
            return None
        kinds = infos[0].dom_kind()
        n_s = len(kinds) - len(kinds.lstrip("S"))
        n_r = len(kinds) - len(kinds.rstrip("R"))
        last = infos[-1]
        if (n_r == 0 or n_s == 0 or n_s + n_r != len(kinds)
                or any(i.dom_kind() != kinds for i in infos[1:-1])
                or not last.is_injective() or len(last.iters) != len(kinds)
                or not all(isinstance(i.dom, int) for i in last.iters[n_s:])):
            return None  # mlckit does not re-lay out a last block of fewer iterators
        if len(infos) == 1:
            return None  # a lone spatial block: nothing to reduce
        loops = self._spatial_first(sch, infos)
        rows = loops[:n_s]
        r, tx = sch.split(loops[-1], [None, LEN_TX])
        sch.reorder(tx, r)
        sch.bind(tx, "threadIdx.x")
        self._unroll(sch, r)
        for info in reversed(infos[:-1]):
            self._reduce_at_row(sch, info.block_rv, rows, n_r)
        # fused last: mlckit's compute_at cannot tell that the rows of a fused loop differ
        sch.bind(sch.fuse(*rows), "blockIdx.x")
        return sch

    @staticmethod
    def _spatial_first(sch, infos) -> list:
        """The last block's loops, those indexing the reduced values first (its loop order
        may differ from the reductions')."""
        reduced = {id(w.buffer) for info in infos[:-1] for w in sch.get(info.block_rv).writes}
        last = infos[-1]
        stmt = sch.get(last.block_rv)
        used = set()
        for read in stmt.reads:
            if id(read.buffer) in reduced:
                for rng in read.region:
                    used |= var_ids(rng.min)
        loops = [i.loop_rv for i in last.iters]
        firsts = [lp for lp, it in zip(loops, last.iters)
                  if id(it.var) in used or it.dom == 1]
        sch.reorder(*firsts, *[lp for lp in loops if lp not in firsts])
        return sch.get_loops(last.block_rv)

    @staticmethod
    def _unroll(sch, loop):
        sch.annotate(loop, "pragma_auto_unroll_max_step", UNROLL)
        sch.annotate(loop, "pragma_unroll_explicit", 1)

    def _reduce_at_row(self, sch, block, rows: list, n_r: int):
        """Compute the reduction ``block`` at the row's loops ``rows`` with the row's LEN_TX
        threads: a partial result each (rfactor, before compute_at: rfactor factors the
        whole loop nest), then one thread combines them; by one thread alone when rfactor
        does not apply."""
        for i, _ in enumerate(sch.get(block).writes):
            sch.set_scope(block, i, "shared")  # shared first: compute_at relaxes a global one
        r = sch.fuse(*sch.get_loops(block)[-n_r:])
        threads = _dividing_threads(sch.get(r).extent)
        rf = None
        if threads is not None:
            _, tx = sch.split(r, [None, threads])
            try:
                rf = sch.rfactor(tx, 0)
            except ScheduleError:  # leaves the schedule as it was
                pass
        if rf is not None:
            sch.set_scope(rf, 0, "shared")
        depth = len(rows)
        sch.compute_at(block, rows[-1], preserve_unit_loops=True)
        if rf is None:  # loops under the row: the leading unit loops, then the reduction
            loops = sch.get_loops(block)[depth:]
            one, _ = sch.split(loops[0], [1, None])
            sch.bind(one, "threadIdx.x")
            return
        sch.compute_at(rf, rows[-1], preserve_unit_loops=True)
        tx, *_, r = sch.get_loops(rf)[depth:]  # in the rf block's iterator order
        sch.bind(tx, "threadIdx.x")
        self._unroll(sch, r)
        partial, *units = sch.get_loops(block)[depth:]
        one = sch.fuse(*units)
        sch.reorder(one, partial)
        sch.bind(one, "threadIdx.x")
