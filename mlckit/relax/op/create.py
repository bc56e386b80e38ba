"""Creation operators (TVM's ``tvm.relax.op`` create family): ``full``, ``ones``, ``zeros``
and their ``_like`` forms.

The shape is a ``R.shape([...])`` (or a tuple of dims, turned into one); ``full``'s value is
a scalar tensor (``R.const(1.5, "float32")`` or a 0-d parameter).  All lower through
``topi.full`` into PrimFuncs named ``full``, ``ones`` and ``zeros``; a constant fill value
is inlined (TVM's rule).

Example::

    z = R.zeros(R.shape([n, 4]), dtype="float32")
    f = R.full((2, 3), R.const(7, "int32"))               # dtype from the value: int32
    o = R.ones_like(x)                                     # x's shape and dtype
"""

from __future__ import annotations

from mlckit import topi
from mlckit.error import TVMValueError

from ..expr import Call, Expr, ShapeExpr
from ..struct_info import ShapeStructInfo, TensorStructInfo
from .op_attrs import InitAttrs
from .op_common import (
    as_expr,
    check_num_args,
    dtype_or_void,
    fail,
    scalar_const,
    sinfo_dtype,
    sinfo_text,
    tensor_arg,
)
from .op_def import RelaxOperator, def_op


def _shape(shape, op: str) -> Expr:
    if isinstance(shape, (tuple, list)):
        return ShapeExpr(list(shape))
    return as_expr(shape, op, "shape")


def _required_dtype(dtype, op: str) -> str:
    dtype = dtype_or_void(dtype, op)
    if dtype == "void":
        raise TVMValueError(f"{op}: a dtype is required, e.g. {op[6:]}((2, 3), \"float32\")")
    return dtype


def _shape_arg(call: Call) -> Expr:
    sinfo = call.args[0].struct_info
    if not isinstance(sinfo, ShapeStructInfo):
        fail(call, f"requires the shape to be a shape (R.shape([...])), but it is "
                   f"{sinfo_text(sinfo)}")
    return call.args[0]


def _scalar_fill(call: Call, i: int) -> TensorStructInfo:
    sinfo = call.args[i].struct_info
    if not isinstance(sinfo, TensorStructInfo) or sinfo.ndim != 0:
        fail(call, f"requires fill_value to be a scalar tensor (a 0-d R.Tensor, e.g. "
                   f"R.const(1.0, \"float32\")), but it is {sinfo_text(sinfo)}")
    return sinfo


def _like_sinfo(sinfo: TensorStructInfo, attr_dtype: str) -> TensorStructInfo:
    if attr_dtype == "void":
        return sinfo
    return TensorStructInfo(sinfo.shape, attr_dtype, sinfo.ndim)


def _lower_full(is_like: bool, fill_value, primfunc_name: str):
    """TVM's ``_full``: ``topi.full(shape, dtype, value)``; ``fill_value`` None means the
    call's second argument (a constant is inlined as a Python number)."""

    def lower(bb, call: Call):
        value = scalar_const(call.args[1], python_native=True) if fill_value is None \
            else fill_value
        shape = call.args[0].struct_info.shape if is_like else call.args[0]
        return bb.call_te(topi.full, shape, call.struct_info.dtype, value,
                          primfunc_name_hint=primfunc_name)

    lower.__name__ = f"call_te_{primfunc_name}"
    return lower


# -- full / full_like -------------------------------------------------------------------------------
@def_op("relax.full", arguments=("shape", "fill_value"))
def full(shape, fill_value, dtype=None) -> Call:
    """A tensor of ``shape`` filled with the scalar tensor ``fill_value``; ``dtype`` defaults
    to the value's (TVM's ``relax.op.full``).

    Example::

        lv = R.full((2, 3), R.const(1.5, "float32"))
    """
    return Call(full.op, [_shape(shape, "relax.full"), as_expr(fill_value, "relax.full",
                                                                "fill_value")],
                InitAttrs(dtype_or_void(dtype, "relax.full")))


@full.infer
def _infer_full(call: Call) -> TensorStructInfo:
    check_num_args(call)
    shape = _shape_arg(call)
    value = _scalar_fill(call, 1)
    dtype = sinfo_dtype(call.attrs.dtype) or value.dtype
    return TensorStructInfo(shape, dtype)


full.legalize(_lower_full(is_like=False, fill_value=None, primfunc_name="full"))


@def_op("relax.full_like", arguments=("x", "fill_value"))
def full_like(x, fill_value, dtype=None) -> Call:
    """A tensor shaped like ``x`` filled with the scalar tensor ``fill_value``; ``dtype``
    defaults to ``x``'s (TVM's ``relax.op.full_like``).

    Example::

        lv = R.full_like(x, R.const(0.5, "float32"))
    """
    op = "relax.full_like"
    return Call(full_like.op, [as_expr(x, op, "x"), as_expr(fill_value, op, "fill_value")],
                InitAttrs(dtype_or_void(dtype, op)))


@full_like.infer
def _infer_full_like(call: Call) -> TensorStructInfo:
    check_num_args(call)
    data = tensor_arg(call, 0)
    _scalar_fill(call, 1)
    return _like_sinfo(data, call.attrs.dtype)


full_like.legalize(_lower_full(is_like=True, fill_value=None, primfunc_name="full"))


# -- ones / zeros and their _like forms -------------------------------------------------------------
def _filled(name: str, value: float) -> tuple[RelaxOperator, RelaxOperator]:
    full_name, like_name = f"relax.{name}", f"relax.{name}_like"

    def construct(shape, dtype) -> Call:
        return Call(operator.op, [_shape(shape, full_name)],
                    InitAttrs(_required_dtype(dtype, full_name)))

    def construct_like(x, dtype=None) -> Call:
        return Call(like.op, [as_expr(x, like_name, "x")],
                    InitAttrs(dtype_or_void(dtype, like_name)))

    construct.__name__ = construct.__qualname__ = name
    construct.__doc__ = (f"A tensor of ``shape`` and ``dtype`` filled with {value:g} (TVM's "
                         f"``relax.op.{name}``).\n\nExample::\n\n"
                         f"    lv = R.{name}(R.shape([2, 3]), \"float32\")\n")
    construct_like.__name__ = construct_like.__qualname__ = f"{name}_like"
    construct_like.__doc__ = (f"A tensor shaped like ``x`` filled with {value:g}; ``dtype`` "
                              f"defaults to ``x``'s (TVM's ``relax.op.{name}_like``).\n\n"
                              f"Example::\n\n    lv = R.{name}_like(x)\n")
    operator = def_op(full_name, arguments=("shape",))(construct)
    like = def_op(like_name, arguments=("x",))(construct_like)

    @operator.infer
    def _infer(call: Call) -> TensorStructInfo:
        check_num_args(call)
        return TensorStructInfo(_shape_arg(call), sinfo_dtype(call.attrs.dtype))

    @like.infer
    def _infer_like(call: Call) -> TensorStructInfo:
        check_num_args(call)
        return _like_sinfo(tensor_arg(call, 0), call.attrs.dtype)

    operator.legalize(_lower_full(is_like=False, fill_value=value, primfunc_name=name))
    like.legalize(_lower_full(is_like=True, fill_value=value, primfunc_name=name))
    return operator, like


ones, ones_like = _filled("ones", 1.0)
zeros, zeros_like = _filled("zeros", 0.0)

__all__ = ["full", "full_like", "ones", "ones_like", "zeros", "zeros_like"]
