"""``MultiLevelTiling``: tile a reduction block's loops into levels, as TVM's CPU rule.

The structure string says the levels from the outside in: ``"SSRSRS"`` splits every spatial
loop into four tiles and every reduction loop into two (``sample_perfect_tile``), then
orders them ``S0 S1 R0 S2 R1 S3`` — spatial tiles outside, a reduction level, smaller
spatial tiles, the rest of the reduction, the innermost spatial tile.  The block is
annotated ``meta_schedule.tiling_structure``.

Write reuse (``ReuseType("may", levels=[1, 2], scope="global")``): besides the plain tiling,
the result is written through a cache placed at the end of tile level 1 or 2
(``cache_write`` + ``reverse_compute_at``); when the block has one elementwise consumer (a
bias add), the consumer itself is moved there instead (fusion).  So one block gives up to
three design spaces.

Example::

    rule = ms.schedule_rule.MultiLevelTiling(
        structure="SSRSRS", max_innermost_factor=64,
        reuse_write=ms.schedule_rule.ReuseType(req="may", levels=[1, 2], scope="global"))
"""

from __future__ import annotations

from dataclasses import dataclass, field

from mlckit.tir import expr as E
from mlckit.tir.expr import Var
from mlckit.tir.schedule import Schedule, ScheduleError
from mlckit.tir.schedule.query import consumer_srefs

from ..utils import loop_iter_type
from .schedule_rule import ScheduleRule, block_is_valid, is_root


@dataclass
class ReuseType:
    """How a tiled block reuses data: ``req`` is ``"no"``, ``"may"`` or ``"must"``; the cache
    goes at the end of tile ``levels``; ``scope`` is its storage scope."""

    req: str = "no"
    levels: list = field(default_factory=list)
    scope: str = "global"


def needs_multi_level_tiling(sch: Schedule, block) -> bool:
    """A block worth tiling: it reduces, and each iterator is bound to one loop variable."""
    if not block_is_valid(sch, block) or is_root(sch, block):
        return False
    realize = sch.get_sref(block).realize
    ivs = realize.block.iter_vars
    if not any(iv.iter_type == E.IterVarType.CommReduce for iv in ivs):
        return False
    if not all(iv.iter_type in (E.IterVarType.DataPar, E.IterVarType.CommReduce) for iv in ivs):
        return False
    return all(isinstance(v, Var) for v in realize.iter_values)


class MultiLevelTiling(ScheduleRule):
    """TVM's ``MultiLevelTiling`` for CPUs (no thread bindings, no read caches)."""

    def __init__(self, structure: str = "SSRSRS", tile_binds=None, max_innermost_factor=64,
                 vector_load_lens=None, reuse_read=None, reuse_write=None,
                 filter_fn=None):
        if set(structure) - {"S", "R"} or "S" not in structure or "R" not in structure:
            from mlckit.error import TVMValueError

            raise TVMValueError(f"MultiLevelTiling: structure {structure!r} must be made of "
                                "'S' and 'R' and contain both")
        self.structure = structure
        self.max_innermost_factor = max_innermost_factor or -1
        self.reuse_write = reuse_write or ReuseType()

    def apply(self, sch: Schedule, block) -> list[Schedule]:
        if not needs_multi_level_tiling(sch, block):
            return [sch]
        sch = sch.copy()
        sch.annotate(block, "meta_schedule.tiling_structure", self.structure)
        tiles = self._tile(sch, block)
        states = [sch]
        if self.reuse_write.req in ("may", "must"):
            reused = self._write_reuse(sch, block, tiles)
            states = reused if self.reuse_write.req == "must" and reused else states + reused
        return states

    def _tile(self, sch: Schedule, block) -> list[list]:
        s_levels = [i for i, c in enumerate(self.structure) if c == "S"]
        r_levels = [i for i, c in enumerate(self.structure) if c == "R"]
        tiles: list[list] = [[] for _ in self.structure]
        realize = sch.get_sref(block).realize
        for loop in sch.get_loops(block):
            kind = loop_iter_type(sch.get(loop), realize)
            if kind == "O":  # a loop the block does not use as one kind: keep it outside
                tiles[0].append(loop)
                continue
            levels = s_levels if kind == "S" else r_levels
            factors = sch.sample_perfect_tile(loop, n=len(levels),
                                              max_innermost_factor=self.max_innermost_factor)
            for level, part in zip(levels, sch.split(loop, factors=factors)):
                tiles[level].append(part)
        sch.reorder(*[loop for level in tiles for loop in level])
        return tiles

    def _write_reuse(self, sch: Schedule, block, tiles) -> list[Schedule]:
        # asked of the state, so the plain tiling's trace does not record the question
        consumers = consumer_srefs(sch.state, sch.get_sref(block))
        fuse = len(consumers) == 1 and _elementwise(consumers[0].stmt)
        out = []
        for level in self.reuse_write.levels:
            if not 1 <= level <= len(tiles) or not tiles[level - 1]:
                continue
            trial = sch.copy()
            try:
                if fuse:
                    (target,) = trial.get_consumers(block)
                else:
                    target = trial.cache_write(block, 0, self.reuse_write.scope)
                trial.reverse_compute_at(target, tiles[level - 1][-1], preserve_unit_loops=True)
            except ScheduleError:
                continue
            out.append(trial)
        return out


def _elementwise(stmt) -> bool:
    return stmt.init is None and all(iv.iter_type == E.IterVarType.DataPar
                                     for iv in stmt.iter_vars)
