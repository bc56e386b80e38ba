"""``dlight.gpu.Matmul``: the classic tiled GPU matmul — a 32 x 64 tile of ``C`` per thread
block, a 4 x 4 micro-tile per thread in registers, ``A`` and ``B`` staged through shared memory.

Applies to a function with one reduction block of the form ``C[S, I, J] += A[S, I, K] *
B[S, J, K]`` up to the order of indices (``S``: batch iterators used by all three buffers,
``I``: by ``A`` and ``C``, ``J``: by ``B`` and ``C``, ``K``: the reduction, by ``A`` and
``B``; unit iterators aside), every other block elementwise (a bias, a ReLU).  So
``x @ w``, ``x @ w.T`` and batched matmuls match; a GEMV (one of ``I``, ``J`` of extent 1)
does not.

TVM's CUDA configuration, in the order the schedule goes:

- the block's loops grouped and fused into ``batch, x (I), y (J), k (K)``;
- ``x`` split ``[bx, tx = 8, xi = 4]``, ``y`` split ``[by, ty = 16, yi = 4]``, ``k`` split
  ``[ko, ki = 16]``, reordered ``by, bx, ty, tx, ko, ki, xi, yi``; ``batch`` fused into
  ``by``; ``bx``, ``by`` bound to ``blockIdx.x/y``, ``tx``, ``ty`` to ``threadIdx.x/y``
  (128 threads); the innermost ``yi`` split by 2 and vectorized;
- ``C`` accumulated in a ``local`` cache written back under ``tx`` (vectorized by 2);
- for every ``ko``, the ``A`` and ``B`` tiles read into ``shared`` memory by all 128 threads
  together (the copy loops fused, split ``[ty, tx, ..., 2]``, rows padded by
  ``storage_align``);
- elementwise producers inlined into those copies, the epilogue chain into the write-back;
  the initialisation decomposed above ``ko``; ``tx`` annotated to unroll up to 256 steps.

Where mlckit differs from TVM: no ``vthread`` loops (TVM's CUDA configuration binds two
loops of extent 1 to them; mlckit's backend has no virtual threads), and no
``reindex``/``pad_einsum``: an ``x``, ``y`` or ``k`` extent that the tile does not divide is
split with a ``T.where`` guard instead of padding ``A``, ``B`` and ``C``; symbolic shapes
are left to the next rule (TVM pads a symbolic ``I``, ``J`` or ``K``; mlckit's ``cache_read``
cannot cache a buffer of symbolic shape yet).  The batch loops are bound to ``blockIdx.z``
rather than fused into ``blockIdx.y`` (mlckit's ``compute_at`` cannot see that the parts of a
fused loop differ).

Before / after on ``C[i, j] += A[i, k] * B[k, j]`` over 64 x 64 x 64 (abridged)::

    for i, j, k in T.grid(64, 64, 64):     for by in T.thread_binding(1, thread="blockIdx.y"):
        with T.block("C"): ...               for bx in T.thread_binding(2, thread="blockIdx.x"):
                                                 for ty in T.thread_binding(16, thread="threadIdx.y"):
                                                     for tx in T.thread_binding(8, thread="threadIdx.x"):
                                                         C_init (local, 4 x 4) ...
                                                         for ko in range(4):
                                                             A_shared, B_shared <- A, B tiles
                                                             for ki, xi, yi_0 in T.grid(16, 4, 2):
                                                                 for yi_1 in T.vectorized(2): C_update
                                                         C <- C_local
"""

from __future__ import annotations

from mlckit.tir.expr import IntImm, IterVarType
from mlckit.tir.schedule import Schedule, ScheduleError

from ..analysis import normalize_prim_func, vars_in_region
from .base import GPUScheduleRule

__all__ = ["Matmul"]


