"""Softmax and log-softmax along one axis (TVM's ``topi.nn.softmax``, ``topi.nn.log_softmax``).

Both subtract the maximum along the axis before exponentiating, so large inputs do not
overflow.  The computes are TVM's: ``T_softmax_maxelem`` → ``T_softmax_exp`` →
``T_softmax_expsum`` → ``T_softmax_norm`` (tag ``softmax_output``, block attribute
``{"axis": axis}``)::

    X = te.placeholder((2, 10), name="X")
    Y = topi.nn.softmax(X)            # along the last axis
"""

from __future__ import annotations

from mlckit import te
from mlckit.error import TVMValueError
from mlckit.tir import op as tir_op

from ..utils import check_tensor, shape_text


def _axis(op_name: str, x: te.Tensor, axis: int) -> int:
    ndim = x.ndim
    norm = int(axis) + ndim if int(axis) < 0 else int(axis)
    if not 0 <= norm < ndim:
        raise TVMValueError(f"topi.nn.{op_name}: axis {axis} is out of range for {x.name!r} "
                            f"{shape_text(x.shape)} ({ndim} dimensions)")
    return norm


def _with_reduce_index(indices: tuple, axis: int, k) -> tuple:
    return indices[:axis] + (k,) + indices[axis:]


def _without(indices: tuple, axis: int) -> tuple:
    return tuple(v for i, v in enumerate(indices) if i != axis)


def softmax(x: te.Tensor, axis: int = -1) -> te.Tensor:
    """``exp(x - max) / sum(exp(x - max))`` along ``axis``.

    Example::

        Y = topi.nn.softmax(X, axis=1)
    """
    x = check_tensor("nn.softmax", x, "x")
    axis = _axis("softmax", x, axis)
    shape = x.shape
    reduced = [d for i, d in enumerate(shape) if i != axis]
    k1 = te.reduce_axis((0, shape[axis]), name="k")
    k2 = te.reduce_axis((0, shape[axis]), name="k")
    with te.tag_scope("softmax_output"):
        max_elem = te.compute(
            reduced, lambda *i: te.max(x[_with_reduce_index(i, axis, k1.var)], axis=k1),
            name="T_softmax_maxelem")
        exp = te.compute(shape, lambda *i: tir_op.exp(x[i] - max_elem[_without(i, axis)]),
                         name="T_softmax_exp")
        expsum = te.compute(
            reduced, lambda *i: te.sum(exp[_with_reduce_index(i, axis, k2.var)], axis=k2),
            name="T_softmax_expsum")
        return te.compute(shape, lambda *i: exp[i] / expsum[_without(i, axis)],
                          name="T_softmax_norm", attrs={"axis": axis})


def log_softmax(x: te.Tensor, axis: int = -1) -> te.Tensor:
    """``x - max - log(sum(exp(x - max)))`` along ``axis``.

    Example::

        Y = topi.nn.log_softmax(X)
    """
    x = check_tensor("nn.log_softmax", x, "x")
    axis = _axis("log_softmax", x, axis)
    shape = x.shape
    reduced = [d for i, d in enumerate(shape) if i != axis]
    k1 = te.reduce_axis((0, shape[axis]), name="k")
    k2 = te.reduce_axis((0, shape[axis]), name="k")
    with te.tag_scope("log_softmax_output"):
        max_elem = te.compute(
            reduced, lambda *i: te.max(x[_with_reduce_index(i, axis, k1.var)], axis=k1),
            name="T_softmax_maxelem")
        expsum = te.compute(
            reduced,
            lambda *i: te.sum(tir_op.exp(x[_with_reduce_index(i, axis, k2.var)] - max_elem[i]),
                              axis=k2))
        return te.compute(
            shape,
            lambda *i: x[i] - max_elem[_without(i, axis)] - tir_op.log(expsum[_without(i, axis)]),
            attrs={"axis": axis})
