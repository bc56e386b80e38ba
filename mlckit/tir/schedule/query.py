"""Queries over the schedule state: loops above a block, child blocks, producers, consumers."""

from __future__ import annotations

from mlckit.tir import stmt as S
from mlckit.tir.function import PrimFunc

from .ir_utils import realizes_under, walk
from .state import ScheduleState, StmtSRef


# -- queries used by the primitives --------------------------------------------------------------
def has_root_block(func: PrimFunc) -> bool:
    return isinstance(func.body, S.BlockRealize)


def name_of(sref: StmtSRef) -> str:
    if sref.is_block:
        return sref.stmt.name_hint
    return sref.stmt.loop_var.name_hint


def loop_srefs(block_sref: StmtSRef) -> list[StmtSRef]:
    """Loops above ``block_sref`` up to (not including) its scope block, outermost first."""
    out = []
    p = block_sref.parent
    while p is not None and p.is_loop:
        out.append(p)
        p = p.parent
    return out[::-1]


def scope_sref(sref: StmtSRef) -> StmtSRef | None:
    p = sref.parent
    while p is not None and not p.is_block:
        p = p.parent
    return p


def child_block_srefs(state: ScheduleState, sref: StmtSRef) -> list[StmtSRef]:
    stmt = sref.stmt
    out = []
    for realize in realizes_under(stmt):
        r = state.get_sref(realize.block)
        if r is not None:
            out.append(r)
    return out


def _regions_buffers(regions) -> list:
    return [r.buffer for r in regions]


def _touches(bufs, others) -> bool:
    return any(b is o for b in bufs for o in others)


def producer_srefs(state: ScheduleState, block_sref: StmtSRef) -> list[StmtSRef]:
    scope = scope_sref(block_sref)
    blocks = child_block_srefs(state, scope)
    me = block_sref.stmt
    reads = _regions_buffers(me.reads) + _regions_buffers(me.writes)
    out = []
    for r in blocks:
        if r is block_sref:
            break
        if _touches(_regions_buffers(r.stmt.writes), reads):
            out.append(r)
    return out


def consumer_srefs(state: ScheduleState, block_sref: StmtSRef) -> list[StmtSRef]:
    scope = scope_sref(block_sref)
    blocks = child_block_srefs(state, scope)
    me = block_sref.stmt
    writes = _regions_buffers(me.writes)
    out = []
    seen = False
    for r in blocks:
        if r is block_sref:
            seen = True
            continue
        if seen and _touches(_regions_buffers(r.stmt.reads) + _regions_buffers(r.stmt.writes), writes):
            out.append(r)
    return out


def is_ancestor(anc: StmtSRef, sref: StmtSRef) -> bool:
    p = sref.parent
    while p is not None:
        if p is anc:
            return True
        p = p.parent
    return False


def describe_loop(loop) -> str:
    return f"`{loop.loop_var.name_hint}`"


def init_holding(func: PrimFunc, name: str) -> str | None:
    """The name of the block whose ``T.init()`` holds a block called ``name``, if any."""
    found: list = []

    def visit(s):
        if isinstance(s, S.Block) and s.init is not None:
            walk(s.init, lambda t: found.append(s.name_hint)
                 if isinstance(t, S.Block) and t.name_hint == name else None)
        return not found

    walk(func.body, visit)
    return found[0] if found else None
