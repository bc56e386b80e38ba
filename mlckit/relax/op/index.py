"""Indexing: ``relax.op.take`` and ``relax.op.strided_slice`` (TVM's index family).

    lv = R.take(embedding, ids, axis=0)                           # rows of a table
    lv = R.strided_slice(x, axes=[1], begin=[1], end=[7], strides=[2])   # x[:, 1:7:2]

``strided_slice`` takes its ``axes``, ``begin``, ``end`` and ``strides`` as tuples of int64
``PrimValue``s (Python lists are converted), as TVM v0.23 does; positions follow Python's
slicing (negative from the end, clamped to the tensor) unless ``assume_inbound``.
"""

from __future__ import annotations

from mlckit import topi
from mlckit.arith import Analyzer
from mlckit.error import TVMTypeError, TVMValueError
from mlckit.ir.node import node
from mlckit.tir import dtype as dt
from mlckit.tir import expr as tx
from mlckit.topi.indexing import _dynamic_canonical, _static_canonical, ceildiv
from mlckit.topi.utils import select_dim

from ..expr import Call, Expr, PrimValue, Tuple
from ..struct_info import PrimStructInfo, TensorStructInfo, TupleStructInfo
from .axis_common import int_tuple, normalize_axes, normalize_axis
from .op_attrs import Attrs
from .op_common import OpTypeError, as_expr, check_num_args, fail, sinfo_text, tensor_arg
from .op_def import def_op


# -- take -------------------------------------------------------------------------------------
@node
class TakeAttrs(Attrs):
    """``take``: the axis (None: ``x`` is 1-D) and the out-of-range ``mode``."""

    axis: int | None = None
    mode: str = "fast"


@def_op("relax.take", arguments=("x", "indices"))
def take(x, indices, axis=None, mode: str = "fast") -> Call:
    """The slices of ``x`` at ``indices`` along ``axis`` (``np.take``); ``mode``: ``"fast"``
    (indices must be in range), ``"clip"``, ``"wrap"`` or ``"nan"``.

    Example::

        lv = R.take(w, ids, axis=0)        # w: (vocab, d), ids: (n,) -> (n, d)
    """
    op = "relax.take"
    if mode not in ("fast", "clip", "wrap", "nan"):
        raise TVMValueError(f"{op}: mode must be 'fast', 'clip', 'wrap' or 'nan', got {mode!r}")
    axis = None if axis is None else int_tuple(axis, op, "axis")[0]
    return Call(take.op, [as_expr(x, op, "x"), as_expr(indices, op, "indices")],
                TakeAttrs(axis, mode))


@take.infer
def _infer_take(call: Call) -> TensorStructInfo:
    check_num_args(call)
    data = tensor_arg(call, 0)
    sinfo = call.args[1].struct_info
    if isinstance(sinfo, PrimStructInfo):
        indices = TensorStructInfo([], sinfo.dtype)
    elif isinstance(sinfo, TensorStructInfo):
        indices = sinfo
    else:
        fail(call, f"requires indices to be a tensor or a scalar, but it is {sinfo_text(sinfo)}",
             OpTypeError)
    if indices.dtype and not (dt.is_int(indices.dtype) or dt.is_uint(indices.dtype)):
        fail(call, f"requires integer indices, but their dtype is {indices.dtype}", OpTypeError)
    axis = call.attrs.axis
    if axis is None and data.ndim != 1:
        fail(call, f"without axis, x must be 1-D, but it is {sinfo_text(data)}; give axis")
    if data.ndim == -1 or indices.ndim == -1:
        return TensorStructInfo(None, data.dtype, -1)
    axis = normalize_axis(call, data.ndim, axis if axis is not None else 0)
    if data.dims is None or indices.dims is None:
        return TensorStructInfo(None, data.dtype, indices.ndim + data.ndim - 1)
    return TensorStructInfo(data.dims[:axis] + indices.dims + data.dims[axis + 1:], data.dtype)


@take.legalize
def _lower_take(bb, call: Call):
    return bb.call_te(topi.take, call.args[0], call.args[1], call.attrs.axis,
                      mode=call.attrs.mode)


# -- strided_slice ----------------------------------------------------------------------------
@node
class StridedSliceAttrs(Attrs):
    """``strided_slice``: whether the positions are known to lie inside the tensor."""

    assume_inbound: bool = False


def _int64_tuple(value, op: str, what: str) -> Expr:
    if isinstance(value, Expr):
        return value
    if not isinstance(value, (list, tuple)):
        raise TVMTypeError(f"{op}: {what} must be a list of ints, got {value!r}")
    fields = []
    for v in value:
        if isinstance(v, bool):
            raise TVMTypeError(f"{op}: {what} must be integers, got {v!r}")
        if isinstance(v, int):
            v = tx.IntImm("int64", v)
        elif isinstance(v, tx.PrimExpr) and v.dtype != "int64":
            v = v.astype("int64")
        fields.append(v if isinstance(v, Expr) else PrimValue(v))
    return Tuple(fields)


