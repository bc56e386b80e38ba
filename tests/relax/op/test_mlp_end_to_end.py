"""The course's Fashion-MNIST MLP written with high-level operators builds, and computes what
NumPy computes with the shipped weights (TVMScript with ``R.matmul(x, R.permute_dims(w0)) +
b0``, and the course's BlockBuilder form with ``relax.op``)."""

import logging

import numpy as np
import pytest

from mlckit import relax
from mlckit.models import fashion_mlp
from mlckit.relax.transform import LegalizeOps
from mlckit.script import ir as I
from mlckit.script import relax as R

from .numerics import TARGETS, random, run


@pytest.fixture(scope="module")
def params():
    return fashion_mlp()


def numpy_mlp(x, p):
    return np.maximum(x @ p["w0"].T + p["b0"], 0) @ p["w1"].T + p["b1"]


@I.ir_module
class MLP:
    @R.function
    def main(x: R.Tensor(("n", 784), "float32"), w0: R.Tensor((128, 784), "float32"),
             b0: R.Tensor((128,), "float32"), w1: R.Tensor((10, 128), "float32"),
             b1: R.Tensor((10,), "float32")):
        with R.dataflow():
            lv0 = R.matmul(x, R.permute_dims(w0)) + b0
            lv1 = R.nn.relu(lv0)
            lv2 = R.matmul(lv1, R.permute_dims(w1)) + b1
            label = R.argmax(lv2, axis=1)
            R.output(lv2, label)
        return (lv2, label)


@pytest.mark.parametrize("target", TARGETS)
def test_the_high_level_mlp_equals_numpy_on_the_shipped_weights(params, target):
    x = random((5, 784), low=0.0, high=1.0)
    logits, label = run(MLP, x, params["w0"], params["b0"], params["w1"], params["b1"],
                        target=target)
    want = numpy_mlp(x, params)
    np.testing.assert_allclose(logits, want, rtol=1e-4, atol=1e-4)
    np.testing.assert_array_equal(label, want.argmax(1))


def course_mlp(batch):
    """The chapter's construction: relax.op calls emitted by a BlockBuilder."""
    x = relax.Var("x", relax.TensorStructInfo((batch, 784), "float32"))
    w0 = relax.Var("w0", relax.TensorStructInfo((128, 784), "float32"))
    b0 = relax.Var("b0", relax.TensorStructInfo((128,), "float32"))
    w1 = relax.Var("w1", relax.TensorStructInfo((10, 128), "float32"))
    b1 = relax.Var("b1", relax.TensorStructInfo((10,), "float32"))
    bb = relax.BlockBuilder()
    with bb.function("main", [x, w0, b0, w1, b1]):
        with bb.dataflow():
            lv0 = bb.emit(relax.op.matmul(x, relax.op.permute_dims(w0)))
            lv1 = bb.emit(relax.op.add(lv0, b0))
            lv2 = bb.emit(relax.op.nn.relu(lv1))
            lv3 = bb.emit(relax.op.matmul(lv2, relax.op.permute_dims(w1)))
            lv4 = bb.emit(relax.op.add(lv3, b1))
            gv = bb.emit_output(lv4)
        bb.emit_func_output(gv)
    return bb.get()


@pytest.mark.parametrize("batch, first_layer", [(1, "matmul.generic"), (64, "matmul (level 20)")])
def test_the_course_mlp_picks_an_implementation_per_batch_size(params, batch, first_layer,
                                                               caplog):
    mod = course_mlp(batch)
    with caplog.at_level(logging.INFO, logger="mlckit.strategy"):
        LegalizeOps()(mod)
    first = next(line for line in caplog.text.splitlines() if "relax.matmul ->" in line)
    assert first_layer in first
    x = random((batch, 784), low=0.0, high=1.0, seed=batch)
    got = run(mod, x, params["w0"], params["b0"], params["w1"], params["b1"])
    np.testing.assert_allclose(got, numpy_mlp(x, params), rtol=1e-4, atol=1e-4)
