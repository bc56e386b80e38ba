"""Shared pieces of operator struct-info inference (TVM's ``src/relax/op/op_common.h``).

Every error names the operator, the argument (by TVM's argument name: ``x1``, ``x2`` …)
and what was seen, e.g.::

    relax.add: cannot broadcast x1 (3, 4) and x2 (5,): dim 1 of x1 is 4 and dim 0 of x2 is 5
    (neither is 1)

Helpers:

- ``check_num_args(call)``; ``tensor_arg(call, i)``: the i-th argument's TensorStructInfo;
- ``broadcast_shape(call, a, b)``: NumPy broadcasting of two shapes, with TVM's rules for
  symbolic dims (``n`` vs ``1`` → ``n``; ``n`` vs ``n`` → ``n``; ``n`` vs ``m`` → unknown);
- ``binary_dtype(call)``: both dtypes equal (bool mixes with anything, unknown propagates);
- ``infer_unary(call, require_float)``: same struct info as the input.
"""

from __future__ import annotations

import builtins
from typing import Any

from mlckit.error import TVMTypeError, TVMValueError
from mlckit.tir import dtype as dt
from mlckit.tir import expr as tx

from ..expr import Call, Expr, ShapeExpr
from ..struct_info import PrimStructInfo, StructInfo, TensorStructInfo
from .base import StructInfoError


class OpTypeError(StructInfoError, TypeError):
    """An operator got an argument of the wrong kind or dtype (TVM reports ``TypeError``)."""


# -- naming things in messages --------------------------------------------------------------------
def op_name(call: Call) -> str:
    return getattr(call.op, "name", type(call.op).__name__)


def arg_name(call: Call, i: int) -> str:
    """TVM's name of argument ``i`` (``x1``), or ``argument i`` when the op lists none."""
    names = call.op.get_attr("arguments") if hasattr(call.op, "get_attr") else None
    if names and i < len(names):
        return names[i]
    return f"argument {i}"


def shape_text(dims) -> str:
    """``(3, n)``; ``(5,)`` for one dim, as Python prints a tuple."""
    from ..analysis.struct_info import describe_prim

    inner = ", ".join(describe_prim(d) for d in dims)
    return f"({inner},)" if len(dims) == 1 else f"({inner})"


def sinfo_text(sinfo: StructInfo) -> str:
    """A tensor's shape alone when known (``(3, 4)``), else its struct info in TVMScript."""
    if isinstance(sinfo, TensorStructInfo) and sinfo.dims is not None:
        return shape_text(sinfo.dims)
    from ..analysis.struct_info import describe_struct_info

    return describe_struct_info(sinfo)


def fail(call: Call, message: str, kind: type = StructInfoError):
    """Raise ``kind`` with ``"<op>: <message>"`` (the parser adds the script line)."""
    raise kind(f"{op_name(call)}: {message}")


# -- arguments ---------------------------------------------------------------------------------
def as_expr(value: Any, op: str, name: str) -> Expr:
    """An operator argument as a Relax expression (Python scalars become ``PrimValue``s, as
    TVM's FFI converts them)."""
    from ..utils import convert_to_expr

    try:
        return convert_to_expr(value)
    except TypeError as err:
        raise TVMTypeError(f"{op}: argument {name} cannot be a {type(value).__name__}: "
                           f"{err}") from None


def check_num_args(call: Call) -> None:
    expected = len(call.op.get_attr("arguments") or ())
    if len(call.args) != expected:
        fail(call, f"expects {expected} argument{'s' if expected != 1 else ''}, but was "
                   f"called with {len(call.args)}")


def tensor_arg(call: Call, i: int) -> TensorStructInfo:
    """The TensorStructInfo of argument ``i``, or an error naming the argument."""
    sinfo = call.args[i].struct_info
    if not isinstance(sinfo, TensorStructInfo):
        fail(call, f"requires argument {arg_name(call, i)} to be a tensor, but it is "
                   f"{sinfo_text(sinfo)}", OpTypeError)
    return sinfo


def tensor_args(call: Call) -> list[TensorStructInfo]:
    check_num_args(call)
    return [tensor_arg(call, i) for i in range(len(call.args))]


def dtype_or_void(value, op: str) -> str:
    """An attribute dtype: a dtype string, or ``"void"`` for None / unknown."""
    if value is None or value in ("", "void"):
        return "void"
    try:
        return dt.check_dtype(value)
    except (ValueError, TypeError) as err:
        raise TVMValueError(f"{op}: {err}") from None


def sinfo_dtype(attr_dtype: str) -> str:
    """The struct-info dtype of an attribute dtype (``"void"`` → unknown ``""``)."""
    return "" if attr_dtype == "void" else attr_dtype


# -- broadcasting -------------------------------------------------------------------------------
def can_prove_equal(a, b) -> bool:
    from mlckit.ir.structural import structural_equal

    if a is b or structural_equal(a, b):
        return True
    if isinstance(a, tx.IntImm) and isinstance(b, tx.IntImm):
        return int(a.value) == int(b.value)
    from mlckit.arith import Analyzer

    diff = Analyzer().simplify(a - b)
    return isinstance(diff, tx.IntImm) and int(diff.value) == 0


def _is_one(d) -> bool:
    return isinstance(d, tx.IntImm) and int(d.value) == 1


