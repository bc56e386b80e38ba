"""Reductions: ``relax.op.sum, mean, max, min, prod`` (TVM's statistical family) over
``axis`` (every axis when None), keeping reduced dims as 1 with ``keepdims``.

    lv = R.sum(x)                          # a 0-d tensor
    lv = R.mean(x, axis=[0, 3])            # (2, 3, 4, 5) -> (3, 4)
    lv = R.max(x, axis=1, keepdims=True)   # (2, 3, 4) -> (2, 1, 4)

Lowered through ``topi.sum/max/min/prod`` (compute ``<input>_red``); ``mean`` divides the sum
by the number of reduced elements (``T_divide``).
"""

from __future__ import annotations

from mlckit import topi
from mlckit.ir.node import node
from mlckit.tir import expr as tx

from ..expr import Call
from ..struct_info import TensorStructInfo
from .axis_common import int_tuple, normalize_axes
from .op_attrs import Attrs
from .op_common import as_expr, check_num_args, tensor_arg
from .op_def import def_op


@node
class StatisticalAttrs(Attrs):
    """``sum``/``mean``/``max``/``min``/``prod``: the axes reduced (None: all) and whether
    they stay as unit dims."""

    axis: tuple | None = None
    keepdims: bool = False


def reduced_struct_info(call: Call, axes, keepdims: bool, dtype: str) -> TensorStructInfo:
    """The result of reducing argument 0 over ``axes`` (TVM's rule for reductions)."""
    check_num_args(call)
    data = tensor_arg(call, 0)
    norm = normalize_axes(call, data.ndim, axes) if data.ndim != -1 and axes is not None \
        else None
    if keepdims:
        ndim = data.ndim
    elif axes is None:
        ndim = 0
    elif data.ndim == -1:
        ndim = -1
    else:
        ndim = data.ndim - len(norm)
    if data.dims is None:
        if axes is None and keepdims and ndim != -1:
            return TensorStructInfo([1] * ndim, dtype)
        return TensorStructInfo([], dtype) if ndim == 0 else TensorStructInfo(None, dtype, ndim)
    out = []
    for i, d in enumerate(data.dims):
        if norm is not None and i not in norm:
            out.append(d)
        elif keepdims:
            out.append(tx.IntImm("int64", 1))
    return TensorStructInfo(out, dtype)


def _statistical(name: str, lower, doc: str):
    full = f"relax.{name}"

    def construct(x, axis=None, keepdims: bool = False) -> Call:
        return Call(operator.op, [as_expr(x, full, "x")],
                    StatisticalAttrs(int_tuple(axis, full, "axis"), bool(keepdims)))

    construct.__name__ = construct.__qualname__ = name
    construct.__doc__ = (f"{doc} over ``axis`` (all axes when None).\n\nExample::\n\n"
                         f"    lv = R.{name}(x, axis=[1], keepdims=True)\n")
    operator = def_op(full, arguments=("x",))(construct)
    operator.infer(lambda call: reduced_struct_info(call, call.attrs.axis, call.attrs.keepdims,
                                                    tensor_arg(call, 0).dtype))
    operator.legalize(lower)
    return operator


def _call_topi(te_func):
    def lower(bb, call: Call):
        axis = list(call.attrs.axis) if call.attrs.axis is not None else None
        return bb.call_te(te_func, call.args[0], axis, call.attrs.keepdims)

    lower.__name__ = f"call_te_{te_func.__name__}"
    return lower


def te_mean(x, axis, keepdims: bool):
    """``topi.sum`` divided by the number of reduced elements (TVM's ``_te_mean``)."""
    count = tx.const(1, "int32")
    for i in (range(x.ndim) if axis is None else axis):
        count = count * x.shape[i]
    return topi.divide(topi.sum(x, axis, keepdims), count)


def _lower_mean(bb, call: Call):
    axis = list(call.attrs.axis) if call.attrs.axis is not None else None
    return bb.call_te(te_mean, call.args[0], axis, call.attrs.keepdims, primfunc_name_hint="mean")


sum = _statistical("sum", _call_topi(topi.sum), "The sum")  # noqa: A001 - TVM's name
mean = _statistical("mean", _lower_mean, "The arithmetic mean")
max = _statistical("max", _call_topi(topi.max), "The maximum")  # noqa: A001 - TVM's name
min = _statistical("min", _call_topi(topi.min), "The minimum")  # noqa: A001 - TVM's name
prod = _statistical("prod", _call_topi(topi.prod), "The product")

__all__ = ["StatisticalAttrs", "max", "mean", "min", "prod", "reduced_struct_info", "sum"]
