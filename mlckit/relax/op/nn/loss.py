"""Loss operators (TVM's ``relax.op.nn.nll_loss`` and ``cross_entropy_with_logits``).

    loss = R.nn.nll_loss(log_probs, targets, weights, reduction="mean", ignore_index=-100)
    loss = R.nn.cross_entropy_with_logits(log_probs, labels)

``nll_loss`` takes predictions ``(C,)`` or ``(N, C, d1, ..., dk)``, integer targets ``()``
or ``(N, d1, ..., dk)`` and optional per-class weights ``(C,)``; ``reduction="none"`` keeps
the per-target losses ``(N, d1, ..., dk)``, ``"sum"`` and ``"mean"`` give a scalar (the mean
divides by the total weight of the targets that are not ``ignore_index``).
``cross_entropy_with_logits`` is TVM's ``-sum(predictions * labels) / N`` (``N`` the first
dim; no division for 1-d inputs), a scalar.
"""

from __future__ import annotations

from mlckit import topi
from mlckit.ir.node import node
from mlckit.tir import dtype as dt

from ...expr import Call
from ...struct_info import TensorStructInfo
from ..axis_common import dim_text
from ..op_attrs import Attrs
from ..op_common import (
    OpTypeError,
    as_expr,
    binary_dtype,
    fail,
    shape_text,
    tensor_arg,
    tensor_args,
)
from ..op_def import def_op
from .nn import _known_unequal


def _rank_text(s: TensorStructInfo) -> str:
    return shape_text(s.dims) if s.dims is not None else f"of rank {s.ndim}"


# -- nll_loss -----------------------------------------------------------------------------------
@node
class NLLLossAttrs(Attrs):
    """``nll_loss``: the reduction (``"none"``, ``"mean"`` or ``"sum"``) and the target
    value that contributes nothing."""

    reduction: str = "mean"
    ignore_index: int = -100


@def_op("relax.nn.nll_loss", arguments=("predictions", "targets", "weights"))
def nll_loss(predictions, targets, weights=None, reduction: str = "mean",
             ignore_index: int = -100) -> Call:
    """The negative log-likelihood loss of ``predictions`` (log-probabilities) against
    ``targets`` (class indices), classes weighted by ``weights`` (all 1 when None).

    Example::

        loss = R.nn.nll_loss(x, t, w, reduction="sum", ignore_index=-100)
    """
    op = "relax.nn.nll_loss"
    if reduction not in topi.nn.loss.REDUCTIONS:
        raise OpTypeError(f"{op}: reduction {reduction!r} must be one of none, mean, sum")
    args = [as_expr(predictions, op, "predictions"), as_expr(targets, op, "targets")]
    if weights is not None:
        args.append(as_expr(weights, op, "weights"))
    return Call(nll_loss.op, args, NLLLossAttrs(reduction, int(ignore_index)))


@nll_loss.infer
def _infer_nll_loss(call: Call) -> TensorStructInfo:
    if len(call.args) not in (2, 3):
        fail(call, f"expects 2 or 3 arguments (predictions, targets[, weights]), but was "
                   f"called with {len(call.args)}")
    pred, tgt = tensor_arg(call, 0), tensor_arg(call, 1)
    wgt = tensor_arg(call, 2) if len(call.args) == 3 else None
    if wgt is not None and pred.dtype and wgt.dtype and pred.dtype != wgt.dtype:
        fail(call, f"the dtypes of predictions ({pred.dtype}) and weights ({wgt.dtype}) must "
                   "be equal; convert one with R.astype", OpTypeError)
    dtype = pred.dtype if wgt is None or (pred.dtype and wgt.dtype) else ""
    if tgt.dtype and not (dt.is_int(tgt.dtype) or dt.is_uint(tgt.dtype)):
        fail(call, f"requires targets to hold class indices (an int or uint dtype), but "
                   f"its dtype is {tgt.dtype}", OpTypeError)
    if pred.ndim == 0:
        fail(call, "requires predictions to have at least 1 dim ((C,) or (N, C, ...)), but "
                   "it is a scalar")
    if pred.ndim != -1 and tgt.ndim != -1 and max(pred.ndim - 1, 0) != tgt.ndim:
        fail(call, f"predictions {_rank_text(pred)} need targets of rank "
                   f"{max(pred.ndim - 1, 0)} ({'()' if pred.ndim == 1 else '(N, d1, ...)'}),"
                   f" but targets are {_rank_text(tgt)}")
    if wgt is not None and wgt.ndim not in (-1, 1):
        fail(call, f"requires weights to be 1-d (one per class), but they are "
                   f"{_rank_text(wgt)}")
    classes = None
    if pred.dims is not None:
        classes = pred.dims[0] if pred.ndim == 1 else pred.dims[1]
        expected = [pred.dims[0], *pred.dims[2:]] if pred.ndim > 1 else []
        if tgt.dims is not None:
            for i, (want, got) in enumerate(zip(expected, tgt.dims)):
                if _known_unequal(want, got):
                    fail(call, f"targets {shape_text(tgt.dims)} do not match predictions "
                               f"{shape_text(pred.dims)}: dim {i} of targets should be "
                               f"{dim_text(want)}")
    if classes is not None and wgt is not None and wgt.dims is not None \
            and _known_unequal(classes, wgt.dims[0]):
        fail(call, f"weights {shape_text(wgt.dims)} must have one value per class, but "
                   f"predictions {shape_text(pred.dims)} have {dim_text(classes)} classes")
    if call.attrs.reduction != "none":
        return TensorStructInfo([], dtype)
    if pred.dims is not None:
        return TensorStructInfo(expected, dtype)
    return TensorStructInfo(None, dtype, -1 if pred.ndim == -1 else pred.ndim - 1)


