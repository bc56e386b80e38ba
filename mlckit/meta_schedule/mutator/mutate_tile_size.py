"""``MutateTileSize``: move a factor between two tiles of one ``sample_perfect_tile``.

A decision ``[4, 8, 2, 2]`` may become ``[2, 8, 2, 4]``: a divisor of one tile moves to
another, so the product (the loop's extent) stays; the innermost tile respects the
instruction's ``max_innermost_factor``.

Example::

    new = ms.mutator.MutateTileSize().apply(trace_json, random.Random(0))
"""

from __future__ import annotations

import random

from .mutator import Mutator, decided, with_decision


class MutateTileSize(Mutator):
    """Change a tiling decision (TVM's ``MutateTileSize``)."""

    def apply(self, trace_json, rng: random.Random):
        insts = trace_json[0]
        tiles = [(i, list(d)) for i, d in decided(trace_json, "SamplePerfectTile")
                 if len(d) > 1 and any(x > 1 for x in d)]
        rng.shuffle(tiles)
        for index, tile in tiles:
            max_inner = int(insts[index][2][1]) if len(insts[index][2]) > 1 else -1
            for _ in range(8):
                src = rng.choice([k for k, x in enumerate(tile) if x > 1])
                divisors = [f for f in range(2, tile[src] + 1) if tile[src] % f == 0]
                factor = rng.choice(divisors)
                dst = rng.choice([k for k in range(len(tile)) if k != src])
                new = list(tile)
                new[src] //= factor
                new[dst] *= factor
                if max_inner > 0 and new[-1] > max_inner:
                    continue
                return with_decision(trace_json, index, new)
        return None
