"""What the GPU rules look at before scheduling (TVM's ``dlight.analysis``).

``normalize_prim_func(sch)`` lists the blocks under the root block, each with one loop per
block iterator and the iterator's kind: ``"S"`` spatial, ``"R"`` reduction, ``"O"`` other.
A rule reads these ``BlockInfo`` records to decide whether it applies: Reduction wants one
``S..R..`` block whose body is ``X[...] = X[...] + Y``, GeneralReduction a chain of
``S..R..`` blocks ending in a spatial one, and so on.

Example::

    sch = tir.Schedule(func)
    infos = normalize_prim_func(sch)       # [BlockInfo("B", "SR", [8, 16])] for a row sum
    infos[0].dom_kind()                    # 'SR'
"""

from __future__ import annotations

from mlckit.ir.structural import structural_equal
from mlckit.tir import expr as E
from mlckit.tir import stmt as S
from mlckit.tir.analysis.var_use import var_ids
from mlckit.tir.expr import IntImm, IterVarType
from mlckit.tir.schedule import ScheduleError
from mlckit.tir.schedule.ir_utils import realizes_under

__all__ = ["BlockInfo", "IterInfo", "normalize_prim_func", "reduction_rhs",
           "is_broadcast_epilogue", "max_threads_per_block", "max_shared_memory_per_block",
           "try_inline_contiguous_spatial", "vars_in_region"]

# The shared memory a CUDA thread block gets when the target does not say (TVM's default).
DEFAULT_MAX_SHARED = {"cuda": 49152}


class IterInfo:
    """One block iterator: its kind ("S", "R" or "O"), variable, extent and loop."""

    def __init__(self, kind: str, var, dom, loop_rv):
        self.kind, self.var, self._dom, self.loop_rv = kind, var, dom, loop_rv

    @property
    def dom(self):
        """The extent: an int when constant, else the symbolic expression."""
        return self._dom.value if isinstance(self._dom, IntImm) else self._dom

    def __repr__(self):
        return f'Iter("{self.kind}", {self.dom})'


class BlockInfo:
    """A block under the root, with one ``IterInfo`` per block iterator (in their order)."""

    def __init__(self, name: str, iters: list, block_rv, reduction_block: bool):
        self.name, self.iters, self.block_rv = name, iters, block_rv
        self._reduction = reduction_block

    def dom(self) -> list:
        return [i.dom for i in self.iters]

    def dom_kind(self) -> str:
        """The kinds of the iterators, e.g. ``"SSR"`` for a batched row reduction."""
        return "".join(i.kind for i in self.iters)

    def is_injective(self) -> bool:
        return all(k == "S" for k in self.dom_kind())

    def is_reduction(self) -> bool:
        return self._reduction

    def get_loops(self) -> list:
        return [i.loop_rv for i in self.iters]

    def __repr__(self):
        return f'BlockInfo("{self.name}", "{self.dom_kind()}", {self.dom()})'


_KIND = {IterVarType.DataPar: "S", IterVarType.CommReduce: "R"}


def normalize_prim_func(sch) -> list[BlockInfo] | None:
    """The blocks under the root, or None when the function is not in the form the rules
    schedule: every block a direct child of the root, bound to its loops one to one (each
    iterator's value is one of its loops' variables), no loop bound to a thread yet."""
    try:
        root = sch.get_block("root")
    except ScheduleError:
        return None
    infos = []
    for block in sch.get_child_blocks(root):
        loops = sch.get_loops(block)
        loop_stmts = [sch.get(lp) for lp in loops]
        if any(lp.kind == S.ForKind.THREAD_BINDING for lp in loop_stmts):
            return None
        realize = realize_of(sch, block)
        if realize is None or len(loops) != len(realize.block.iter_vars):
            return None
        loop_of = {id(s.loop_var): rv for s, rv in zip(loop_stmts, loops)}
        iters = []
        for iv, value in zip(realize.block.iter_vars, realize.iter_values):
            if not isinstance(value, E.Var) or id(value) not in loop_of:
                return None
            iters.append(IterInfo(_KIND.get(iv.iter_type, "O"), iv.var, iv.dom.extent,
                                  loop_of.pop(id(value))))
        block_stmt = realize.block
        infos.append(BlockInfo(block_stmt.name_hint, iters, block,
                               any(i.kind == "R" for i in iters)))
    return infos


