"""The course's MLP (784-128-10, shipped weights) through AnnotateTIROpPattern + FuseOps +
FuseTIR: exactly two fused kernels, and NumPy's predictions on the Fashion-MNIST test set."""

import os

import numpy as np
import pytest

import mlckit
from mlckit import relax, tir, topi
from mlckit.datasets import DatasetNotFoundError, fashion_mnist
from mlckit.models import fashion_mlp
from mlckit.relax.transform import AnnotateTIROpPattern, FuseOps, FuseTIR


@pytest.fixture(scope="module")
def data():
    try:
        test = fashion_mnist("test")
    except DatasetNotFoundError as err:
        if os.environ.get("CI"):  # .ci/run installs the data: never skip there
            raise
        pytest.skip(str(err))
    p = fashion_mlp()
    x = test.flat()
    logits = np.maximum(x @ p["w0"].T + p["b0"], 0) @ p["w1"].T + p["b1"]
    return x, test.labels, logits.argmax(1)


def mlp_module():
    """The MLP with the weights as constants, built from topi with emit_te, batch ``n``."""
    p = fashion_mlp()
    n = tir.Var("n", "int64")
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorStructInfo((n, 784), "float32"))
    with bb.function("main", [x]):
        with bb.dataflow():
            lv0 = bb.emit_te(topi.nn.dense, x, relax.const(p["w0"]))
            lv1 = bb.emit_te(topi.add, lv0, relax.const(p["b0"]))
            lv2 = bb.emit_te(topi.nn.relu, lv1)
            lv3 = bb.emit_te(topi.nn.dense, lv2, relax.const(p["w1"]))
            lv4 = bb.emit_te(topi.add, lv3, relax.const(p["b1"]))
            gv = bb.emit_output(lv4)
        bb.emit_func_output(gv)
    return bb.get()


def fused_mlp():
    return FuseTIR()(FuseOps()(AnnotateTIROpPattern()(mlp_module())))


def test_two_fused_kernels_remain():
    mod = fused_mlp()
    assert relax.analysis.well_formed(mod)
    kernels = sorted(gv.name_hint for gv, f in mod.functions.items()
                     if isinstance(f, tir.PrimFunc))
    assert kernels == ["fused_dense1_add1", "fused_dense_add_relu"]
    calls = [b.value.args[0].name_hint for b in mod["main"].body.blocks[0].bindings]
    assert calls == ["fused_dense_add_relu", "fused_dense1_add1"]
    # dense, add and relu inside one kernel: two intermediates, the output a parameter
    kernel = mod["fused_dense_add_relu"]
    assert [b.name for b in kernel.body.block.alloc_buffers] == [
        "T_matmul_NT_intermediate", "T_add_intermediate"]
    assert [b.name for b in kernel.buffer_map.values()] == [
        "x", "param_0", "param_1", "compute_intermediate"]


def test_fused_predictions_equal_numpy_on_the_test_set(data):
    x, labels, reference = data
    vm = relax.VirtualMachine(relax.build(fused_mlp(), "llvm"), mlckit.cpu())
    pred = np.concatenate([vm["main"](x[i:i + 2500]).numpy().argmax(1)
                           for i in range(0, len(x), 2500)])
    np.testing.assert_array_equal(pred, reference)
    print(f"\nfused MLP accuracy {(pred == labels).mean():.4f} on {len(labels)} images")


def test_fused_and_unfused_logits_agree_on_two_images(data):
    x = data[0][:2]  # lnumpy: 100k multiply-adds an image in Python loops
    outs = []
    for mod in (mlp_module(), fused_mlp()):
        vm = relax.VirtualMachine(relax.build(mod, "lnumpy"), mlckit.cpu())
        outs.append(vm["main"](x).numpy())
    np.testing.assert_allclose(outs[0], outs[1], rtol=1e-5, atol=1e-5)


def high_level_mlp_module():
    """The course's MLP written with high-level operators (matmul of the transposed weights,
    add, relu), the weights as constants, batch ``n``."""
    p = fashion_mlp()
    op = relax.op
    n = tir.Var("n", "int64")
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorStructInfo((n, 784), "float32"))
    with bb.function("main", [x]):
        with bb.dataflow():
            lv0 = bb.emit(op.matmul(x, op.permute_dims(relax.const(p["w0"]))))
            lv1 = bb.emit(op.add(lv0, relax.const(p["b0"])))
            lv2 = bb.emit(op.nn.relu(lv1))
            lv3 = bb.emit(op.matmul(lv2, op.permute_dims(relax.const(p["w1"]))))
            gv = bb.emit_output(op.add(lv3, relax.const(p["b1"])))
        bb.emit_func_output(gv)
    return bb.get()


def test_zero_pipeline_on_high_level_operators_gives_two_kernels(data):
    """LegalizeOps, then FoldConstant transposes the weights at compile time, and FuseOps +
    FuseTIR leave fused_matmul_add_relu and fused_matmul1_add1, as TVM names them."""
    x, labels, reference = data
    mod = relax.get_pipeline("zero")(high_level_mlp_module())
    assert sorted(gv.name_hint for gv in mod.functions) == [
        "fused_matmul1_add1", "fused_matmul_add_relu", "main"]
    vm = relax.VirtualMachine(mlckit.compile(mod, "llvm"), mlckit.cpu())
    pred = np.concatenate([vm["main"](x[i:i + 2500]).numpy().argmax(1)
                           for i in range(0, len(x), 2500)])
    np.testing.assert_array_equal(pred, reference)
