"""relax.op.nn.nll_loss and cross_entropy_with_logits: TVM's shape rules, printing, and
NumPy's results through the VM."""

import numpy as np
import pytest

from mlckit import relax, tir
from mlckit.error import TVMError
from mlckit.ir import assert_structural_equal
from mlckit.relax.transform import LegalizeOps
from mlckit.script import ir as I
from mlckit.script import relax as R
from mlckit.script import tir as T

from .helpers import infer, one_call_module, tensor
from .numerics import TARGETS, random, run


def var(shape, dtype="float32", name="x", ndim=-1):
    return relax.Var(name, relax.TensorStructInfo(shape, dtype, ndim))


def nll_numpy(pred, targets, weights=None, reduction="mean", ignore_index=-100):
    """PyTorch's NLLLoss: -pred[n, t, d...] * w[t], 0 where t == ignore_index."""
    classes = pred.shape[0] if pred.ndim == 1 else pred.shape[1]
    weights = np.ones(classes, pred.dtype) if weights is None else weights
    if pred.ndim == 1:
        pred, targets = pred[None], np.asarray(targets)[None]
    keep = targets != ignore_index
    safe = np.where(keep, targets, 0)
    picked = np.take_along_axis(pred, safe[:, None], axis=1)[:, 0]
    losses = np.where(keep, -picked * weights[safe], 0)
    total_weight = np.where(keep, weights[safe], 0).sum()
    if reduction == "none":
        return losses
    return losses.sum() / total_weight if reduction == "mean" else losses.sum()


# -- nll_loss: struct info ------------------------------------------------------------------------
def test_nll_loss_reduces_to_a_scalar_or_keeps_the_target_shape():
    n, d = tir.Var("n", "int64"), tir.Var("d", "int64")
    pred, tgt = var((n, 5, d)), var((n, d), "int64", "t")
    assert_structural_equal(infer(relax.op.nn.nll_loss(pred, tgt)), tensor((), "float32"))
    assert_structural_equal(infer(relax.op.nn.nll_loss(pred, tgt, reduction="none")),
                            tensor((n, d), "float32"))
    weighted = relax.op.nn.nll_loss(pred, tgt, var((5,), name="w"), reduction="sum")
    assert_structural_equal(infer(weighted), tensor((), "float32"))


def test_nll_loss_of_unknown_shapes_keeps_the_rank():
    out = infer(relax.op.nn.nll_loss(var(None, ndim=3), var(None, "int32", "t", ndim=2),
                                     reduction="none"))
    assert_structural_equal(out, relax.TensorStructInfo(None, "float32", 2))


@pytest.mark.parametrize("args, message", [
    (lambda: (var((4, 3)), var((4,), "float32", "t")),
     r"relax.nn.nll_loss: requires targets to hold class indices .* float32"),
    (lambda: (var((4, 3)), var((4, 2), "int64", "t")),
     r"relax.nn.nll_loss: predictions \(4, 3\) need targets of rank 1 .* targets are "
     r"\(4, 2\)"),
    (lambda: (var((4, 3, 6)), var((4, 5), "int64", "t")),
     r"relax.nn.nll_loss: targets \(4, 5\) do not match predictions \(4, 3, 6\): dim 1 "
     r"of targets should be 6"),
    (lambda: (var((4, 3)), var((4,), "int64", "t"), var((5,), name="w")),
     r"relax.nn.nll_loss: weights \(5,\) must have one value per class, but predictions "
     r"\(4, 3\) have 3 classes"),
    (lambda: (var((4, 3)), var((4,), "int64", "t"), var((3,), "float16", "w")),
     r"relax.nn.nll_loss: the dtypes of predictions \(float32\) and weights \(float16\)"),
])
def test_nll_loss_refuses_mismatched_inputs_naming_them(args, message):
    with pytest.raises(TVMError, match=message):
        infer(relax.op.nn.nll_loss(*args()))


