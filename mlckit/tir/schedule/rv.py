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
    """A handle to a block of the scheduled function (``sch.get_block("C")``).

    >>> from mlckit import tir
    >>> from mlckit.script import tir as T
    >>> @T.prim_func
    ... def double(a: T.Buffer((8,), "float32"), b: T.Buffer((8,), "float32")):
    ...     for i in range(8):
    ...         with T.block("B"):
    ...             vi = T.axis.spatial(8, i)
    ...             b[vi] = a[vi] * T.float32(2)
    >>> sch = tir.Schedule(double)
    >>> block = sch.get_block("B")
    >>> type(block).__name__, sch.get(block).name_hint
    ('BlockRV', 'B')
    """

    __slots__ = ("_n", "__weakref__")

    def __init__(self):
        self._n = next(_count)

    def __repr__(self) -> str:  # a number, not an address: reprs reach error messages
        return f"BlockRV(#{self._n})"


class LoopRV:
    """A handle to a loop of the scheduled function (``sch.get_loops(block)``).

    >>> from mlckit import tir
    >>> from mlckit.script import tir as T
    >>> @T.prim_func
    ... def double(a: T.Buffer((8,), "float32"), b: T.Buffer((8,), "float32")):
    ...     for i in range(8):
    ...         with T.block("B"):
    ...             vi = T.axis.spatial(8, i)
    ...             b[vi] = a[vi] * T.float32(2)
    >>> sch = tir.Schedule(double)
    >>> (i,) = sch.get_loops(sch.get_block("B"))
    >>> type(i).__name__, sch.get(i).loop_var, sch.get(i).extent
    ('LoopRV', i, 8)
    """

    __slots__ = ("_n", "__weakref__")

    def __init__(self):
        self._n = next(_count)

    def __repr__(self) -> str:
        return f"LoopRV(#{self._n})"


@node
class ExprRV(Var):
    """A sampled integer (``sch.get(v)`` gives its value).

    >>> from mlckit import tir
    >>> from mlckit.script import tir as T
    >>> @T.prim_func
    ... def double(a: T.Buffer((8,), "float32"), b: T.Buffer((8,), "float32")):
    ...     for i in range(8):
    ...         with T.block("B"):
    ...             vi = T.axis.spatial(8, i)
    ...             b[vi] = a[vi] * T.float32(2)
    >>> sch = tir.Schedule(double)
    >>> v = sch.sample_categorical([2, 4], [0.5, 0.5])
    >>> type(v).__name__, int(sch.get(v)) in (2, 4)
    ('ExprRV', True)
    """

    __hash__ = Var.__hash__
