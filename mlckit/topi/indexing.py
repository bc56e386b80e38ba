"""Slicing and gathering (TVM's ``topi.strided_slice``, ``topi.take``).

    B = topi.strided_slice(A, [1], [7], [2], axes=[1])   # A[:, 1:7:2]
    C = topi.take(A, I, axis=0)                          # A[I]

``strided_slice`` follows Python's slicing: negative positions count from the end, positions
past either end are clamped, a negative stride walks backwards.  With constant bounds and
shape the clamping happens here (compute ``T_strided_slice_with_axes``); otherwise the
output extent is an expression (``T_dynamic_strided_slice_with_axes``).
"""

from __future__ import annotations

from mlckit import te
from mlckit.arith import Analyzer
from mlckit.error import TVMValueError
from mlckit.tir import op as tir_op
from mlckit.tir.expr import IntImm, PrimExpr, const, convert, floordiv

from . import tag as _tag
from .utils import check_tensor, compute_ax, select_dim, shape_text

_INT64_MAX = 2**63 - 1


def _static_canonical(index: int, extent: int, stride: int) -> int:
    """``index`` as a position in ``[0, extent]`` (``[-1, extent - 1]`` walking backwards)."""
    low, high = (-1, extent - 1) if stride < 0 else (0, extent)
    if index < 0:
        index += extent
    return min(max(index, low), high)


def _dynamic_canonical(index: PrimExpr, extent: PrimExpr, stride: PrimExpr) -> PrimExpr:
    low = select_dim(stride < 0, const(-1, extent.dtype), const(0, extent.dtype))
    high = select_dim(stride < 0, extent - 1, extent)
    if not (isinstance(index, IntImm) and index.value >= 0):
        index = select_dim(index < 0, index + extent, index)
    return Analyzer().simplify(tir_op.min(tir_op.max(index, low), high))


def ceildiv(a: PrimExpr, b: PrimExpr) -> PrimExpr:
    """``ceil(a / b)``: TVM's ``(a + b - 1) // b`` for a positive constant ``b``,
    ``-((-a) // b)`` otherwise (right for either sign of ``b``)."""
    if isinstance(b, IntImm) and b.value > 0:
        return floordiv(a + b - 1, b)
    return -floordiv(-a, b)


def _const_int(value):
    value = convert(value)
    return value.value if isinstance(value, IntImm) else None


def strided_slice(a: te.Tensor, begin, end, strides=None, axes=None, slice_mode: str = "end",
                  assume_inbound: bool = True) -> te.Tensor:
    """``a`` sliced along ``axes`` (every axis, in order, when None) from ``begin`` to
    ``end`` (exclusive) by ``strides`` (1 when None).

    Example::

        B = topi.strided_slice(A, [0, 1], [2, 3])                 # A[0:2, 1:3]
        C = topi.strided_slice(A, [-1], [-5], [-1], axes=[0])     # A[-1:-5:-1]
    """
    a = check_tensor("strided_slice", a, "input")
    ndim = a.ndim
    if slice_mode != "end":
        raise TVMValueError(f"topi.strided_slice: slice_mode {slice_mode!r} is not supported; "
                            "use 'end'")
    begin, end = list(begin), list(end)
    strides = [1] * len(begin) if not strides else list(strides)
    named_axes = axes is not None and len(axes) > 0
    axes = [int(x) for x in axes] if named_axes else list(range(len(begin)))
    if not len(axes) == len(begin) == len(end) == len(strides):
        raise TVMValueError(f"topi.strided_slice: begin {tuple(begin)}, end {tuple(end)}, strides "
                            f"{tuple(strides)} and axes {tuple(axes)} must have the same length")
    axes = [x + ndim if x < 0 else x for x in axes]
    for x in axes:
        if not 0 <= x < ndim:
            raise TVMValueError(f"topi.strided_slice: axis out of range for {a.name!r} "
                                f"{shape_text(a.shape)}")
    consts = [[_const_int(v) for v in vs] for vs in (begin, end, strides)]
    static = all(v is not None for vs in consts for v in vs) and \
        all(isinstance(a.shape[x], IntImm) for x in axes)
    if static:
        return _static_slice(a, *consts, axes, named_axes)
    return _dynamic_slice(a, [convert(v) for v in begin], [convert(v) for v in end],
                          [convert(v) for v in strides], axes, assume_inbound)


