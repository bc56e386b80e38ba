"""Rewriting the buffer loads inside a TIR expression, sharing whatever does not change.

    map_loads(e, lambda load, indices: load_with(load, indices, new_buffer))
"""

from __future__ import annotations

from .expr import BufferLoad, PrimExpr, Var


def map_loads(e, on_load):
    """``e`` with every BufferLoad replaced by ``on_load(load, indices)``, where ``indices``
    are the load's own indices already mapped; parts that do not change are shared."""
    if isinstance(e, BufferLoad):
        return on_load(e, [map_loads(i, on_load) for i in e.indices])
    if not isinstance(e, PrimExpr) or isinstance(e, Var):
        return e
    changes = {}
    for name in e.field_names():
        if name in ("op", "buffer"):
            continue
        v = getattr(e, name)
        if isinstance(v, PrimExpr):
            nv = map_loads(v, on_load)
        elif isinstance(v, list) and any(isinstance(x, PrimExpr) for x in v):
            nv = [map_loads(x, on_load) if isinstance(x, PrimExpr) else x for x in v]
            if all(a is b for a, b in zip(nv, v)):
                nv = v
        else:
            continue
        if nv is not v:
            changes[name] = nv
    return e.replace(**changes) if changes else e


def load_with(load: BufferLoad, indices: list, buffer=None) -> BufferLoad:
    """``load`` reading ``buffer`` (default: its own) at ``indices``; itself when unchanged."""
    buffer = load.buffer if buffer is None else buffer
    if buffer is load.buffer and all(a is b for a, b in zip(indices, load.indices)):
        return load
    return BufferLoad(buffer, indices)
