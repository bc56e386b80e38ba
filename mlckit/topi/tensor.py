"""Tensors filled with one value (TVM's ``topi.full`` / ``topi.full_like``).

The value is converted to the tensor's dtype once (a constant is folded, a 0-d tensor read
as ``v[()]`` gets a ``T.Cast``), and every element is that value; the compute is named
``T_full`` (``T_full_like``) with the ``elemwise`` tag, as TVM's C++ topi::

    Z = topi.full((2, 3), "float32", 0.0)      # T_full[ax0, ax1] = T.float32(0)
    F = topi.full((n, 4), "int32", v)          # v: a 0-d te tensor -> T_full[...] = v[()]
"""

from __future__ import annotations

import math

from mlckit import te
from mlckit.error import TVMTypeError, TVMValueError
from mlckit.tir import dtype as dt
from mlckit.tir.expr import PrimExpr, cast, convert

from . import tag as _tag
from .utils import compute_ax


def _fill(op_name: str, fill_value, dtype: str) -> PrimExpr:
    if isinstance(fill_value, te.Tensor):
        if fill_value.ndim != 0:
            raise TVMValueError(f"topi.{op_name}: the fill value must be a scalar (a 0-d "
                                f"tensor), got {fill_value.name!r} of rank {fill_value.ndim}")
        fill_value = fill_value()
    if isinstance(fill_value, float) and (math.isinf(fill_value) or math.isnan(fill_value)) \
            and not dt.is_float(dtype):
        raise TVMValueError(f"topi.{op_name}: infinite and NaN fill values require a float "
                            f"dtype, got {dtype}")
    if isinstance(fill_value, bool):
        fill_value = int(fill_value)
    if isinstance(fill_value, float):
        fill_value = convert(fill_value, "float32")  # TVM's default for a Python float
    value = convert(fill_value)
    if not isinstance(value, PrimExpr):
        raise TVMTypeError(f"topi.{op_name}: the fill value must be a number, a PrimExpr or a "
                           f"0-d tensor, got {type(fill_value).__name__}")
    return cast(value, dtype)


def full(shape, dtype: str, fill_value) -> te.Tensor:
    """A tensor of ``shape`` and ``dtype`` whose elements are all ``fill_value`` (TVM's
    ``topi.full``; compute ``T_full``).

    Example::

        Z = topi.full((2, 3), "float32", 0.0)
    """
    value = _fill("full", fill_value, dt.check_dtype(dtype))
    return compute_ax([convert(s) for s in shape], lambda idx: value, "T_full", _tag.ELEMWISE)


def full_like(x: te.Tensor, fill_value) -> te.Tensor:
    """A tensor shaped and typed like ``x``, filled with ``fill_value`` (TVM's
    ``topi.full_like``; compute ``T_full_like``).

    Example::

        O = topi.full_like(A, 1.0)
    """
    if not isinstance(x, te.Tensor):
        raise TVMTypeError(f"topi.full_like: x must be a te.Tensor, got {type(x).__name__}")
    value = _fill("full_like", fill_value, x.dtype)
    return compute_ax(list(x.shape), lambda idx: value, "T_full_like", _tag.ELEMWISE)