def _static_slice(a: te.Tensor, begin: list, end: list, strides: list, axes: list,
                  named_axes: bool) -> te.Tensor:
    shape = list(a.shape)
    starts = []
    for i, axis in enumerate(axes):
        if strides[i] == 0:
            raise TVMValueError(f"topi.strided_slice: the stride along axis {axis} is 0")
        extent = int(a.shape[axis])
        start = _static_canonical(begin[i], extent, strides[i])
        stop = _static_canonical(end[i], extent, strides[i])
        length = max(0, -(-(stop - start) // strides[i]))
        shape[axis] = IntImm(a.shape[axis].dtype, length)
        starts.append(start)

    def rule(indices):
        idx = list(indices)
        for i, axis in enumerate(axes):
            idx[axis] = indices[axis] * strides[i] + starts[i]
        return a(*idx)

    name = "T_strided_slice_with_axes" if named_axes else "T_strided_slice"
    return compute_ax(shape, rule, name, _tag.INJECTIVE)


def _dynamic_slice(a: te.Tensor, begin: list, end: list, strides: list, axes: list,
                   assume_inbound: bool) -> te.Tensor:
    ana = Analyzer()
    shape = list(a.shape)
    starts = []
    for i, axis in enumerate(axes):
        extent = a.shape[axis]
        b, e, s = (_as_dtype(v, extent.dtype) for v in (begin[i], end[i], strides[i]))
        if assume_inbound:
            length = ceildiv(e - b, s)
        else:
            b = _dynamic_canonical(b, extent, s)
            e = _dynamic_canonical(e, extent, s)
            # an empty slice has 0 elements, not a negative count (TVM's GetLength has no max)
            length = tir_op.max(select_dim(s < 0, ceildiv(b - e, -s), ceildiv(e - b, s)),
                                const(0, extent.dtype))
        shape[axis] = ana.simplify(length)
        starts.append((b, s))

    def rule(indices):
        idx = list(indices)
        for (b, s), axis in zip(starts, axes):
            idx[axis] = indices[axis] * s + b
        return a(*idx)

    return compute_ax(shape, rule, "T_dynamic_strided_slice_with_axes", _tag.INJECTIVE)


def _as_dtype(value: PrimExpr, dtype: str) -> PrimExpr:
    if isinstance(value, IntImm):
        return IntImm(dtype, value.value)
    return value if value.dtype == dtype else value.astype(dtype)


def take(a: te.Tensor, indices, axis: int | None = None, batch_dims: int = 0,
         mode: str = "fast") -> te.Tensor:
    """The elements of ``a`` at ``indices`` along ``axis`` (of the flattened ``a`` when
    None); the output shape is ``a.shape[:axis] + indices.shape + a.shape[axis + 1:]``.
    ``mode``: ``"fast"`` (indices must be in range), ``"clip"``, ``"wrap"`` or ``"nan"``.

    Example::

        E = topi.take(W, ids, axis=0)      # embedding lookup: W (vocab, d), ids (n,)
    """
    a = check_tensor("take", a, "data")
    if mode not in ("fast", "clip", "wrap", "nan"):
        raise TVMValueError(f"topi.take: mode must be 'fast', 'clip', 'wrap' or 'nan', got "
                            f"{mode!r}")
    if batch_dims != 0:
        raise TVMValueError("topi.take: batch_dims other than 0 is not supported")
    index_shape = list(indices.shape) if isinstance(indices, te.Tensor) else []
    n_idx = len(index_shape)

    def load_index(position):
        return indices(*position) if isinstance(indices, te.Tensor) else convert(indices)

    if axis is None:
        size = const(1, a.shape[0].dtype) if a.ndim else const(1, "int32")
        for d in a.shape:
            size = size * d

        def flat_rule(out):
            return a(*_unravel(_bounded(load_index(out), size, mode), a.shape))

        return compute_ax(index_shape, flat_rule, "T_take", _tag.INJECTIVE)
    axis = axis + a.ndim if axis < 0 else axis
    if not 0 <= axis < a.ndim:
        raise TVMValueError(f"topi.take: axis out of range for {a.name!r} {shape_text(a.shape)}")
    extent = a.shape[axis]
    out_shape = a.shape[:axis] + index_shape + a.shape[axis + 1:]

    def rule(out):
        raw = load_index(out[axis:axis + n_idx])
        real = out[:axis] + [_bounded(raw, extent, mode)] + out[axis + n_idx:]
        value = a(*real)
        if mode == "nan":
            inside = (raw >= 0) & (raw < extent)
            return tir_op.if_then_else(inside, value, const(float("nan"), a.dtype))
        return value

    return compute_ax(out_shape, rule, "T_take", _tag.INJECTIVE)


def _bounded(index: PrimExpr, extent: PrimExpr, mode: str) -> PrimExpr:
    if mode == "clip":
        return tir_op.min(tir_op.max(const(0, index.dtype), index), extent - 1)
    if mode == "wrap":
        return tir_op.truncmod(tir_op.truncmod(index, extent) + extent, extent)
    return index


def _unravel(flat: PrimExpr, shape: list) -> list:
    out = []
    for dim in reversed(shape):
        out.append(tir_op.indexmod(flat, dim))
        flat = tir_op.indexdiv(flat, dim)
    return out[::-1]
