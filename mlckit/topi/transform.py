"""Layout transforms and plain matrix multiply (TVM's ``topi.transpose``, ``topi.reshape``,
``topi.expand_dims``, ``topi.squeeze``, ``topi.concatenate``, ``topi.split``, ``topi.matmul``).

    B = topi.transpose(A, (1, 0))     # compute "T_transpose"
    C = topi.reshape(A, (6, 4))       # compute "T_reshape"
"""

from __future__ import annotations

from mlckit import te
from mlckit.arith import Analyzer
from mlckit.error import TVMValueError
from mlckit.tir import op as tir_op
from mlckit.tir.expr import IntImm, PrimExpr, Range, cast, convert

from . import tag as _tag
from .utils import check_tensor, compute_ax, equal_check, get_const_tuple, shape_text


def transpose(a: te.Tensor, axes=None) -> te.Tensor:
    """``a`` with its dimensions permuted: output dimension ``i`` is input dimension
    ``axes[i]``; reversed when ``axes`` is None.

    Example::

        B = topi.transpose(A)               # (2, 3, 4) -> (4, 3, 2)
        C = topi.transpose(A, (0, 2, 1))    # (2, 3, 4) -> (2, 4, 3)
    """
    a = check_tensor("transpose", a)
    ndim = a.ndim
    axes = list(range(ndim - 1, -1, -1)) if axes is None or len(axes) == 0 else \
        [int(x) for x in axes]
    normalized = []
    for axis in axes:
        new = axis + ndim if axis < 0 else axis
        if not 0 <= new < ndim:
            raise TVMValueError(f"topi.transpose: axis={axis} is invalid for the {ndim}-dimensional "
                                f"input {a.name!r}")
        normalized.append(new)
    if sorted(normalized) != list(range(ndim)):
        raise TVMValueError(f"topi.transpose: axes {tuple(axes)} is not a permutation of the "
                            f"{ndim} dimensions of {a.name!r}")
    shape = [a.shape[x] for x in normalized]

    def rule(indices):
        idx = [None] * ndim
        for i, axis in enumerate(normalized):
            idx[axis] = indices[i]
        return a(*idx)

    return compute_ax(shape, rule, "T_transpose", _tag.INJECTIVE)


def reshape(a: te.Tensor, newshape) -> te.Tensor:
    """``a``'s elements, in row-major order, in the shape ``newshape`` (every dimension
    given; as in TVM's topi, ``-1`` is not inferred).

    Example::

        B = topi.reshape(A, (6, 4))          # A: (2, 3, 4)
    """
    a = check_tensor("reshape", a)
    target = [convert(s) for s in (newshape if isinstance(newshape, (list, tuple)) else
                                   [newshape])]
    for s in target:
        if isinstance(s, IntImm) and s.value < 0:
            raise TVMValueError(f"topi.reshape: newshape {shape_text(target)} has the negative "
                                f"dimension {s.value}; give every dimension (TVM's topi does "
                                "not infer -1)")
    sizes_in, sizes_out = get_const_tuple(a.shape), get_const_tuple(target)
    if all(isinstance(s, int) for s in sizes_in + sizes_out) and \
            _product(sizes_in) != _product(sizes_out):
        raise TVMValueError(f"topi.reshape: cannot reshape {a.name!r} {shape_text(a.shape)} "
                            f"({_product(sizes_in)} elements) to {shape_text(target)} "
                            f"({_product(sizes_out)} elements)")
    if 0 in sizes_in or 0 in sizes_out:
        return compute_ax(target, lambda idx: cast(0, a.dtype), "T_reshape", _tag.INJECTIVE)
    return compute_ax(target, lambda idx: a(*_unravel(_ravel(idx, target), a.shape)),
                      "T_reshape", _tag.INJECTIVE)


def _product(sizes) -> int:
    out = 1
    for s in sizes:
        out *= s
    return out


