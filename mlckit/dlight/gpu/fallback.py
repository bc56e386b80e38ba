"""``dlight.gpu.Fallback``: bind each block's loops to the GPU's threads, one output per thread.

For each block of the function (under the root block, not yet bound): its loops are put in
the order spatial, reduction, other; the spatial ones fused and split by the target's
``max_threads_per_block`` (1024 for CUDA); the pieces bound to ``blockIdx.x`` and ``threadIdx.x``;
a block with a reduction loop gets its initialisation decomposed above that loop.  A block
without a spatial loop gets a unit loop to bind; leading spatial loops of symbolic extent (a
dynamic batch) are kept whole and fused into ``blockIdx.x`` after the split.  A loop nest that
holds several blocks (a kernel tiled for the CPU) gets its tile loops bound, one tile per
thread.  As TVM's rule, this makes any legalized operator run on a GPU, not run fast.

Before / after on ``B[i, j] = A[i, j] * 2`` over (4, 300)::

    for i, j in T.grid(4, 300):            for i_j_fused_0 in T.thread_binding(2, thread="blockIdx.x"):
        with T.block("B"): ...                 for i_j_fused_1 in T.thread_binding(1024, thread="threadIdx.x"):
                                                   with T.block("B"):
                                                       T.where(i_j_fused_0 * 1024 + i_j_fused_1 < 1200)
                                                       ...
"""

from __future__ import annotations

from mlckit.ir.node import Node
from mlckit.tir import stmt as S
from mlckit.tir.analysis.var_use import var_ids
from mlckit.tir.expr import IntImm, IterVarType
from mlckit.tir.schedule import Schedule
from mlckit.tir.schedule.ir_utils import realizes_under, walk

from ..base import ScheduleRule

__all__ = ["Fallback"]


def _loop_kinds(realize: S.BlockRealize, loops: list) -> list[str]:
    """"S", "R" or "O" per loop: feeding only spatial, only reduction, or other iterators."""
    spatial, reduction = set(), set()
    for iv, value in zip(realize.block.iter_vars, realize.iter_values):
        used = var_ids(value)
        (spatial if iv.iter_type == IterVarType.DataPar else reduction).update(used)
    kinds = []
    for loop in loops:
        v = id(loop.loop_var)
        kinds.append("S" if v in spatial and v not in reduction
                     else "R" if v in reduction and v not in spatial else "O")
    return kinds


class Fallback(ScheduleRule):
    """Bind every block's fused spatial loops to ``blockIdx.x`` x ``threadIdx.x``
    (``mlckit.dlight.gpu.Fallback()``, as TVM's).

    A rule is given to ``ApplyDefaultSchedule`` under a GPU target::

        from mlckit import dlight as dl
        with tvm.target.Target("cuda"):
            mod = dl.ApplyDefaultSchedule(dl.gpu.Fallback(), dl.gpu.Fallback())(mod)
    """

    def is_target_available(self, target) -> bool:
        return "gpu" in target.keys

    def apply(self, func, target, tunable):
        if not self.is_target_available(target):
            return None
        attrs = target.attrs or {}
        max_threads = int(attrs.get("max_threads_per_block") or attrs.get("max_num_threads")
                          or 1024)
        # A kernel tiled for the CPU (legalized without a target) arrives with its reductions
        # already decomposed: TVM's compact-dataflow check refuses to bind loops over such an
        # update block.  Its tiles are independent (the bound loops index only spatial
        # iterators, which bind still checks), so its tile loops are bound with the check off;
        # TVM's dlight never sees such kernels (its LegalizeOps has no CPU tiling).
        sch = Schedule(func, enable_check=not _has_decomposed_reduction(func))
        reductions = []
        for block in sch.get_child_blocks(sch.get_block("root")):
            loops = sch.get_loops(block)
            loop_stmts = [sch.get(lp) for lp in loops]
            if not loops or any(lp.kind == S.ForKind.THREAD_BINDING for lp in loop_stmts):
                continue
            if len(sch.get_child_blocks(loops[0])) > 1:
                if not _bind_shared_nest(sch, loops, max_threads):
                    return None
                continue
            realize = sch.get_sref(block).stmt
            kinds = _loop_kinds(_realize_of(sch, block, realize), loop_stmts)
            s_loops = [lp for lp, k in zip(loops, kinds) if k == "S"]
            r_loops = [lp for lp, k in zip(loops, kinds) if k == "R"]
            o_loops = [lp for lp, k in zip(loops, kinds) if k == "O"]
            if not s_loops:
                s_loops = [sch.add_unit_loop(block)]
            sch.reorder(*s_loops, *r_loops, *o_loops)
            if not _bind_spatial(sch, s_loops, max_threads):
                return None
            if r_loops:
                reductions.append((block, r_loops[0]))
        for block, loop in reductions:
            if sch.get_sref(block).stmt.init is not None:
                sch.decompose_reduction(block, loop)
        return sch


