"""Axis helpers shared by the operators that take ``axis``/``axes`` attributes (TVM's
``NormalizeAxis``/``NormalizeAxes``): negative axes count from the end, out-of-range and
repeated axes are errors naming the operator, the attribute and the tensor's rank.

    normalize_axes(call, 4, (-1, 1), "axis")     # [3, 1]
"""

from __future__ import annotations

from mlckit.error import TVMTypeError
from mlckit.tir.expr import IntImm

from .op_common import fail


def int_tuple(value, op: str, what: str) -> tuple | None:
    """An attribute given as an int or a sequence of ints, as a tuple of Python ints
    (None stays None)."""
    if value is None:
        return None
    items = [value] if isinstance(value, (int, IntImm)) else value
    try:
        return tuple(_as_int(v, op, what) for v in items)
    except TypeError:
        raise TVMTypeError(f"{op}: {what} must be an int or a list of ints, got "
                           f"{value!r}") from None


def _as_int(v, op: str, what: str) -> int:
    if isinstance(v, bool):
        raise TVMTypeError(f"{op}: {what} must be integers, got the bool {v}")
    if isinstance(v, IntImm):
        return int(v.value)
    if isinstance(v, int):
        return v
    raise TVMTypeError(f"{op}: {what} must be integers, got {v!r}")


def normalize_axis(call, ndim: int, axis: int, what: str = "axis") -> int:
    """``axis`` in ``[0, ndim)``; an error naming the op when it is not in ``[-ndim, ndim)``."""
    if not -ndim <= axis < ndim:
        fail(call, f"{what}={axis} is out of range for a tensor of rank {ndim} (it must be in "
                   f"[{-ndim}, {ndim - 1}])")
    return axis + ndim if axis < 0 else axis


def normalize_axes(call, ndim: int, axes, what: str = "axis") -> list[int]:
    """Every axis of ``axes`` normalized; a repeated axis is an error."""
    out = [normalize_axis(call, ndim, int(a), what) for a in axes]
    if len(set(out)) != len(out):
        fail(call, f"{what}={list(axes)} names an axis more than once (rank {ndim})")
    return out


def dim_text(d) -> str:
    """A dim as an error message shows it: ``3``, ``n``, ``n + 1``."""
    from ..analysis.struct_info import describe_prim

    return describe_prim(d)


__all__ = ["dim_text", "int_tuple", "normalize_axes", "normalize_axis"]
