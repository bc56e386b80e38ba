"""``dlight.gpu.RMSNorm``: root-mean-square normalisation, one thread block per row.

Applies to the kernel TVM 0.27 legalizes ``R.nn.rms_norm`` to: blocks (each over the rows
and, but for the last two, the normalised axis) ``sqr = x * x``, ``redsum = sum(sqr)``,
``rsqrt = T.rsqrt(redsum / d + eps)`` (the block that identifies it), ``norm = rsqrt * x *
w``, with copies or casts of the input, the weight and the output around them (inlined).
As TVM's CUDA choice, each row gets a thread block (``blockIdx.x``, the leading axes fused)
of up to 512 threads (``threadIdx.x``), each handling 8 consecutive elements of the row (the
row split into a whole number of threads, see ``row_split``): it reads
them into registers once (``x_local``, a vectorized copy), squares them and adds them up,
and after the row's ``rsqrt`` is known (``shared``) normalises the same 8 elements into
``local`` registers and writes them out (a vectorized copy).

Where mlckit differs from TVM: TVM binds the sum of squares' reduction to ``threadIdx.x``
and lets ``LowerCrossThreadReduction`` build an all-reduce, which mlckit's CUDA backend
does not have.  As in ``Reduction``, each thread's partial sum goes to ``shared`` memory
(``rfactor``: ``redsum_rf``), computed in a second ``threadIdx.x`` loop with the squares
(mlckit's ``reverse_compute_at`` cannot place the partial sums under the loop that read
``x``), and one thread adds them up.  A row whose length is symbolic is left to the next
rule (mlckit's ``split`` needs a constant extent); TVM 0.27 fails on an input of rank 2
(it fuses the zero leading loops of the ``rsqrt`` block), mlckit schedules it.

Before (the input and output caches made) / after on rows of 64: 8 threads of 8 elements::

    x_local = x; sqr = x_local * x_local      for row in T.thread_binding(8, thread="blockIdx.x"):
    redsum = sum(sqr, axis=-1)                    for tx in T.thread_binding(8, thread="threadIdx.x"):
    rsqrt = T.rsqrt(redsum / 64 + eps)                for _, v in T.grid(1, 8): x_local     # local, vectorized
    norm = rsqrt * x_local * w                    for tx in T.thread_binding(8, thread="threadIdx.x"):
    y = norm                                          for _ in range(8): sqr                 # local
                                                      for _ in range(8): redsum_rf           # shared
                                                  for one in T.thread_binding(1, thread="threadIdx.x"):
                                                      for tx in range(8): redsum          # shared
                                                  rsqrt                                     # shared
                                                  for tx in T.thread_binding(8, thread="threadIdx.x"):
                                                      for _, _ in T.grid(1, 8): norm        # local
                                                      for v in T.vectorized(8): y
"""

from __future__ import annotations

from mlckit.ir.op import Op
from mlckit.ir.structural import structural_equal
from mlckit.tir import expr as E
from mlckit.tir import stmt as S
from mlckit.tir.expr import IntImm
from mlckit.tir.schedule import Schedule

from .base import GPUScheduleRule

__all__ = ["RMSNorm"]

NUM_TX = {"cuda": 512, "opencl": 256, None: 64}  # threads per row, TVM's choices
VEC = 8  # consecutive elements of a row per thread


def is_copy_or_cast(block: S.Block) -> bool:
    """``Y[idx] = X[idx]`` or ``Y[idx] = T.Cast(dtype, X[idx])``: one read, one write, the
    same indices."""
    store = block.body
    if len(block.reads) != 1 or len(block.writes) != 1 or not isinstance(store, S.BufferStore):
        return False
    load = store.value.value if isinstance(store.value, E.Cast) else store.value
    return (isinstance(load, E.BufferLoad) and len(load.indices) == len(store.indices)
            and all(structural_equal(a, b) for a, b in zip(load.indices, store.indices)))


def is_rsqrt(block: S.Block) -> bool:
    """``Y[idx] = T.rsqrt(...)`` of one read."""
    store = block.body
    return (len(block.reads) == 1 and len(block.writes) == 1
            and isinstance(store, S.BufferStore) and isinstance(store.value, E.Call)
            and store.value.op is Op.get("tir.rsqrt"))


