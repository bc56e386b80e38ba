"""Activation functions (TVM's ``topi.nn.relu``, ``topi.nn.leaky_relu``)."""

from __future__ import annotations

from mlckit import te
from mlckit.tir import op as tir_op
from mlckit.tir.expr import Select, const

from .. import tag as _tag
from ..utils import check_tensor


def relu(x: te.Tensor) -> te.Tensor:
    """``max(x, 0)`` for each element (compute ``compute``, tag ``elemwise``).

    Example::

        B = topi.nn.relu(A)     # B[i0, i1] = T.max(A[i0, i1], T.float32(0))
    """
    x = check_tensor("nn.relu", x, "x")
    with te.tag_scope(_tag.ELEMWISE):
        return te.compute(x.shape, lambda *i: tir_op.max(x(*i), const(0, x.dtype)))


def leaky_relu(x: te.Tensor, alpha: float) -> te.Tensor:
    """``x`` where positive, ``x * alpha`` elsewhere.

    Example::

        B = topi.nn.leaky_relu(A, 0.1)
    """
    x = check_tensor("nn.leaky_relu", x, "x")

    def rule(*indices):
        value = x(*indices)
        return Select(value > 0, value, value * const(alpha, value.dtype))

    with te.tag_scope(_tag.ELEMWISE):
        return te.compute(x.shape, rule)