def realize_of(sch, block) -> S.BlockRealize | None:
    """The BlockRealize of ``block`` (its iterator values)."""
    stmt = sch.get(block)
    loops = sch.get_loops(block)
    scope = sch.get(loops[0]) if loops else sch.get(sch.get_block("root")).body
    for realize in realizes_under(scope, stop_at_blocks=False):
        if realize.block is stmt:
            return realize
    return None


def reduction_rhs(block: S.Block):
    """``Y`` when the block's body is ``X[idx] = X[idx] + Y``, else None."""
    store = block.body
    if not isinstance(store, S.BufferStore) or not isinstance(store.value, E.Add):
        return None
    load = store.value.a
    if (not isinstance(load, E.BufferLoad) or load.buffer is not store.buffer
            or len(load.indices) != len(store.indices)
            or not all(structural_equal(a, b) for a, b in zip(load.indices, store.indices))):
        return None
    return store.value.b


def vars_in_region(block: S.Block, region) -> set:
    """The ids of ``block``'s iterator variables its access ``region`` uses."""
    own = {id(iv.var) for iv in block.iter_vars}
    used = set()
    for rng in region:
        used |= var_ids(rng.min)
    return used & own


def is_broadcast_epilogue(sch, block, epilogue) -> bool:
    """Whether ``epilogue`` reads ``block``'s output with fewer iterators than it has (as a
    row's sum read along the row): then every thread of the row needs that value."""
    written = {id(r.buffer) for r in sch.get(block).writes}
    ep = sch.get(epilogue)
    n_iters = sum(1 for iv in ep.iter_vars
                  if not (isinstance(iv.dom.extent, IntImm) and iv.dom.extent.value == 1))
    return any(id(r.buffer) in written and len(vars_in_region(ep, r.region)) < n_iters
               for r in ep.reads)


def try_inline_contiguous_spatial(sch, infos: list[BlockInfo] | None) -> list[BlockInfo] | None:
    """Inline as many runs of spatial blocks as possible into their neighbours (producers
    first, then consumers); the blocks left."""
    if infos is None:
        return None
    result, run = [], []
    for info in infos:
        if info.is_injective():
            run.append(info)
            continue
        result += _inline_all(sch, run)
        result.append(info)
        run = []
    return result + _inline_all(sch, run)


def _inline_all(sch, blocks: list[BlockInfo]) -> list[BlockInfo]:
    blocks = list(blocks)
    while True:
        for how in (sch.compute_inline, sch.reverse_compute_inline):
            done = next((i for i, b in enumerate(blocks) if _tried(how, b.block_rv)), None)
            if done is not None:
                blocks.pop(done)
                break
        else:
            return blocks


def _tried(how, block) -> bool:
    try:
        how(block)  # a schedule error leaves the schedule as it was
    except ScheduleError:
        return False
    return True


def max_threads_per_block(target) -> int:
    """The target's threads per block (``max_threads_per_block``; 1024 for CUDA)."""
    attrs = target.attrs or {}
    found = attrs.get("max_threads_per_block") or attrs.get("max_num_threads")
    return int(found) if found else (1024 if target.kind.name == "cuda" else 256)


def max_shared_memory_per_block(target) -> int:
    """The target's shared memory per block in bytes (TVM's CUDA default 49152 when the
    target does not say)."""
    found = (target.attrs or {}).get("max_shared_memory_per_block")
    return int(found) if found else DEFAULT_MAX_SHARED.get(target.kind.name, 16384)