def _ravel(indices: list, shape: list) -> PrimExpr:
    if not indices:
        return IntImm("int32", 0)
    flat = indices[0]
    for idx, dim in zip(indices[1:], shape[1:]):
        flat = flat * dim + idx
    return flat


def _unravel(flat: PrimExpr, shape: list) -> list:
    out = []
    for dim in reversed(shape):
        out.append(tir_op.indexmod(flat, dim))
        flat = tir_op.indexdiv(flat, dim)
    return out[::-1]


def expand_dims(a: te.Tensor, axis: int, num_newaxis: int = 1) -> te.Tensor:
    """``a`` with ``num_newaxis`` dimensions of size 1 inserted at ``axis`` (compute
    ``T_expand_dims``).

    Example::

        B = topi.expand_dims(A, 0)      # (3, 4) -> (1, 3, 4)
    """
    a = check_tensor("expand_dims", a)
    ndim = a.ndim
    if not -ndim - 1 <= axis <= ndim or num_newaxis < 0:
        raise TVMValueError(f"topi.expand_dims: axis={axis} must be in [{-ndim - 1}, {ndim}] and "
                            f"num_newaxis={num_newaxis} non-negative")
    if axis < 0:
        axis = ndim + axis + 1
    shape = a.shape[:axis] + [IntImm("int32", 1)] * num_newaxis + a.shape[axis:]
    return compute_ax(shape, lambda idx: a(*(idx[:axis] + idx[axis + num_newaxis:])),
                      "T_expand_dims", _tag.BROADCAST)


def squeeze(a: te.Tensor, axis=None) -> te.Tensor:
    """``a`` without its size-1 dimensions (only those in ``axis`` when given; a listed
    dimension that is not 1 is kept, as TVM does). Compute ``T_squeeze``.

    Example::

        B = topi.squeeze(A, [0])        # (1, 3, 1) -> (3, 1)
    """
    a = check_tensor("squeeze", a)
    ndim = a.ndim
    if axis is None:
        drop = {i for i, s in enumerate(a.shape) if isinstance(s, IntImm) and s.value == 1}
    else:
        drop = set()
        for x in ([axis] if isinstance(axis, int) else axis):
            x = int(x) + ndim if int(x) < 0 else int(x)
            s = a.shape[x]
            if not isinstance(s, IntImm) or s.value == 1:
                drop.add(x)
    shape = [s for i, s in enumerate(a.shape) if i not in drop]

    def rule(idx):
        it = iter(idx)
        return a(*[IntImm("int32", 0) if i in drop else next(it) for i in range(ndim)])

    return compute_ax(shape, rule, "T_squeeze", _tag.INJECTIVE)


def matmul(a: te.Tensor, b: te.Tensor, transp_a: bool = False, transp_b: bool = False) -> te.Tensor:
    """The matrix product of two 2-D tensors, either transposed first (TVM's
    ``topi.matmul``, compute ``T_matmul``).

    Example::

        C = topi.matmul(A, B)                  # (n, k) x (k, m) -> (n, m)
        D = topi.matmul(A, W, transp_b=True)   # (n, k) x (m, k) -> (n, m)
    """
    a, b = check_tensor("matmul", a, "first input"), check_tensor("matmul", b, "second input")
    if a.ndim != 2 or b.ndim != 2:
        raise TVMValueError(f"topi.matmul: both inputs must be 2-D, got {a.name!r} "
                            f"{shape_text(a.shape)} and {b.name!r} {shape_text(b.shape)}")
    red_a = a.shape[0 if transp_a else 1]
    red_b = b.shape[1 if transp_b else 0]
    if isinstance(red_a, IntImm) and isinstance(red_b, IntImm) and not equal_check(red_a, red_b):
        raise TVMValueError(f"topi.matmul: the reduction dimensions differ: {a.name!r} "
                            f"{shape_text(a.shape)} and {b.name!r} {shape_text(b.shape)} "
                            f"(transp_a={transp_a}, transp_b={transp_b})")
    out_shape = [a.shape[1 if transp_a else 0], b.shape[0 if transp_b else 1]]
    k = te.reduce_axis(Range(IntImm(red_a.dtype, 0), red_a), "k")

    def rule(idx):
        i, j = idx
        lhs = a[k, i] if transp_a else a[i, k]
        rhs = b[j, k] if transp_b else b[k, j]
        return te.sum(lhs * rhs, axis=[k])

    return compute_ax(out_shape, rule, "T_matmul", _tag.MATMUL)