@nll_loss.legalize
def _lower_nll_loss(bb, call: Call):
    a = call.attrs
    if len(call.args) == 3:
        return bb.call_te(topi.nn.nll_loss, *call.args, reduction=a.reduction,
                          ignore_index=a.ignore_index)

    def nll_loss_without_weight(predictions, targets, reduction, ignore_index):
        classes = predictions.shape[1] if predictions.ndim > 1 else predictions.shape[0]
        weights = topi.full((classes,), predictions.dtype, 1.0)
        return topi.nn.nll_loss(predictions, targets, weights, reduction, ignore_index)

    return bb.call_te(nll_loss_without_weight, call.args[0], call.args[1],
                      reduction=a.reduction, ignore_index=a.ignore_index)


# -- cross_entropy_with_logits ------------------------------------------------------------------
@def_op("relax.nn.cross_entropy_with_logits", arguments=("predictions", "labels"))
def cross_entropy_with_logits(predictions, labels) -> Call:
    """``-sum(predictions * labels) / N`` (``N = predictions.shape[0]``, 1 for 1-d inputs):
    the cross entropy of log-probabilities against (soft) labels, a scalar.

    Example::

        loss = R.nn.cross_entropy_with_logits(log_probs, one_hot_labels)
    """
    op = "relax.nn.cross_entropy_with_logits"
    return Call(cross_entropy_with_logits.op, [as_expr(predictions, op, "predictions"),
                                                as_expr(labels, op, "labels")])


@cross_entropy_with_logits.infer
def _infer_cross_entropy(call: Call) -> TensorStructInfo:
    pred, label = tensor_args(call)
    dtype = binary_dtype(call)
    if pred.ndim != -1 and label.ndim != -1 and pred.ndim != label.ndim:
        fail(call, f"requires predictions and labels of the same rank, but predictions are "
                   f"{_rank_text(pred)} and labels {_rank_text(label)}")
    if pred.dims is not None and label.dims is not None:
        for i, (p, q) in enumerate(zip(pred.dims, label.dims)):
            if _known_unequal(p, q):
                fail(call, f"requires predictions and labels of the same shape, but "
                           f"predictions are {shape_text(pred.dims)} and labels "
                           f"{shape_text(label.dims)} (dim {i} differs)")
    return TensorStructInfo([], dtype)


@cross_entropy_with_logits.legalize
def _lower_cross_entropy(bb, call: Call):
    def te_cross_entropy_with_logits(x, y):
        # TVM writes -sum(x * y) / N with te's operators: the negation multiplies by -1
        negated = topi.multiply(topi.sum(topi.multiply(x, y)), -1.0)
        return topi.divide(negated, x.shape[0]) if x.ndim > 1 else negated

    return bb.call_te(te_cross_entropy_with_logits, call.args[0], call.args[1],
                      primfunc_name_hint="cross_entropy_with_logits")


__all__ = ["NLLLossAttrs", "cross_entropy_with_logits", "nll_loss"]
