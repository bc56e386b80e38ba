"""Reductions over axes (TVM's ``topi.sum``, ``topi.max``, ``topi.min``, ``topi.prod``,
``topi.argmax``, ``topi.argmin``, ``topi.all``, ``topi.any``).

The reduced tensor is one compute named ``<input>_red`` (tag ``comm_reduce``) whose
reduction axes are ``k<i>`` for input dimension ``i``, as TVM's C++ topi names them::

    A = te.placeholder((2, 3, 4), name="A")
    B = topi.sum(A, axis=1)                  # (2, 4): B[ax0, ax1] = sum_k1 A[ax0, k1, ax1]
    C = topi.max(A, axis=(0, 2), keepdims=True)   # (1, 3, 1)

``argmax``/``argmin`` reduce (index, value) pairs together in ``<input>_red_temp`` and copy
the index into ``<input>_red`` (int32 indices for int32 shapes, int64 for int64 ones).
"""

from __future__ import annotations

from mlckit import te
from mlckit.error import TVMValueError
from mlckit.tir import op as tir_op
from mlckit.tir.expr import IntImm, PrimExpr, Select, const

from . import tag as _tag
from .utils import check_tensor, compute_ax, shape_text


def real_axes(op_name: str, data: te.Tensor, axis) -> list[int]:
    """The sorted, de-duplicated, non-negative axes ``axis`` names (every axis when None)."""
    ndim = data.ndim
    if ndim == 0:
        raise TVMValueError(f"topi.{op_name}: cannot reduce the 0-dimensional tensor "
                            f"{data.name!r}")
    if axis is None:
        return list(range(ndim))
    axes = [axis] if isinstance(axis, (int, IntImm)) else list(axis)
    out = []
    for a in axes:
        a = int(a)
        norm = a + ndim if a < 0 else a
        if not 0 <= norm < ndim:
            raise TVMValueError(f"topi.{op_name}: axis {a} is out of range for {data.name!r} "
                                f"{shape_text(data.shape)} ({ndim} dimensions)")
        out.append(norm)
    return sorted(set(out))


def reduce_target_shape(axes: list[int], data: te.Tensor, keepdims: bool,
                        atleast1d: bool = False) -> list:
    """The shape after reducing ``axes``: 1 there with ``keepdims``, dropped otherwise."""
    if keepdims:
        shape = [IntImm(d.dtype, 1) if i in axes else d for i, d in enumerate(data.shape)]
    else:
        shape = [d for i, d in enumerate(data.shape) if i not in axes]
    if not shape and atleast1d:
        shape = [IntImm("int32", 1)]
    return shape


def reduce_axes(axes: list[int], data: te.Tensor) -> list:
    """One ``te.reduce_axis`` per reduced dimension, named ``k<dimension>`` (as TVM)."""
    return [te.reduce_axis((0, data.shape[i]), name=f"k{i}") for i in axes]


def _input_index(indices: list, axes: list[int], raxes: list, ndim: int,
                 keepdims: bool) -> list:
    """The input index for an output index: reduction variables on the reduced axes."""
    out, arg, red = [], 0, 0
    for i in range(ndim):
        if i in axes:
            out.append(raxes[red].var)
            red += 1
            arg += keepdims  # a kept dimension of size 1 is skipped in the output index
        else:
            out.append(indices[arg])
            arg += 1
    return out


def _comm_reduce(op_name: str, reducer, data: te.Tensor, axis, keepdims: bool,
                 atleast1d: bool) -> te.Tensor:
    data = check_tensor(op_name, data, "data")
    axes = real_axes(op_name, data, axis)
    shape = reduce_target_shape(axes, data, keepdims, atleast1d)
    raxes = reduce_axes(axes, data)

    def rule(indices):
        return reducer(data(*_input_index(indices, axes, raxes, data.ndim, keepdims)),
                       axis=raxes)

    return compute_ax(shape, rule, data.op.name + "_red", _tag.COMM_REDUCE)


def _boolean_or(x, y):
    return x | y


def _boolean_and(x, y):
    return x & y


_prod = te.comm_reducer(lambda x, y: x * y, lambda t: const(1, t), name="prod")
_all = te.comm_reducer(_boolean_and, lambda t: const(True, t), name="all")
_any = te.comm_reducer(_boolean_or, lambda t: const(False, t), name="any")


def sum(data: te.Tensor, axis=None, keepdims: bool = False,  # noqa: A001 - TVM's name
        atleast1d: bool = False) -> te.Tensor:
    """The sum over ``axis`` (every axis when None); ``any`` for booleans, as TVM.

    Example::

        B = topi.sum(A, axis=(0, 2), keepdims=True)
    """
    reducer = _any if check_tensor("sum", data, "data").dtype == "bool" else te.sum
    return _comm_reduce("sum", reducer, data, axis, keepdims, atleast1d)


def max(data: te.Tensor, axis=None, keepdims: bool = False,  # noqa: A001 - TVM's name
        atleast1d: bool = False) -> te.Tensor:
    """The maximum over ``axis``. ``B = topi.max(A, axis=1)``.

    >>> from mlckit import te, topi
    >>> A = te.placeholder((4, 8), "float32", name="A")
    >>> B = topi.max(A, axis=1)
    >>> B.shape, B.dtype
    ([4], 'float32')
    """
    return _comm_reduce("max", te.max, data, axis, keepdims, atleast1d)


