"""``sample_compute_location``: sample where a block is computed — inline, at the root, or
under one of its consumers' loops (TVM's ``SampleComputeLocation``).

The candidates, as TVM collects them: ``-2`` (inline, when ``compute_inline`` would succeed),
``-1`` (the root: leave the block where it is), then the index of each loop above the first
consumer, down to the loop that encloses every consumer, where ``compute_at`` would succeed —
skipping unit loops, stopping at a spatial loop below a reduction loop and at reduction loops
below the last spatial one.  The decision is that index; the returned ``LoopRV`` stands for the
loop, or for "root" / "inline", and ``compute_at`` accepts all three.

Example::

    loc = sch.sample_compute_location(sch.get_block("B"))   # decision e.g. 0
    sch.compute_at(sch.get_block("B"), loc)
"""

from __future__ import annotations

from mlckit.arith.analyzer import uses_var
from mlckit.tir import expr as E
from mlckit.tir.expr import IntImm

from .error import ScheduleError
from .instruction import primitive
from .ir_utils import realizes_under
from .query import consumer_srefs, loop_srefs
from .rv import BlockRV, LoopRV

ROOT, INLINE = "compute-root", "compute-inline"  # what a location LoopRV may stand for


def _loop_kind(loop) -> str:
    """``"S"`` when every block under ``loop`` uses it only in spatial bindings, ``"R"`` when
    only in reduction ones, ``"O"`` otherwise."""
    var = loop.loop_var
    seen = set()
    for realize in realizes_under(loop, stop_at_blocks=False):
        for iv, value in zip(realize.block.iter_vars, realize.iter_values):
            if uses_var(value, lambda v: v is var):
                seen.add({E.IterVarType.DataPar: "S", E.IterVarType.CommReduce: "R"}
                         .get(iv.iter_type, "O"))
    if "O" in seen or seen == {"S", "R"}:
        return "O"
    return "R" if seen == {"R"} else "S"


def _lowest_common_ancestor(srefs):
    chains = []
    for s in srefs:
        chain = []
        while s is not None:
            chain.append(s)
            s = s.parent
        chains.append(chain[::-1])
    lca = None
    for level in zip(*chains):
        if all(x is level[0] for x in level):
            lca = level[0]
        else:
            break
    return lca


class ComputeLocationMixin:
    def _succeeds(self, block_sref, action) -> bool:
        """Whether ``action(trial, block_rv)`` succeeds on a copy of this schedule."""
        rv = self._rv_for(block_sref, BlockRV)
        try:
            trial = self.copy()
            action(trial, rv)
            return True
        except ScheduleError:
            return False
        finally:
            self.remove_rv(rv)

    def _compute_locations(self, block_sref) -> list[tuple[int, object]]:
        out = []
        if self._succeeds(block_sref, lambda t, b: t.compute_inline(b)):
            out.append((-2, INLINE))
        out.append((-1, ROOT))
        consumers = consumer_srefs(self.state, block_sref)
        if not consumers:
            return out
        boundary = consumers[0].parent if len(consumers) == 1 else \
            _lowest_common_ancestor(consumers)
        loops = loop_srefs(consumers[0])
        if boundary is None or not boundary.is_loop or boundary not in loops:
            return out
        candidates = loops[:loops.index(boundary) + 1]
        kinds = [_loop_kind(s.stmt) for s in candidates]
        last_spatial = max((i for i, k in enumerate(kinds) if k == "S"), default=-1)
        visited_reduce = False
        for i, (sref, kind) in enumerate(zip(candidates, kinds)):
            extent = sref.stmt.extent
            if isinstance(extent, IntImm) and extent.value == 1:
                continue
            if kind == "S":
                if visited_reduce:
                    break
            else:
                visited_reduce = True
                if i > last_spatial:
                    break
            loop_rv = self._rv_for(sref, LoopRV)
            if self._succeeds(block_sref, lambda t, b, lp=loop_rv: t.compute_at(
                    b, lp, preserve_unit_loops=True)):
                out.append((i, sref))
            self.remove_rv(loop_rv)
        return out

    @primitive("SampleComputeLocation", inputs=("block",), is_pure=True)
    def sample_compute_location(self, block, decision=None) -> LoopRV:
        """Sample where ``block`` is computed: a LoopRV for ``compute_at`` that stands for a
        consumer loop, the root (decision -1) or inlining (decision -2).

        Example::

            loc = sch.sample_compute_location(block_B)
            sch.compute_at(block_B, loc)
        """
        prim = "sample_compute_location"
        sref = self._block_sref(block, prim)
        locations = self._compute_locations(sref)
        if decision is None:
            index, where = locations[self._rng.randrange(len(locations))]
        else:
            found = [loc for loc in locations if loc[0] == int(decision)]
            if not found:
                raise ScheduleError(prim, f"decision {decision} is not a compute location of "
                                    f"block `{sref.stmt.name_hint}` (its locations are "
                                    f"{[i for i, _ in locations]})", [sref.stmt])
            index, where = found[0]
        self._decision = index
        return self._new_rv(LoopRV, where)

    def _location_mark(self, loop) -> str | None:
        """``ROOT`` / ``INLINE`` when ``loop`` is a sampled location standing for them."""
        entry = self._symbols.get(id(loop)) if isinstance(loop, LoopRV) else None
        if entry is not None and entry[1] in (ROOT, INLINE):
            return entry[1]
        return None


def compute_locations(sch, block) -> list[int]:
    """The decisions ``sample_compute_location(block)`` could take now (what a tuner's
    mutator chooses among)."""
    return [i for i, _ in sch._compute_locations(sch._block_sref(block, "compute_locations"))]
