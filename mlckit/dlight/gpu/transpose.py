"""``dlight.gpu.Transpose``: a 2-D transpose through a shared-memory tile, so that both the
reads and the writes of global memory are coalesced.

Applies to a function whose last block that is not elementwise is a transpose
``B[i, j] = A[j, i]`` (the store's indices a permutation of the load's) over two loops;
blocks before it (a decoding or elementwise prologue) are inlined into it, and so are the
elementwise blocks after it.  As
TVM's CUDA choice: each thread block transposes a tile of 8 rows (``threadIdx.y``) by 16
columns (``threadIdx.x``) of the output; the tile's input is first copied into ``shared``
memory by the same 8 x 16 threads, row by row of the input (``A_shared``, rows padded by one
element with ``storage_align`` against bank conflicts), then each thread writes one output
element from it.  A prologue reading a packed input (``W[i, j // c]``) gives each thread
``c`` consecutive rows (TVM's ``c_factor``, taken here from the prologue's first index).

Deviations from TVM: loops keep their names (TVM's calls them ``ax0``, ``ax1``); a transpose
with a symbolic extent is left to the next rule (mlckit's ``split`` needs a constant
extent); elementwise blocks after the transpose are inlined into it (TVM leaves them unbound).

Before / after on ``B[i, j] = A[j, i]`` with A of shape (24, 40)::

    for i, j in T.grid(40, 24):          for i_0_0 in T.thread_binding(5, thread="blockIdx.y"):
        with T.block("T"):                   for j_0 in T.thread_binding(2, thread="blockIdx.x"):
            B[vi, vj] = A[vj, vi]                for ... in range(1):         # A_shared <- A:
                                                     for ... in T.thread_binding(8, thread="threadIdx.y"):
                                                         for ... in T.thread_binding(16, thread="threadIdx.x"):
                                                             for ... in T.unroll(1): A_shared
                                                 for i_0_1 in T.thread_binding(8, thread="threadIdx.y"):
                                                     for j_1 in T.thread_binding(16, thread="threadIdx.x"):
                                                         for i_1_0, i_1_1 in T.grid(1, 1):
                                                             B[vi, vj] = A_shared[vj, vi]
"""

from __future__ import annotations

from mlckit.tir import expr as E
from mlckit.tir import stmt as S
from mlckit.tir.expr import IntImm
from mlckit.tir.schedule import Schedule

from ..analysis import normalize_prim_func, try_inline_contiguous_spatial
from .base import GPUScheduleRule
from .reduction import dominant_read

__all__ = ["Transpose"]

# (len_tx, len_ty, unroll) per target kind, TVM's choices; other GPUs get the last row.
TILES = {"cuda": (16, 8, 256), "opencl": (16, 8, 64), None: (8, 4, 64)}
LEN_VEC = 4  # the most rows of one thread that are vectorized


def is_transpose(block: S.Block) -> bool:
    """Whether ``block`` is ``B[idx] = A[perm(idx)]``: a copy whose load indices are its
    store indices in another order."""
    store = block.body
    if not isinstance(store, S.BufferStore) or not isinstance(store.value, E.BufferLoad):
        return False
    lhs, rhs = [id(i) for i in store.indices], [id(i) for i in store.value.indices]
    return lhs != rhs and sorted(lhs) == sorted(rhs)


def packed_factor(block: S.Block) -> int:
    """TVM's ``c_factor``: ``c`` when the prologue's largest read is indexed ``v // c``
    first (a packed, e.g. 4-bit, weight decoded in the prologue), else 1."""
    first = dominant_read(block).region[0].min
    if isinstance(first, E.FloorDiv) and isinstance(first.b, IntImm):
        return int(first.b.value)
    return 1


class Transpose(GPUScheduleRule):
    """Schedule a 2-D transpose through shared memory (``mlckit.dlight.gpu.Transpose()``, as
    TVM's).

    A rule is given to ``ApplyDefaultSchedule`` under a GPU target::

        from mlckit import dlight as dl
        with tvm.target.Target("cuda"):
            mod = dl.ApplyDefaultSchedule(dl.gpu.Transpose(), dl.gpu.Fallback())(mod)
    """

    def schedule(self, func, target):
        len_tx, len_ty, unroll = TILES.get(target.kind.name, TILES[None])
        sch = Schedule(func)
        infos = normalize_prim_func(sch)
        if infos is None:
            return None
        at = next((k for k in range(len(infos) - 1, -1, -1)
                   if is_transpose(sch.get(infos[k].block_rv))), None)
        if at is None or not all(i.is_injective() for i in infos[at + 1:]):
            return None
        block = infos[at].block_rv
        source = sch.get(block).body.value.buffer  # the transposed input
        for info in reversed(infos[at + 1:]):
            sch.reverse_compute_inline(info.block_rv)  # a ScheduleError: next rule
        prologue = infos[at - 1].block_rv if at > 0 else None
        if at > 1 and try_inline_contiguous_spatial(sch, infos[:at - 1]):
            return None  # blocks before the prologue that do not inline
        loops = sch.get_loops(block)
        if len(loops) != 2 or not all(isinstance(sch.get(lp).extent, IntImm) for lp in loops):
            return None
        c_factor = packed_factor(sch.get(prologue)) if prologue is not None else 1
        i, j = loops
        i, vi = sch.split(i, [None, c_factor], preserve_unit_iters=True)
        bi, ti = sch.split(i, [None, len_ty], preserve_unit_iters=True)
        bj, tj = sch.split(j, [None, len_tx], preserve_unit_iters=True)
        sch.reorder(bi, bj, ti, tj, vi)
        for loop, tag in [(bi, "blockIdx.y"), (bj, "blockIdx.x"),
                          (ti, "threadIdx.y"), (tj, "threadIdx.x")]:
            sch.bind(loop, tag)
        len_vec = min(LEN_VEC, c_factor)
        _, vi = sch.split(vi, [None, len_vec])
        if len_vec > 1:
            sch.vectorize(vi)
        # The tile's input, read by the same threads along the input's rows.
        index = next(k for k, r in enumerate(sch.get(block).reads) if r.buffer is source)
        shared = sch.cache_read(block, index, "shared")
        sch.compute_at(shared, bj)
        fused = sch.fuse(*sch.get_loops(shared)[2:])
        _, ty, tx, v = sch.split(fused, [None, len_ty, len_tx, c_factor])
        sch.bind(ty, "threadIdx.y")
        sch.bind(tx, "threadIdx.x")
        sch.unroll(v)
        sch.storage_align(shared, 0, axis=0, factor=32, offset=1)
        sch.annotate(bi, "pragma_auto_unroll_max_step", unroll)
        sch.annotate(bi, "pragma_unroll_explicit", 1)
        if prologue is not None:
            sch.compute_inline(prologue)
        return sch
