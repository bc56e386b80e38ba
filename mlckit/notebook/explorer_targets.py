"""How a ``ScheduleExplorer`` finds what an ``apply`` call names: the primitive by its name,
blocks by their names, loops by the names they print with, and the schedule handles to them
(reused from the steps before, so that the trace reads as a person writes it).
"""

from __future__ import annotations

from mlckit.error import TVMError, TVMValueError
from mlckit.tir.schedule import Schedule
from mlckit.tir.schedule.rv import BlockRV, LoopRV

from .explorer_primitives import (
    BLOCK,
    BLOCK_LOOP,
    BLOCK_OTHER_LOOP,
    LOOP,
    LOOPS,
    PRIMITIVES,
    Primitive,
    Selection,
)
from .explorer_steps import LoopInfo, format_value


class LoopNames:
    """The name resolution of ``ScheduleExplorer`` (mixed in): blocks and loops of the
    current step by name, each failure a TVMValueError saying what exists."""

    def _require_block(self, spec: Primitive, block) -> str:
        if block is None:
            raise TVMValueError(f"{spec.name}: give block=...")
        self._check_block(block)
        return block

    def _check_block(self, block: str) -> None:
        if block not in self.current.blocks:
            raise TVMValueError(f"there is no block {block!r} (the blocks: "
                                f"{', '.join(self.current.blocks) or 'none'})")

    # Loops are found by printed name in the current step; each resolver returns the loop's
    # LoopInfo with a block under it, which is how a handle to it is made (get_loops).
    def _own_loop(self, block: str, loop, prim: str) -> tuple[str, LoopInfo]:
        """The loop ``loop`` above ``block``."""
        if isinstance(loop, tuple):
            owner, name = loop
            info = self._info(owner, name, prim)
            if block not in info.blocks:
                raise TVMValueError(f"{prim}: loop `{name}` above block `{owner}` is not above "
                                    f"block `{block}`")
            return block, info
        return block, self._info(block, loop, prim)

    def _other_loop(self, block: str, loop, prim: str) -> tuple[str, LoopInfo]:
        """The loop ``loop`` of another nest than ``block``'s."""
        if isinstance(loop, tuple):
            return self._own_loop(loop[0], loop, prim)
        owners = [b for b, name in self.other_loops(block) if name == loop]
        if not owners:
            raise TVMValueError(f"{prim}: there is no loop `{loop}` outside the nest of block "
                                f"`{block}` (those loops: "
                                + (", ".join(n for _, n in self.other_loops(block)) or "none")
                                + ")")
        if len(owners) > 1:
            raise TVMValueError(f"{prim}: several loops outside block `{block}` are called "
                                f"`{loop}`; name one with its block, e.g. loop="
                                f"{format_value((owners[0], loop))}")
        return self._own_loop(owners[0], loop, prim)

    def _any_loop(self, block, loop, prim: str) -> tuple[str, LoopInfo]:
        """The loop ``loop`` above ``block``; without a block, the only loop so named."""
        if loop is None:
            raise TVMValueError(f"{prim}: give loop=...")
        if block is not None or isinstance(loop, tuple):
            return self._own_loop(block if block is not None else loop[0], loop, prim)
        owners = [lp.blocks[0] for lp in self.current.loops if lp.name == loop]
        if len(owners) != 1:
            where = (f"loops called `{loop}` are above blocks {', '.join(owners)}" if owners
                     else f"there is no loop `{loop}`")
            raise TVMValueError(f"{prim}: {where}; give the block too, e.g. block=...")
        return self._own_loop(owners[0], loop, prim)

    def _info(self, block: str, name: str, prim: str) -> LoopInfo:
        self._check_block(block)
        for lp in self.current.loops:
            if lp.name == name and block in lp.blocks:
                return lp
        raise TVMValueError(f"{prim}: there is no loop `{name}` above block `{block}` (its "
                            f"loops: {', '.join(self.loops(block)) or 'none'})")


class _Handles:
    """The block and loop handles of a schedule, reusing those the steps before made, so
    that the trace reads as a person writes it: one ``get_block`` per block."""

    def __init__(self, work: Schedule, known: list):
        self.work = work
        self.blocks: dict[str, BlockRV] = {}
        self.loops: dict[int, LoopRV] = {}  # id(loop_var) -> handle
        for rv in known:
            try:
                stmt = work.get(rv)
            except TVMError:  # removed by a step since
                continue
            if isinstance(rv, BlockRV):
                self.blocks.setdefault(stmt.name_hint, rv)
            else:
                self.loops.setdefault(id(stmt.loop_var), rv)

    def block(self, name: str) -> BlockRV:
        # two blocks may carry one name (a second cache of a buffer is named like the first,
        # as in TVM): then get_block refuses the name with a ScheduleError, even when a handle
        # of one of them is known; otherwise a known handle adds no get_block to the trace
        if name not in self.blocks or self._blocks_named(name) != 1:
            self.blocks[name] = self.work.get_block(name)
        return self.blocks[name]

    def _blocks_named(self, name: str) -> int:
        return sum(1 for refs in self.work.state.func_refs.values() for r in refs
                   if r.is_block and r.stmt.name_hint == name)

    def loop(self, block: str, info: LoopInfo) -> LoopRV:
        if id(info.var) not in self.loops:
            for rv in self.work.get_loops(self.block(block)):
                self.loops.setdefault(id(self.work.get(rv).loop_var), rv)
        return self.loops[id(info.var)]

    def known(self) -> list:
        return list(self.blocks.values()) + list(self.loops.values())


def _handles(result) -> list:
    """What a primitive returned, as a list (named once the new step is printed)."""
    if result is None:
        return []
    return list(result) if isinstance(result, (list, tuple)) else [result]


def _primitive(name: str) -> Primitive:
    spec = PRIMITIVES.get(name)
    if spec is None:
        raise TVMValueError(f"the explorer has no primitive {name!r} (it has: "
                            f"{', '.join(PRIMITIVES)})")
    return spec


def _missing_target(spec: Primitive, sel: Selection) -> str | None:
    needs_block = spec.target in (BLOCK, BLOCK_LOOP, BLOCK_OTHER_LOOP, LOOPS)
    needs_loop = spec.target in (LOOP, BLOCK_LOOP, BLOCK_OTHER_LOOP, LOOPS)
    if needs_block and sel.block is None:
        return "pick a block"
    if needs_loop and sel.loop is None:
        return "pick a loop"
    if spec.target in (LOOP, BLOCK_LOOP, LOOPS) and sel.block is not None \
            and sel.own_loop is None and not _above(sel):
        return f"the loop is not above block `{sel.block}`"
    if spec.target == BLOCK_OTHER_LOOP and (sel.own_loop is not None or _above(sel)):
        return f"{spec.name} needs a loop of another nest than block `{sel.block}`'s"
    return None


def _above(sel: Selection) -> bool:
    """Whether a ``(block, name)`` loop is also above the selected block."""
    return isinstance(sel.loop, tuple) and sel.loop[0] == sel.block
