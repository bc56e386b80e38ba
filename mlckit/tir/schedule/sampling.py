"""Sampling for tuning: ``sample_perfect_tile`` and ``sample_categorical``.

They draw from the schedule's random generator (``Schedule(mod, seed=…)``, ``sch.seed``)
and return ``ExprRV`` values that other primitives accept (``sch.split(j, factors=[v0, v1])``).
The choice is recorded in the trace as a *decision*, so replaying the trace reproduces it.
"""

from __future__ import annotations

from mlckit.tir.expr import IntImm

from .error import ScheduleError
from .instruction import primitive
from .query import describe_loop
from .rv import ExprRV


def perfect_tiles(extent: int, n: int, max_innermost_factor: int) -> list[list[int]]:
    """Every way to write ``extent`` as a product of ``n`` factors, the innermost at most
    ``max_innermost_factor``."""
    divisors = [d for d in range(1, extent + 1) if extent % d == 0]
    out: list[list[int]] = []

    def rec(rest, k, acc):
        if k == 1:
            out.append(acc + [rest])
            return
        for d in divisors:
            if d > rest:
                break
            if rest % d == 0:
                rec(rest // d, k - 1, acc + [d])

    for inner in divisors:
        if max_innermost_factor > 0 and inner > max_innermost_factor:
            break
        if n == 1:
            if inner == extent:
                out.append([inner])
            continue
        before = len(out)
        rec(extent // inner, n - 1, [])
        for t in out[before:]:
            t.append(inner)
    return out


class SamplingMixin:
    @primitive("SamplePerfectTile", inputs=("loop",), attrs=("n", "max_innermost_factor"),
               is_pure=True)
    def sample_perfect_tile(self, loop, n: int, max_innermost_factor: int = 16,
                            decision=None) -> list[ExprRV]:
        """Sample ``n`` factors whose product is the loop's extent (innermost at most
        ``max_innermost_factor``); returns ExprRVs for ``split``.

        Example::

            j_factors = sch.sample_perfect_tile(loop=j, n=2)   # e.g. [32, 4]
            j_0, j_1 = sch.split(loop=j, factors=j_factors)
        """
        prim = "sample_perfect_tile"
        sref = self._loop_sref(loop, prim)
        extent = sref.stmt.extent
        if not isinstance(extent, IntImm):
            raise ScheduleError(prim, f"loop {describe_loop(sref.stmt)} has a non-constant extent "
                                f"{extent}; only constant extents can be tiled", [sref.stmt])
        if n < 1:
            raise ScheduleError(prim, f"n must be at least 1, got {n}")
        if decision is not None:
            values = [int(x) for x in decision]
            prod = 1
            for v in values:
                prod *= v
            if len(values) != n or prod != extent.value:
                raise ScheduleError(prim, f"decision {values} is not {n} factors of {extent.value}")
        else:
            tiles = perfect_tiles(extent.value, n, max_innermost_factor)
            values = tiles[self._rng.randrange(len(tiles))]
        self._decision = list(values)
        return [self._new_rv(ExprRV, v) for v in values]

    @primitive("SampleCategorical", attrs=("candidates", "probs"), is_pure=True)
    def sample_categorical(self, candidates, probs, decision=None) -> ExprRV:
        """Sample one of ``candidates`` with probabilities ``probs``; returns an ExprRV.

        Example::

            v = sch.sample_categorical(candidates=[0, 16, 64], probs=[0.2, 0.4, 0.4])
        """
        prim = "sample_categorical"
        candidates = [int(c) for c in candidates]
        probs = [float(p) for p in probs]
        if len(candidates) != len(probs) or not candidates:
            raise ScheduleError(prim, "candidates and probs must be non-empty and of equal length")
        if any(p < 0 for p in probs) or sum(probs) <= 0:
            raise ScheduleError(prim, f"probs must be non-negative with a positive sum, got {probs}")
        if decision is None:
            total = sum(probs)
            r = self._rng.random() * total
            decision = len(probs) - 1
            acc = 0.0
            for i, p in enumerate(probs):
                acc += p
                if r < acc:
                    decision = i
                    break
        decision = int(decision)
        if not 0 <= decision < len(candidates):
            raise ScheduleError(prim, f"decision {decision} is not an index into the candidates")
        self._decision = decision
        return self._new_rv(ExprRV, candidates[decision])
