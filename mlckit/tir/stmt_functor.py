"""Whole-function TIR rewrites (names as in ``tvm.tir.stmt_functor``).

``renew_defs(func)``: a copy of a PrimFunc in which every variable, buffer and block is a new
object (names kept).  Inlining one PrimFunc's body into another twice (``FuseTIR`` with a
kernel called twice) needs it: each copy must define its own loop variables and buffers.

Example::

    copy = renew_defs(func)
    assert_structural_equal(copy, func)
    assert copy.params[0] is not func.params[0]
"""

from __future__ import annotations

from typing import Any

from mlckit.ir.node import Node

from .function import PrimFunc
from .stmt import Block


def renew_defs(func: PrimFunc) -> PrimFunc:
    """``func`` with fresh variables, buffers and blocks (see the module doc).

    Example::

        copy = renew_defs(mod["dense"])
    """
    memo: dict[int, Any] = {}
    keep: list = []  # the originals stay alive, so their ids are not reused meanwhile

    def go(x):
        if isinstance(x, Node):
            hit = memo.get(id(x))
            if hit is not None:
                return hit
            if hasattr(x, "_structural_key"):  # Op, GlobalVar: global names, not definitions
                return x
            changes = {}
            for name in type(x).field_names():
                old = getattr(x, name)
                new = go(old)
                if new is not old:
                    changes[name] = new
            fresh = getattr(x, "_is_var", False) or isinstance(x, Block)
            new = x.replace(**changes) if (changes or fresh) else x
            memo[id(x)] = new
            keep.append(x)
            return new
        if isinstance(x, list):
            new = [go(y) for y in x]
            return x if all(a is b for a, b in zip(new, x)) else new
        if isinstance(x, tuple):
            new = tuple(go(y) for y in x)
            return x if all(a is b for a, b in zip(new, x)) else new
        if isinstance(x, dict):
            items = [(go(k), go(v)) for k, v in x.items()]
            if all(a is k and b is v for (a, b), (k, v) in zip(items, x.items())):
                return x
            return dict(items)
        return x

    return go(func)


__all__ = ["renew_defs"]