def broadcast_shape(call: Call, shapes: list, names: list) -> list | None:
    """The broadcast of two shapes (lists of dims) as TVM's ``InferBinaryBroadcastShape``:
    None when a pair of symbolic dims cannot be proven equal; an error when two constant
    dims differ and neither is 1."""
    a, b = shapes
    na, nb = len(a), len(b)
    out = []
    for i in range(1, min(na, nb) + 1):
        d0, d1 = a[na - i], b[nb - i]
        if _is_one(d0):
            out.append(d1)
        elif _is_one(d1):
            out.append(d0)
        elif can_prove_equal(d0, d1):
            out.append(d0)
        elif isinstance(d0, tx.IntImm) and isinstance(d1, tx.IntImm):
            fail(call, f"cannot broadcast {names[0]} {shape_text(a)} and {names[1]} "
                       f"{shape_text(b)}: dim {na - i} of {names[0]} is {int(d0.value)} and dim "
                       f"{nb - i} of {names[1]} is {int(d1.value)} (neither is 1)")
        else:
            return None  # e.g. n vs m: only known at run time
    longer = a if na > nb else b
    for i in range(min(na, nb) + 1, max(na, nb) + 1):
        out.append(longer[len(longer) - i])
    return list(reversed(out))


def element_dtype(call: Call, i: int) -> str:
    sinfo = call.args[i].struct_info
    if isinstance(sinfo, (TensorStructInfo, PrimStructInfo)):
        return sinfo.dtype
    fail(call, f"argument {arg_name(call, i)} must be a tensor or a scalar (R.Tensor or R.Prim), "
               f"but it is {sinfo_text(sinfo)}", OpTypeError)


def binary_dtype(call: Call) -> str:
    """TVM's ``InferBinaryArithOpOutDtype``: unknown if either is unknown; otherwise both
    must be equal, except that bool mixes with any dtype (the result takes ``x1``'s)."""
    d0, d1 = element_dtype(call, 0), element_dtype(call, 1)
    if not d0 or not d1:
        return ""
    if d0 != d1 and "bool" not in (d0, d1):
        fail(call, f"the dtypes of {arg_name(call, 0)} ({d0}) and {arg_name(call, 1)} ({d1}) "
                   f"must be equal; convert one with R.astype", OpTypeError)
    return d0


def infer_broadcast(call: Call, out_dtype: str | None = None) -> StructInfo:
    """Struct info of a broadcasting binary op (TVM's ``InferStructInfoBroadcast``): a
    ``R.Prim`` argument counts as a tensor of shape ``(1,)``."""
    check_num_args(call)
    if out_dtype is None:
        dtype = binary_dtype(call)
    else:  # comparisons: any two dtypes, as TVM's InferStructInfoBroadcastCMP
        element_dtype(call, 0), element_dtype(call, 1)
        dtype = out_dtype
    s0, s1 = call.args[0].struct_info, call.args[1].struct_info
    if isinstance(s0, PrimStructInfo) and isinstance(s1, PrimStructInfo):
        return PrimStructInfo(dtype or "void")

    def ndim(s):
        return 1 if isinstance(s, PrimStructInfo) else s.ndim

    def dims(s):
        return [tx.IntImm("int64", 1)] if isinstance(s, PrimStructInfo) else s.dims

    out_ndim = -1 if -1 in (ndim(s0), ndim(s1)) else builtins.max(ndim(s0), ndim(s1))
    if dims(s0) is not None and dims(s1) is not None:
        shape = broadcast_shape(call, [dims(s0), dims(s1)], [arg_name(call, 0),
                                                            arg_name(call, 1)])
        if shape is not None:
            return TensorStructInfo(ShapeExpr(shape), dtype)
    shape0 = s0.shape if isinstance(s0, TensorStructInfo) else None
    shape1 = s1.shape if isinstance(s1, TensorStructInfo) else None
    if shape0 is not None and shape0 is shape1:  # the same shape variable on both sides
        return TensorStructInfo(shape0, dtype, out_ndim)
    return TensorStructInfo(None, dtype, out_ndim)


def infer_unary(call: Call, require_float: bool = False, out_dtype: str | None = None
                ) -> StructInfo:
    """The input's struct info (TVM's ``InferStructInfoUnary``), with ``out_dtype`` when
    given; ``require_float`` refuses a known non-float input dtype."""
    check_num_args(call)
    sinfo = tensor_arg(call, 0)
    if require_float and sinfo.dtype and not (dt.is_float(sinfo.dtype)
                                              or sinfo.dtype.startswith("bfloat")):
        fail(call, f"requires {arg_name(call, 0)} to have a float dtype, but its dtype is "
                   f"{sinfo.dtype}; convert it with R.astype first", OpTypeError)
    dtype = sinfo.dtype if out_dtype is None else out_dtype
    if dtype == sinfo.dtype:
        return sinfo
    return TensorStructInfo(sinfo.shape, dtype, sinfo.ndim)


# -- legalization helpers ---------------------------------------------------------------------------
def scalar_const(expr, python_native: bool = False):
    """A scalar (0-d) ``Constant`` as its value — a ``FloatImm``/``IntImm`` of its dtype, or a
    Python number with ``python_native`` — so that the PrimFunc inlines it (TVM's
    ``_try_convert_to_scalar_const``); any other expression is returned as it is."""
    from ..expr import Constant

    if not isinstance(expr, Constant) or expr.data.ndim != 0:
        return expr
    value = expr.data[()].item()
    if python_native:
        return value
    dtype = "bool" if expr.data.dtype == bool else expr.data.dtype.name
    if dt.is_float(dtype):
        return tx.FloatImm(dtype, float(value))
    return tx.IntImm(dtype, int(value))


__all__ = ["OpTypeError", "arg_name", "as_expr", "binary_dtype", "broadcast_shape",
           "can_prove_equal", "check_num_args", "dtype_or_void", "element_dtype", "fail",
           "infer_broadcast", "infer_unary", "op_name", "scalar_const", "shape_text", "sinfo_dtype",
           "sinfo_text", "tensor_arg", "tensor_args"]