def _bind_spatial(sch, s_loops: list, max_threads: int) -> bool:
    """Fuse the spatial loops, split them by ``max_threads`` and bind the parts.  Leading
    loops of symbolic extent (a dynamic batch) stay whole, fused into ``blockIdx.x`` after
    the split of the constant ones (mlckit's ``split`` cannot infer a factor of a symbolic
    extent; TVM splits the whole product).  False when no loop has a constant extent, or a
    symbolic one follows a constant one."""
    constant = [isinstance(sch.get(lp).extent, IntImm) for lp in s_loops]
    n_symbolic = constant.index(True) if True in constant else len(s_loops)
    if n_symbolic == len(s_loops) or not all(constant[n_symbolic:]):
        return False
    rest = s_loops[n_symbolic:]
    fused = sch.fuse(*rest) if len(rest) > 1 else rest[0]
    bx, tx = sch.split(fused, [None, max_threads])
    if n_symbolic:
        bx = sch.fuse(*s_loops[:n_symbolic], bx)
    sch.bind(bx, "blockIdx.x")
    sch.bind(tx, "threadIdx.x")
    return True


def _bind_shared_nest(sch, loops: list, max_threads: int) -> bool:
    """Bind a loop nest holding several blocks (a kernel already tiled for the CPU, its
    accumulator and write-back under the tile loops): the outermost perfectly nested serial
    loops feeding only spatial iterators of every block under them are fused, split by
    ``max_threads`` and bound; each thread then runs one tile.  False when their extent is
    symbolic."""
    realizes = realizes_under(sch.get(loops[0]), stop_at_blocks=False)
    reduction = set()
    for realize in realizes:
        for iv, value in zip(realize.block.iter_vars, realize.iter_values):
            if iv.iter_type != IterVarType.DataPar:
                reduction |= var_ids(value)
    spatial = []
    for lp, inner in zip(loops, [*loops[1:], None]):
        stmt = sch.get(lp)
        if stmt.kind != S.ForKind.SERIAL or id(stmt.loop_var) in reduction:
            break
        spatial.append(lp)
        if inner is None or stmt.body is not sch.get(inner):
            break
    if not spatial:
        spatial = [sch.add_unit_loop(loops[0])]
    fused = sch.fuse(*spatial) if len(spatial) > 1 else spatial[0]
    if not isinstance(sch.get(fused).extent, IntImm):
        return False
    bx, tx = sch.split(fused, [None, max_threads])
    sch.bind(bx, "blockIdx.x")
    sch.bind(tx, "threadIdx.x")
    return True


def _realize_of(sch, block, stmt):
    """The BlockRealize of ``block`` (its iter values), found under its outermost loop."""
    if isinstance(stmt, S.BlockRealize):
        return stmt
    target = stmt  # a Block: find the realize that holds it
    found = []

    def walk(s):
        if isinstance(s, S.BlockRealize) and s.block is target:
            found.append(s)
            return
        if isinstance(s, Node):
            for name in s.field_names():
                walk(getattr(s, name))
        elif isinstance(s, (list, tuple)):
            for x in s:
                walk(x)

    walk(sch.get(sch.get_loops(block)[0]))
    return found[0]


def _has_decomposed_reduction(func) -> bool:
    """Whether a block of ``func`` has a reduction iterator but no ``T.init()`` (the update
    half of a ``decompose_reduction``)."""
    found = False

    def visit(stmt):
        nonlocal found
        if isinstance(stmt, S.Block) and stmt.init is None and any(
                iv.iter_type == IterVarType.CommReduce for iv in stmt.iter_vars):
            found = True
        return not found

    walk(func.body, visit)
    return found