class Matmul(GPUScheduleRule):
    """Schedule a (batched) matmul with shared-memory tiles and register micro-tiles
    (``mlckit.dlight.gpu.Matmul()``, as TVM's CUDA configuration).

    A rule is given to ``ApplyDefaultSchedule`` under a GPU target::

        from mlckit import dlight as dl
        with tvm.target.Target("cuda"):
            mod = dl.ApplyDefaultSchedule(dl.gpu.Matmul(), dl.gpu.Fallback())(mod)
    """

    # TVM's configuration for CUDA
    block_size_x, block_size_y = 8, 16
    micro_size_x, micro_size_y, micro_size_k = 4, 4, 16
    vector_size = 2
    unroll = 256

    def schedule(self, func, target):
        sch = Schedule(func)
        infos = normalize_prim_func(sch)
        if infos is None:
            return None
        reductions = [i for i in infos if i.is_reduction()]
        if (len(reductions) != 1 or any("O" in i.dom_kind() for i in infos)
                or any(not i.is_injective() for i in infos if i is not reductions[0])):
            return None
        main = reductions[0]
        groups = iter_groups(sch.get(main.block_rv), main)
        if groups is None:
            return None
        if any(not isinstance(sch.get(lp).extent, IntImm)
               for kind in "IJK" for lp in groups[kind]):
            return None  # TVM pads symbolic I, J, K (pad_einsum); mlckit does not
        return self._schedule(sch, main.block_rv, groups)

    def _schedule(self, sch, block, groups):
        firsts = groups["T"] + groups["S"]
        sch.reorder(*firsts, *groups["I"], *groups["J"], *groups["K"])
        x, y, k = (sch.fuse(*groups[kind]) for kind in "IJK")
        by, ty, yi = sch.split(y, [None, self.block_size_y, self.micro_size_y])
        bx, tx, xi = sch.split(x, [None, self.block_size_x, self.micro_size_x])
        ko, ki = sch.split(k, [None, self.micro_size_k])
        sch.reorder(by, bx, ty, tx, ko, ki, xi, yi)
        sch.bind(bx, "blockIdx.x")
        sch.bind(by, "blockIdx.y")
        sch.bind(ty, "threadIdx.y")
        sch.bind(tx, "threadIdx.x")
        _, v = sch.split(yi, [None, self.vector_size])
        sch.vectorize(v)
        sch.annotate(tx, "pragma_auto_unroll_max_step", self.unroll)
        sch.annotate(tx, "pragma_unroll_explicit", 1)

        local = sch.cache_write(block, 0, "local")
        sch.reverse_compute_at(local, tx, preserve_unit_loops=True)
        _, v = sch.split(sch.get_loops(local)[-1], [None, self.vector_size])
        sch.vectorize(v)

        for index in (0, 1):
            self._cooperative_fetch(sch, block, index, ko)
        for producer in sch.get_producers(block):
            if sch.get(producer).name_hint.endswith("_shared"):
                _inline_producers(sch, producer)
        _inline_consumer_chain(sch, local)
        if firsts:  # fused late: mlckit's compute_at cannot see a fused loop's parts differ
            sch.bind(sch.fuse(*firsts), "blockIdx.z")
        sch.decompose_reduction(block, ko)  # last: no loop over its update may be bound after
        return sch

    def _cooperative_fetch(self, sch, block, index: int, ko):
        """Read input ``index`` into shared memory at ``ko``, all threads of the block
        copying together, ``vector_size`` elements at a time."""
        shared = sch.cache_read(block, index, "shared")
        n_loops = len(sch.get_loops(shared))
        sch.compute_at(shared, ko, preserve_unit_loops=True)
        loops = sch.get_loops(shared)[-n_loops:]
        ty, tx, _, vec = sch.split(sch.fuse(*loops),
                                   [self.block_size_y, self.block_size_x, None, self.vector_size])
        sch.vectorize(vec)
        sch.bind(ty, "threadIdx.y")
        sch.bind(tx, "threadIdx.x")
        sch.storage_align(shared, 0, axis=1 if n_loops > 1 else 0, factor=8,
                          offset=self.vector_size)


def iter_groups(block, info) -> dict | None:
    """The block's loops by their role in ``C[S, I, J] += A[S, I, K] * B[S, J, K]``:
    ``{"T": unit, "S": batch, "I", "J", "K"}``, or None when the block is no matmul."""
    if len(block.reads) != 2 or len(block.writes) != 1:
        return None
    if any(not (isinstance(r.extent, IntImm) and r.extent.value == 1)
           for reg in (*block.reads, *block.writes) for r in reg.region):
        return None
    a = vars_in_region(block, block.reads[0].region)
    b = vars_in_region(block, block.reads[1].region)
    c = vars_in_region(block, block.writes[0].region)
    groups = {kind: [] for kind in "TSIJK"}
    for iv, it in zip(block.iter_vars, info.iters):
        v = id(iv.var)
        if isinstance(iv.dom.extent, IntImm) and iv.dom.extent.value == 1:
            kind = "T"
        elif iv.iter_type == IterVarType.DataPar:
            kind = ("S" if v in a and v in b and v in c else "I" if v in a and v in c
                    else "J" if v in b and v in c else None)
        else:
            kind = "K" if v in a and v in b and v not in c else None
        if kind is None:
            return None
        groups[kind].append(it.loop_rv)
    return groups if all(groups[kind] for kind in "IJK") else None


def _inline_producers(sch, block):
    """Inline the elementwise blocks that ``block`` reads (a transpose feeding the copy)."""
    for producer in sch.get_producers(block):
        try:
            sch.compute_inline(producer)
        except ScheduleError:  # leaves the schedule as it was
            continue
        _inline_producers(sch, block)
        return


def _inline_consumer_chain(sch, block):
    """Inline the elementwise chain after ``block`` (bias, activation) into its write-back."""
    while True:
        consumers = sch.get_consumers(block)
        if len(consumers) != 1:
            return
        try:
            sch.reverse_compute_inline(consumers[0])
        except ScheduleError:  # leaves the schedule as it was
            return
