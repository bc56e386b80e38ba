"""Random variables: the handles a schedule hands out for blocks, loops and sampled values.

A ``BlockRV`` or ``LoopRV`` is resolved against the current IR each time it is used, so it
keeps naming "the same" block or loop after other primitives rebuilt it.  An ``ExprRV`` is
an integer chosen by a sampling primitive (``sample_perfect_tile``); primitives accept it
wherever they accept an int.
"""

from __future__ import annotations

import itertools

from mlckit.ir.node import node
from mlckit.tir.expr import Var

_count = itertools.count()


class BlockRV:
    """A handle to a block of the scheduled function (``sch.get_block("C")``)."""

    __slots__ = ("_n", "__weakref__")

    def __init__(self):
        self._n = next(_count)

    def __repr__(self) -> str:  # a number, not an address: reprs reach error messages
        return f"BlockRV(#{self._n})"


class LoopRV:
    """A handle to a loop of the scheduled function (``sch.get_loops(block)``)."""

    __slots__ = ("_n", "__weakref__")

    def __init__(self):
        self._n = next(_count)

    def __repr__(self) -> str:
        return f"LoopRV(#{self._n})"


@node
class ExprRV(Var):
    """A sampled integer (``sch.get(v)`` gives its value)."""

    __hash__ = Var.__hash__