def min(data: te.Tensor, axis=None, keepdims: bool = False,  # noqa: A001 - TVM's name
        atleast1d: bool = False) -> te.Tensor:
    """The minimum over ``axis``. ``B = topi.min(A, axis=1)``.

    >>> from mlckit import te, topi
    >>> A = te.placeholder((4, 8), "float32", name="A")
    >>> B = topi.min(A, axis=1)
    >>> B.shape, B.dtype
    ([4], 'float32')
    """
    return _comm_reduce("min", te.min, data, axis, keepdims, atleast1d)


def prod(data: te.Tensor, axis=None, keepdims: bool = False,
         atleast1d: bool = False) -> te.Tensor:
    """The product over ``axis``. ``B = topi.prod(A, axis=1)``.

    >>> from mlckit import te, topi
    >>> A = te.placeholder((4, 8), "float32", name="A")
    >>> B = topi.prod(A, axis=1)
    >>> B.shape, B.dtype
    ([4], 'float32')
    """
    return _comm_reduce("prod", _prod, data, axis, keepdims, atleast1d)


def all(data: te.Tensor, axis=None, keepdims: bool = False,  # noqa: A001 - TVM's name
        atleast1d: bool = False) -> te.Tensor:
    """Whether every boolean over ``axis`` is true. ``B = topi.all(M, axis=0)``.

    >>> from mlckit import te, topi
    >>> A = te.placeholder((4, 8), "bool", name="A")
    >>> B = topi.all(A, axis=1)
    >>> B.shape, B.dtype
    ([4], 'bool')
    """
    return _comm_reduce("all", _all, data, axis, keepdims, atleast1d)


def any(data: te.Tensor, axis=None, keepdims: bool = False,  # noqa: A001 - TVM's name
        atleast1d: bool = False) -> te.Tensor:
    """Whether some boolean over ``axis`` is true. ``B = topi.any(M, axis=0)``.

    >>> from mlckit import te, topi
    >>> A = te.placeholder((4, 8), "bool", name="A")
    >>> B = topi.any(A, axis=1)
    >>> B.shape, B.dtype
    ([4], 'bool')
    """
    return _comm_reduce("any", _any, data, axis, keepdims, atleast1d)


def _arg_reducer(name: str, better, identity_value, select_last_index: bool):
    """A reducer of (index, value) pairs keeping the index of the best value; ties go to
    the first index (the last one with ``select_last_index``)."""

    def combine(lhs, rhs):
        lhs_idx, lhs_val = lhs
        rhs_idx, rhs_val = rhs
        wins = better(lhs_val, rhs_val)
        same = lhs_val == rhs_val
        earlier = lhs_idx > rhs_idx if select_last_index else lhs_idx < rhs_idx
        keep_index = wins | (same & earlier)
        return Select(keep_index, lhs_idx, rhs_idx), Select(wins, lhs_val, rhs_val)

    def identity(idx_dtype, val_dtype):
        return const(-1, idx_dtype), identity_value(val_dtype)

    return te.comm_reducer(combine, identity, name=name)


def _ravel(indices: list, shape: list) -> PrimExpr:
    flat = indices[0]
    for idx, dim in zip(indices[1:], shape[1:]):
        flat = flat * dim + idx
    return flat


def _comm_reduce_idx(op_name: str, reducer, data: te.Tensor, axis, keepdims: bool,
                     atleast1d: bool) -> te.Tensor:
    data = check_tensor(op_name, data, "data")
    axes = real_axes(op_name, data, axis)
    raxes = reduce_axes(axes, data)
    shape = reduce_target_shape(axes, data, keepdims, atleast1d)

    def rule(indices):
        index = []
        arg = 0
        red = 0
        for i in range(data.ndim):
            if i in axes:
                index.append(raxes[red].var)
                red += 1
            elif keepdims:
                index.append(indices[i])
            else:
                index.append(indices[arg])
                arg += 1
        flat = _ravel([a.var for a in raxes], [data.shape[i] for i in axes])
        return reducer((flat, data(*index)), axis=raxes)

    temp = compute_ax(shape, rule, data.op.name + "_red_temp", _tag.COMM_REDUCE_IDX)
    return compute_ax(shape, lambda idx: temp[0](*idx), data.op.name + "_red",
                      _tag.COMM_REDUCE_IDX)


def argmax(data: te.Tensor, axis=None, keepdims: bool = False, atleast1d: bool = False,
           select_last_index: bool = False) -> te.Tensor:
    """The index of the maximum over ``axis`` (the first one among equals).

    Example::

        B = topi.argmax(A, axis=1)     # A: (2, 3, 4) -> B: (2, 4)
    """
    reducer = _arg_reducer("argmax", lambda a, b: a > b, tir_op.min_value, select_last_index)
    return _comm_reduce_idx("argmax", reducer, data, axis, keepdims, atleast1d)


def argmin(data: te.Tensor, axis=None, keepdims: bool = False, atleast1d: bool = False,
           select_last_index: bool = False) -> te.Tensor:
    """The index of the minimum over ``axis`` (the first one among equals).

    Example::

        B = topi.argmin(A, axis=1)
    """
    reducer = _arg_reducer("argmin", lambda a, b: a < b, tir_op.max_value, select_last_index)
    return _comm_reduce_idx("argmin", reducer, data, axis, keepdims, atleast1d)