@def_op("relax.strided_slice", arguments=("x", "axes", "begin", "end", "strides"))
def strided_slice(x, axes, begin, end, strides=None, assume_inbound: bool = False) -> Call:
    """``x`` sliced along ``axes`` from ``begin`` to ``end`` (exclusive) by ``strides``
    (default 1) — Python's ``x[b:e:s]`` per axis.

    Example::

        lv = R.strided_slice(x, axes=[0, 1], begin=[1, 0], end=[3, -1])    # x[1:3, 0:-1]
    """
    op = "relax.strided_slice"
    parts = [as_expr(x, op, "x")] + [_int64_tuple(v, op, n) for v, n in
                                     ((axes, "axes"), (begin, "begin"), (end, "end"))]
    if strides is not None:
        parts.append(_int64_tuple(strides, op, "strides"))
    lengths = {len(p.fields) for p in parts[1:] if isinstance(p, Tuple)}
    if len(lengths) > 1:
        raise TVMValueError(f"{op}: axes, begin, end (and strides) must have the same length, "
                            f"got lengths {sorted(lengths)}")
    return Call(strided_slice.op, parts, StridedSliceAttrs(bool(assume_inbound)))


def _tuple_values(call: Call, i: int, what: str) -> list | None:
    """The PrimExprs a tuple argument holds (None when some are only known at run time)."""
    sinfo = call.args[i].struct_info
    if not isinstance(sinfo, TupleStructInfo) or not all(
            isinstance(f, PrimStructInfo) and dt.is_int(f.dtype) for f in sinfo.fields):
        fail(call, f"requires {what} to be a tuple of int64 values, but it is "
                   f"{sinfo_text(sinfo)}", OpTypeError)
    values = [f.value for f in sinfo.fields]
    return None if any(v is None for v in values) else values


def slice_length(begin, end, stride, extent, assume_inbound: bool):
    """The number of elements ``x[begin:end:stride]`` has along a dim of ``extent``: a
    Python int when everything is constant, else an expression."""
    consts = [v.value if isinstance(v, tx.IntImm) else None
              for v in (begin, end, stride, extent)]
    if None not in consts:
        b, e, s, n = consts
        if s == 0:
            raise TVMValueError("relax.strided_slice: a stride is 0")
        start, stop = _static_canonical(b, n, s), _static_canonical(e, n, s)
        return max(0, -(-(stop - start) // s))
    if assume_inbound:
        return Analyzer().simplify(ceildiv(end - begin, stride))
    b = _dynamic_canonical(begin, extent, stride)
    e = _dynamic_canonical(end, extent, stride)
    length = select_dim(stride < 0, ceildiv(b - e, -stride), ceildiv(e - b, stride))
    return Analyzer().simplify(tx.max_expr(length, tx.IntImm(extent.dtype, 0)))


@strided_slice.infer
def _infer_strided_slice(call: Call) -> TensorStructInfo:
    if len(call.args) not in (4, 5):
        fail(call, f"takes (x, axes, begin, end[, strides]), got {len(call.args)} arguments")
    data = tensor_arg(call, 0)
    axes = _tuple_values(call, 1, "axes")
    begin = _tuple_values(call, 2, "begin")
    end = _tuple_values(call, 3, "end")
    strides = _tuple_values(call, 4, "strides") if len(call.args) == 5 else \
        None if axes is None else [tx.IntImm("int64", 1)] * len(axes)
    if None in (axes, begin, end, strides) or data.dims is None:
        return TensorStructInfo(None, data.dtype, data.ndim)
    if not len(axes) == len(begin) == len(end) == len(strides):
        fail(call, f"axes, begin, end and strides must have the same length, got "
                   f"{len(axes)}, {len(begin)}, {len(end)} and {len(strides)}")
    for a in axes:
        if not isinstance(a, tx.IntImm):
            fail(call, "requires the axes to be constants", OpTypeError)
    norm = normalize_axes(call, data.ndim, [a.value for a in axes], "axes")
    out = list(data.dims)
    for axis, b, e, s in zip(norm, begin, end, strides):
        length = slice_length(b, e, s, data.dims[axis], call.attrs.assume_inbound)
        out[axis] = tx.IntImm("int64", length) if isinstance(length, int) else length
    return TensorStructInfo(out, data.dtype)


@strided_slice.legalize
def _lower_strided_slice(bb, call: Call):
    def values(i):
        return [f.value for f in call.args[i].struct_info.fields]

    axes = [int(a.value) for a in values(1)]
    strides = values(4) if len(call.args) == 5 else [tx.IntImm("int64", 1)] * len(axes)
    return bb.call_te(topi.strided_slice, call.args[0], values(2), values(3), strides, axes,
                      assume_inbound=call.attrs.assume_inbound)


__all__ = ["StridedSliceAttrs", "TakeAttrs", "slice_length", "strided_slice", "take"]
