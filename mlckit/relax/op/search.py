"""TVM's search family: ``relax.op.argmax`` / ``argmin``, the index of the largest /
smallest element over one ``axis`` (of the flattened tensor when None), the first one among
equals (int64 indices); and ``where``, an element-wise choice between two tensors.

    lv = R.argmax(logits, axis=1)          # (n, 10) -> (n,)
    lv = R.where(mask, x, y)               # x where mask is true, else y (broadcasting)
"""

from __future__ import annotations

from mlckit import te, topi
from mlckit.ir.node import node
from mlckit.tir import expr as tx
from mlckit.topi.broadcast import broadcast_shape as te_broadcast_shape

from ..expr import Call, ShapeExpr
from ..struct_info import TensorStructInfo
from .axis_common import int_tuple
from .op_attrs import Attrs
from .op_common import OpTypeError, as_expr, broadcast_shape, check_num_args, fail, tensor_args
from .op_def import def_op
from .statistical import reduced_struct_info


@node
class ArgmaxArgminAttrs(Attrs):
    """``argmax``/``argmin``: the axis searched (None: the flattened tensor) and whether it
    stays as a unit dim."""

    axis: int | None = None
    keepdims: bool = False


def _arg_op(name: str, te_func):
    full = f"relax.{name}"

    def construct(x, axis=None, keepdims: bool = False) -> Call:
        axis = None if axis is None else int_tuple(axis, full, "axis")
        if axis is not None and len(axis) != 1:
            from mlckit.error import TVMTypeError

            raise TVMTypeError(f"{full}: axis must be one int (or None), got {list(axis)}")
        return Call(operator.op, [as_expr(x, full, "x")],
                    ArgmaxArgminAttrs(None if axis is None else axis[0], bool(keepdims)))

    construct.__name__ = construct.__qualname__ = name
    construct.__doc__ = (f"The index of the {'largest' if name == 'argmax' else 'smallest'} "
                         f"element along ``axis`` (int64).\n\nExample::\n\n"
                         f"    lv = R.{name}(x, axis=1)\n")
    operator = def_op(full, arguments=("x",))(construct)

    @operator.infer
    def _infer(call: Call):
        axis = call.attrs.axis
        return reduced_struct_info(call, None if axis is None else (axis,), call.attrs.keepdims,
                                   "int64")

    @operator.legalize
    def _lower(bb, call: Call):
        axis = None if call.attrs.axis is None else [call.attrs.axis]
        return bb.call_te(te_func, call.args[0], axis, call.attrs.keepdims)

    return operator


argmax = _arg_op("argmax", topi.argmax)
argmin = _arg_op("argmin", topi.argmin)



# -- where ----------------------------------------------------------------------------------------
@def_op("relax.where", arguments=("condition", "x1", "x2"))
def where(condition, x1, x2) -> Call:
    """``x1`` where ``condition`` is true, else ``x2``; the three broadcast together
    (NumPy's ``np.where``), ``condition`` is bool and ``x1``, ``x2`` share a dtype.

    Example::

        lv = R.where(R.greater(x, R.const(0.0)), x, zeros)
    """
    op = "relax.where"
    return Call(where.op, [as_expr(condition, op, "condition"), as_expr(x1, op, "x1"),
                           as_expr(x2, op, "x2")])


@where.infer
def _infer_where(call: Call) -> TensorStructInfo:
    check_num_args(call)
    cond, x1, x2 = tensor_args(call)
    if cond.dtype and cond.dtype != "bool":
        fail(call, f"requires condition to be bool, but its dtype is {cond.dtype}; compare "
                   "first (e.g. R.greater(x, R.const(0.0)))", OpTypeError)
    if x1.dtype and x2.dtype and x1.dtype != x2.dtype:
        fail(call, f"the dtypes of x1 ({x1.dtype}) and x2 ({x2.dtype}) must be equal; convert "
                   "one with R.astype", OpTypeError)
    dtype = x1.dtype if x1.dtype and x2.dtype else ""
    ndims = [s.ndim for s in (cond, x1, x2)]
    ndim = -1 if -1 in ndims else max(ndims)
    if any(s.dims is None for s in (cond, x1, x2)):
        return TensorStructInfo(None, dtype, ndim)
    values = broadcast_shape(call, [x1.dims, x2.dims], ["x1", "x2"])
    if values is not None:
        values = broadcast_shape(call, [cond.dims, values], ["condition", "x1/x2"])
    return TensorStructInfo(None if values is None else ShapeExpr(values), dtype, ndim)


@where.legalize
def _lower_where(bb, call: Call):
    def where(condition, x1, x2):  # noqa: F811 - names the PrimFunc, as TVM
        values, _, _ = te_broadcast_shape(x1.shape, x2.shape, "where")
        shape, _, _ = te_broadcast_shape(condition.shape, values, "where")

        def at(tensor, idx):  # the input's element at output index idx (broadcast dims: 0)
            offset = len(idx) - tensor.ndim
            return tensor(*[tx.IntImm(i.dtype, 0) if _is_one(d) else i
                            for i, d in zip(idx[offset:], tensor.shape)])

        return te.compute(shape, lambda *i: tx.Select(at(condition, i), at(x1, i), at(x2, i)),
                          name="T_where")

    return bb.call_te(where, *call.args)


def _is_one(d) -> bool:
    return isinstance(d, tx.IntImm) and int(d.value) == 1


__all__ = ["ArgmaxArgminAttrs", "argmax", "argmin", "where"]
