"""Which variables a piece of TIR reads.

``var_ids(obj)``: the ids of every ``Var`` occurring in ``obj`` — a statement, an expression,
or a list of them (variables are compared by identity, as everywhere in TIR).

Example::

    used = var_ids([block.body, block.init])
    keep = [iv for iv in block.iter_vars if id(iv.var) in used]
"""

from __future__ import annotations

from typing import Any

from mlckit.ir.node import Node

from ..expr import Var


def var_ids(obj: Any, out: set | None = None) -> set[int]:
    """Ids of the variables occurring in ``obj`` (statements, expressions, lists of them).

    >>> from mlckit import tir
    >>> x, y = tir.Var("x", "int32"), tir.Var("y", "int32")
    >>> tir.analysis.var_ids(x + y * 2) == {id(x), id(y)}
    True
    """
    out = set() if out is None else out
    if isinstance(obj, Var):
        out.add(id(obj))
    elif isinstance(obj, (list, tuple)):
        for x in obj:
            var_ids(x, out)
    elif isinstance(obj, Node):
        for name in obj.field_names():
            var_ids(getattr(obj, name), out)
    return out
