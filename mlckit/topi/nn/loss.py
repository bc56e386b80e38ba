"""Negative log-likelihood loss (TVM's ``topi.nn.nll_loss``).

``nll_loss`` picks, for each target, ``-predictions[n, t, d...] * weights[t]`` (0 where
``t == ignore_index``) into the compute ``nll_loss``, then reduces it: ``"sum"`` adds them,
``"mean"`` divides that sum by the sum of the weights that were not ignored (a second
compute, also ``nll_loss``), ``"none"`` keeps them::

    P = te.placeholder((4, 3), name="P")            # (N, C) log-probabilities
    T = te.placeholder((4,), name="T", dtype="int64")
    W = te.placeholder((3,), name="W")
    L = topi.nn.nll_loss(P, T, W, reduction="mean", ignore_index=-100)   # shape ()
"""

from __future__ import annotations

from mlckit.error import TVMValueError
from mlckit.tir.expr import NE, Select, Sub, const

from .. import tag as _tag
from ..broadcast import divide
from ..reduction import sum as _sum
from ..utils import check_tensor, compute_ax

REDUCTIONS = ("none", "mean", "sum")


def nll_loss(predictions, targets, weights, reduction: str = "mean",
             ignore_index: int = -100):
    """The NLL loss of ``predictions`` (``(C,)`` or ``(N, C, d1, ..., dk)``) against integer
    ``targets`` (``()`` or ``(N, d1, ..., dk)``), each class weighted by ``weights``
    (``(C,)``).

    Example::

        L = topi.nn.nll_loss(P, T, W, "sum", -100)
    """
    predictions = check_tensor("nn.nll_loss", predictions, "predictions")
    targets = check_tensor("nn.nll_loss", targets, "targets")
    weights = check_tensor("nn.nll_loss", weights, "weights")
    if reduction not in REDUCTIONS:
        raise TVMValueError(f"topi.nn.nll_loss: reduction {reduction!r} must be one of "
                            f"{', '.join(REDUCTIONS)}")
    zero = const(0, predictions.dtype)

    def pick(value_of):
        def rule(idx):
            t = targets[tuple(idx)]
            return Select(NE(t, const(ignore_index, targets.dtype)), value_of(idx, t), zero)
        return compute_ax(targets.shape, rule, "nll_loss", _tag.BROADCAST)

    def loss(idx, t):
        where = (t,) if predictions.ndim == 1 else (idx[0], t, *idx[1:])
        return Sub(zero, predictions[where]) * weights[t]  # 0 - p, as TVM's C++ negation

    picked = pick(loss)
    if predictions.ndim == 1:  # no batch: a single (scalar) loss
        return divide(picked, pick(lambda idx, t: weights[t])) if reduction == "mean" else picked
    if reduction == "none":
        return picked
    total = _sum(picked, axis=None)
    if reduction == "sum":
        return total
    return divide(total, _sum(pick(lambda idx, t: weights[t]), axis=None))


__all__ = ["REDUCTIONS", "nll_loss"]