def test_nll_loss_refuses_an_unknown_reduction():
    with pytest.raises(TVMError, match=r"relax.nn.nll_loss: reduction 'avg' must be one of"):
        relax.op.nn.nll_loss(var((4, 3)), var((4,), "int64", "t"), reduction="avg")


def test_nll_loss_legalizes_to_tvms_picks_and_sums():
    @I.ir_module
    class Loss:
        @R.function
        def main(x: R.Tensor((2, 3), "float32"), t: R.Tensor((2,), "int64"),
                 w: R.Tensor((3,), "float32")):
            gv: R.Tensor((), "float32") = R.nn.nll_loss(x, t, w, reduction="mean",
                                                        ignore_index=-100)
            return gv

    @I.ir_module
    class Expected:
        @R.function
        def main(x: R.Tensor((2, 3), "float32"), t: R.Tensor((2,), "int64"),
                 w: R.Tensor((3,), "float32")):
            gv = R.call_tir(Expected.nll_loss, (x, t, w), out_sinfo=R.Tensor((), "float32"))
            return gv

        @T.prim_func(private=True)
        def nll_loss(x: T.Buffer((T.int64(2), T.int64(3)), "float32"),
                     t: T.Buffer((T.int64(2),), "int64"), w: T.Buffer((T.int64(3),), "float32"),
                     T_divide: T.Buffer((), "float32")):
            T.func_attr({"tir.noalias": True})
            nll_loss = T.alloc_buffer((T.int64(2),))
            nll_loss_red = T.alloc_buffer(())
            nll_loss_1 = T.alloc_buffer((T.int64(2),))
            nll_loss_red_1 = T.alloc_buffer(())
            for ax0 in range(T.int64(2)):
                with T.block("nll_loss"):
                    v_ax0 = T.axis.spatial(T.int64(2), ax0)
                    nll_loss[v_ax0] = T.Select(t[v_ax0] != T.int64(-100),
                                               (T.float32(0) - x[v_ax0, t[v_ax0]]) * w[t[v_ax0]],
                                               T.float32(0))
            for k0 in range(T.int64(2)):
                with T.block("nll_loss_red"):
                    v_k0 = T.axis.reduce(T.int64(2), k0)
                    with T.init():
                        nll_loss_red[()] = T.float32(0)
                    nll_loss_red[()] = nll_loss_red[()] + nll_loss[v_k0]
            for ax0 in range(T.int64(2)):
                with T.block("nll_loss_1"):
                    v_ax0 = T.axis.spatial(T.int64(2), ax0)
                    nll_loss_1[v_ax0] = T.Select(t[v_ax0] != T.int64(-100), w[t[v_ax0]],
                                                 T.float32(0))
            for k0 in range(T.int64(2)):
                with T.block("nll_loss_red_1"):
                    v_k0 = T.axis.reduce(T.int64(2), k0)
                    with T.init():
                        nll_loss_red_1[()] = T.float32(0)
                    nll_loss_red_1[()] = nll_loss_red_1[()] + nll_loss_1[v_k0]
            with T.block("T_divide"):
                vi = T.axis.spatial(T.int64(1), T.int64(0))
                T_divide[()] = nll_loss_red[()] / nll_loss_red_1[()]

    assert_structural_equal(LegalizeOps()(Loss), Expected)


# -- nll_loss: numbers ----------------------------------------------------------------------------
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("target", TARGETS)
def test_nll_loss_equals_numpy(reduction, weighted, target):
    pred = random((4, 3, 2), seed=1)
    targets = np.array([[0, 2], [1, -100], [2, 2], [-100, 0]], "int64")
    weights = random((3,), seed=2, low=0.5, high=2.0)
    sinfos = [tensor(pred.shape), tensor(targets.shape, "int64")]
    args = [pred, targets]
    if weighted:
        sinfos.append(tensor(weights.shape))
        args.append(weights)
    mod = one_call_module(lambda *a: relax.op.nn.nll_loss(*a, reduction=reduction), *sinfos)
    expected = nll_numpy(pred, targets, weights if weighted else None, reduction)
    np.testing.assert_allclose(run(mod, *args, target=target), expected, rtol=1e-5)