def row_split(extent, num_tx: int) -> tuple[int, int] | None:
    """(threads, elements per thread at a time) for a row of ``extent``: 8 consecutive
    elements (1 when 8 does not divide the row) and the most threads up to ``num_tx`` that
    divide the rest.  Dividing, unlike TVM's 512 threads under a guard: mlckit's
    ``reverse_compute_at`` does not carry a split's ``T.where`` over to the partial sums."""
    if not isinstance(extent, IntImm):
        return None
    vec = VEC if extent.value % VEC == 0 else 1
    per_vec = extent.value // vec
    return max(t for t in range(1, min(num_tx, per_vec) + 1) if per_vec % t == 0), vec


class RMSNorm(GPUScheduleRule):
    """Schedule an RMS norm kernel, one thread block per row (``mlckit.dlight.gpu.RMSNorm()``,
    as TVM's).

    A rule is given to ``ApplyDefaultSchedule`` under a GPU target::

        from mlckit import dlight as dl
        with tvm.target.Target("cuda"):
            mod = dl.ApplyDefaultSchedule(dl.gpu.RMSNorm(), dl.gpu.Fallback())(mod)
    """

    def schedule(self, func, target):
        num_tx = NUM_TX.get(target.kind.name, NUM_TX[None])
        sch = Schedule(func)
        root = sch.get_block("root")
        blocks = sch.get_child_blocks(root)
        if not any(is_rsqrt(sch.get(b)) for b in blocks):
            return None
        sch.cache_read(blocks[0], 0, "local")
        sch.cache_write(blocks[-1], 0, "local")
        for block in blocks:
            if is_copy_or_cast(sch.get(block)):
                sch.compute_inline(block)
        blocks = sch.get_child_blocks(root)
        if len(blocks) != 6 or not is_rsqrt(sch.get(blocks[3])):
            return None
        read, sqr, redsum, rsqrt, norm, write = blocks
        *rows, inner = sch.get_loops(read)
        n_rows = len(rows)
        if not rows or any(len(sch.get_loops(b)) != n_rows + 1 for b in (sqr, redsum, norm)):
            return None
        split = row_split(sch.get(inner).extent, num_tx)
        if split is None:
            return None
        num_tx, vec = split
        # The partial sums: one per thread, before anything moves (rfactor needs the
        # reduction's own loop nest).
        tx, _, _ = sch.split(sch.get_loops(redsum)[-1], [num_tx, None, vec])
        redsum_rf = sch.rfactor(tx, 0)
        # Scopes first: compute_at relaxes a global buffer over the threads.
        for block, scope in [(redsum_rf, "shared"), (sqr, "local"), (redsum, "shared"),
                             (rsqrt, "shared"), (norm, "local")]:
            sch.set_scope(block, 0, scope)
        # Each thread reads its 8 elements of the row into registers.
        tx, _, v = sch.split(inner, [num_tx, None, vec], preserve_unit_iters=True)
        sch.bind(tx, "threadIdx.x")
        sch.vectorize(v)
        # ... squares them and sums them into its partial sum.
        sch.reverse_compute_at(sqr, rows[-1], preserve_unit_loops=True)
        sch.reverse_compute_at(redsum_rf, rows[-1])
        tx = sch.get_loops(redsum_rf)[n_rows]
        sch.bind(tx, "threadIdx.x")
        sch.compute_at(sqr, tx)
        # One thread adds up the partial sums; the row's rsqrt is computed once.
        sch.reverse_compute_at(redsum, rows[-1])
        one, _ = sch.split(sch.get_loops(redsum)[n_rows], [1, None])
        sch.bind(one, "threadIdx.x")
        sch.reverse_compute_at(rsqrt, rows[-1], index=-1)
        # Each thread normalises its 8 elements and writes them out.
        sch.reverse_compute_at(norm, rows[-1], index=-1)
        tx, _, _ = sch.split(sch.get_loops(norm)[-1], [num_tx, None, vec],
                                preserve_unit_iters=True)
        sch.bind(tx, "threadIdx.x")
        sch.reverse_compute_at(write, tx, index=-1)
        if vec > 1:  # else the write has no loop of its own
            sch.vectorize(sch.get_loops(write)[-1])
        # fused last: mlckit's compute_at cannot tell that the rows of a fused loop differ
        sch.bind(sch.fuse(*rows), "blockIdx.x")
        return sch