def concatenate(a_tuple, axis: int = 0) -> te.Tensor:
    """The tensors of ``a_tuple`` joined along ``axis`` (compute ``T_concat``); they agree
    on every other dimension.

    Example::

        C = topi.concatenate([A, B], axis=1)     # (2, 3) and (2, 4) -> (2, 7)
    """
    tensors = [check_tensor("concatenate", t, f"input {i}") for i, t in enumerate(a_tuple)]
    if not tensors:
        raise TVMValueError("topi.concatenate needs at least one tensor")
    ndim = tensors[0].ndim
    if not -ndim <= axis < ndim:
        raise TVMValueError(f"topi.concatenate: axis={axis} must be in [{-ndim}, {ndim})")
    axis = axis + ndim if axis < 0 else axis
    sizes = [t.shape[axis] for t in tensors]
    joined = sizes[0]
    for s in sizes[1:]:
        joined = joined + s
    shape = list(tensors[0].shape)
    shape[axis] = Analyzer().simplify(joined)

    def rule(indices):
        value = tensors[0](*indices)
        offset = indices[axis]
        for size, t in zip(sizes[:-1], tensors[1:]):
            offset = offset - size
            idx = indices[:axis] + [offset] + indices[axis + 1:]
            value = tir_op.if_then_else(offset >= 0, t(*idx), value)
        return value

    return compute_ax(shape, rule, "T_concat", _tag.INJECTIVE)


def split(ary: te.Tensor, indices_or_sections, axis: int = 0) -> list:
    """``ary`` cut along ``axis`` into ``indices_or_sections`` equal parts (an int: the
    last part is shorter when it does not divide), or at the listed indices.

    Example::

        parts = topi.split(A, 3, axis=1)          # (2, 9) -> three (2, 3)
        parts = topi.split(A, [2, 5], axis=1)     # (2, 9) -> (2, 2), (2, 3), (2, 4)
    """
    ary = check_tensor("split", ary, "input")
    ndim = ary.ndim
    axis = axis + ndim if axis < 0 else axis
    if not 0 <= axis < ndim:
        raise TVMValueError(f"topi.split: axis out of range for {ary.name!r} "
                            f"{shape_text(ary.shape)}")
    size = ary.shape[axis]
    if isinstance(indices_or_sections, (int, IntImm)):
        sections = int(indices_or_sections)
        if sections <= 0:
            raise TVMValueError(f"topi.split: the number of sections must be positive, got "
                                f"{sections}")
        seg = tir_op.indexdiv(size + (sections - 1), sections)
        cuts = [seg * i for i in range(1, sections)]
        name = "T_split_sections"
    else:
        cuts = [convert(i) for i in indices_or_sections]
        name = "T_split"
    begins = [IntImm(size.dtype, 0)] + cuts
    for before, after in zip(begins, begins[1:]):
        if isinstance(before, IntImm) and isinstance(after, IntImm) and \
                after.value <= before.value:
            raise TVMValueError(f"topi.split: the split indices {tuple(get_const_tuple(cuts))} "
                                "must be increasing")
    outs = []
    for i, begin in enumerate(begins):
        extent = (size - begin) if i == len(begins) - 1 else begins[i + 1] - begin
        shape = list(ary.shape)
        shape[axis] = extent

        def rule(indices, begin=begin):
            idx = list(indices)
            idx[axis] = idx[axis] + begin
            return ary(*idx)

        outs.append(compute_ax(shape, rule, name, _tag.INJECTIVE))
    return outs