def test_nll_loss_ignore_index_skips_those_targets_in_the_mean():
    pred = random((5, 4), seed=3)
    targets = np.array([1, 3, 1, 0, 2], "int32")
    weights = random((4,), seed=4, low=0.5, high=2.0)
    mod = one_call_module(lambda p, t, w: relax.op.nn.nll_loss(p, t, w, ignore_index=1),
                          tensor((5, 4)), tensor((5,), "int32"), tensor((4,)))
    np.testing.assert_allclose(run(mod, pred, targets, weights),
                               nll_numpy(pred, targets, weights, "mean", ignore_index=1),
                               rtol=1e-5)


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_nll_loss_of_one_unbatched_sample(reduction):
    pred, target = random((4,), seed=5), np.array(2, "int64")
    weights = random((4,), seed=6, low=0.5, high=2.0)
    mod = one_call_module(lambda p, t, w: relax.op.nn.nll_loss(p, t, w, reduction=reduction),
                          tensor((4,)), tensor((), "int64"), tensor((4,)))
    out = run(mod, pred, target, weights)
    assert out.shape == ()
    expected = -pred[2] * weights[2] / (weights[2] if reduction == "mean" else 1)
    np.testing.assert_allclose(out, expected, rtol=1e-5)


def test_nll_loss_with_symbolic_batch_runs_on_any_batch():
    n = tir.Var("n", "int64")
    mod = one_call_module(lambda p, t: relax.op.nn.nll_loss(p, t, reduction="sum"),
                          tensor((n, 3)), tensor((n,), "int64"))
    for batch in (1, 6):
        pred = random((batch, 3), seed=batch)
        targets = np.arange(batch, dtype="int64") % 3
        np.testing.assert_allclose(run(mod, pred, targets), nll_numpy(pred, targets, None,
                                                                      "sum"), rtol=1e-5)


# -- cross_entropy_with_logits ------------------------------------------------------------------
def test_cross_entropy_is_a_scalar_of_the_inputs_dtype():
    n = tir.Var("n", "int64")
    out = infer(relax.op.nn.cross_entropy_with_logits(var((n, 10)), var((n, 10), name="y")))
    assert_structural_equal(out, tensor((), "float32"))


@pytest.mark.parametrize("label, message", [
    (lambda: var((4, 3, 1), name="y"),
     r"relax.nn.cross_entropy_with_logits: requires predictions and labels of the same rank, "
     r"but predictions are \(4, 3\) and labels \(4, 3, 1\)"),
    (lambda: var((4, 5), name="y"),
     r"relax.nn.cross_entropy_with_logits: requires predictions and labels of the same "
     r"shape, but predictions are \(4, 3\) and labels \(4, 5\) \(dim 1 differs\)"),
    (lambda: var((4, 3), "float16", "y"), r"the dtypes of predictions \(float32\) and labels"),
])
def test_cross_entropy_refuses_mismatched_labels(label, message):
    with pytest.raises(TVMError, match=message):
        infer(relax.op.nn.cross_entropy_with_logits(var((4, 3)), label()))


@pytest.mark.parametrize("shape", [(4, 3), (6,)])
@pytest.mark.parametrize("target", TARGETS)
def test_cross_entropy_equals_numpy(shape, target):
    pred, labels = random(shape, seed=7), random(shape, seed=8, low=0, high=1)
    mod = one_call_module(relax.op.nn.cross_entropy_with_logits, tensor(shape), tensor(shape))
    batch = shape[0] if len(shape) > 1 else 1
    np.testing.assert_allclose(run(mod, pred, labels, target=target),
                               -(pred * labels).sum() / batch, rtol=1e-5)
