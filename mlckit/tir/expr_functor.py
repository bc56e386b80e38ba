"""Rewriting the buffer loads inside a TIR expression, sharing whatever does not change.

    map_loads(e, lambda load, indices: load_with(load, indices, new_buffer))
"""

from __future__ import annotations

from .expr import BufferLoad, PrimExpr
from .traversal import ir_transform


def map_loads(e, on_load):
    """``e`` with every BufferLoad replaced by ``on_load(load, indices)``, where ``indices``
    are the load's own indices already mapped; parts that do not change are shared."""
    def pre(x):
        if isinstance(x, BufferLoad):
            return on_load(x, [map_loads(i, on_load) for i in x.indices])
        return None

    return ir_transform(e, pre, None) if isinstance(e, PrimExpr) else e


def load_with(load: BufferLoad, indices: list, buffer=None) -> BufferLoad:
    """``load`` reading ``buffer`` (default: its own) at ``indices``; itself when unchanged."""
    buffer = load.buffer if buffer is None else buffer
    if buffer is load.buffer and all(a is b for a, b in zip(indices, load.indices)):
        return load
    return BufferLoad(buffer, indices)
