"""The course's MLP and CNN as nn.Modules: the IRModule export_tvm gives (as TVM exports the
same classes), the shipped weights bound by name, the compiled models equal to NumPy on
Fashion-MNIST, and the VM's errors for a parameter of the wrong shape or dtype."""

import numpy as np
import pytest
from numpy.lib.stride_tricks import sliding_window_view

import mlckit as tvm
from mlckit import relax
from mlckit.datasets import fashion_mnist
from mlckit.error import TVMError
from mlckit.ir import assert_structural_equal
from mlckit.models import fashion_cnn, fashion_mlp
from mlckit.models.fashion import FashionCNN, FashionMLP
from mlckit.script import from_source
from mlckit.script import ir as I
from mlckit.script import relax as R
from mlckit.script import tir as T

N = 256  # test images per check


def compiled(model_class):
    model = model_class.trained()
    mod, params = model.export_tvm(model_class.SPEC)
    ex = tvm.compile(mod, target="llvm", relax_pipeline=relax.get_default_pipeline("llvm"))
    return relax.VirtualMachine(ex, tvm.cpu()), model_class.weights(params)


@pytest.fixture(scope="module")
def mlp():
    return compiled(FashionMLP)


@pytest.fixture(scope="module")
def cnn():
    return compiled(FashionCNN)


@pytest.fixture(scope="module")
def test_set():
    return fashion_mnist("test")


def test_mlp_exports_the_module_tvm_prints():
    mod, _ = FashionMLP().export_tvm(FashionMLP.SPEC)

    @I.ir_module
    class Expected:
        @R.function
        def forward(x: R.Tensor(("n", 784), dtype="float32"),
                    fc1_weight: R.Tensor((128, 784), dtype="float32"),
                    fc1_bias: R.Tensor((128,), dtype="float32"),
                    fc2_weight: R.Tensor((10, 128), dtype="float32"),
                    fc2_bias: R.Tensor((10,), dtype="float32")) -> R.Tensor(("n", 10), dtype="float32"):
            n = T.int64()
            R.func_attr({"num_input": 1})
            with R.dataflow():
                permute_dims: R.Tensor((784, 128), dtype="float32") = R.permute_dims(fc1_weight, axes=None)
                matmul: R.Tensor((n, 128), dtype="float32") = R.matmul(x, permute_dims, out_dtype="void")
                add: R.Tensor((n, 128), dtype="float32") = R.add(matmul, fc1_bias)
                relu: R.Tensor((n, 128), dtype="float32") = R.nn.relu(add)
                permute_dims1: R.Tensor((128, 10), dtype="float32") = R.permute_dims(fc2_weight, axes=None)
                matmul1: R.Tensor((n, 10), dtype="float32") = R.matmul(relu, permute_dims1, out_dtype="void")
                add1: R.Tensor((n, 10), dtype="float32") = R.add(matmul1, fc2_bias)
                gv: R.Tensor((n, 10), dtype="float32") = add1
                R.output(gv)
            return gv

    assert_structural_equal(mod, Expected)
    assert mod.script() == Expected.script()


# TVM 0.27's print of the same class (module-level TypeVar, out_dtype=None)
CNN_AS_TVM_0_27_PRINTS = '''
from typing import TypeVar
n = TypeVar("n")
@I.ir_module
class Module:
    @R.function
    def forward(x: R.Tensor((n, 1, 28, 28), dtype="float32"), conv_weight: R.Tensor((8, 1, 3, 3), dtype="float32"), conv_bias: R.Tensor((8,), dtype="float32"), fc_weight: R.Tensor((10, 1568), dtype="float32"), fc_bias: R.Tensor((10,), dtype="float32")) -> R.Tensor((n, 10), dtype="float32"):
        R.func_attr({"num_input": 1})
        with R.dataflow():
            lv: R.Tensor((n, 8, 28, 28), dtype="float32") = R.nn.conv2d(x, conv_weight, strides=[1, 1], padding=[1, 1, 1, 1], dilation=[1, 1], groups=1, data_layout="NCHW", kernel_layout="OIHW", out_layout="NCHW", out_dtype=None)
            lv1: R.Tensor((1, 8, 1, 1), dtype="float32") = R.reshape(conv_bias, R.shape([1, 8, 1, 1]))
            conv2d: R.Tensor((n, 8, 28, 28), dtype="float32") = R.add(lv, lv1)
            relu: R.Tensor((n, 8, 28, 28), dtype="float32") = R.nn.relu(conv2d)
            reshape: R.Tensor((n, 8, 14, 2, 14, 2), dtype="float32") = R.reshape(relu, R.shape([n, 8, 14, 2, 14, 2]))
            max: R.Tensor((n, 8, 14, 14), dtype="float32") = R.max(reshape, axis=[3, 5], keepdims=False)
            reshape1: R.Tensor((n, 1568), dtype="float32") = R.reshape(max, R.shape([n, 1568]))
            permute_dims: R.Tensor((1568, 10), dtype="float32") = R.permute_dims(fc_weight, axes=None)
            matmul: R.Tensor((n, 10), dtype="float32") = R.matmul(reshape1, permute_dims, out_dtype=None)
            add: R.Tensor((n, 10), dtype="float32") = R.add(matmul, fc_bias)
            gv: R.Tensor((n, 10), dtype="float32") = add
            R.output(gv)
        return gv
'''


def test_cnn_exports_the_module_tvm_0_27_prints():
    mod, _ = FashionCNN().export_tvm(FashionCNN.SPEC)
    assert_structural_equal(mod, from_source(CNN_AS_TVM_0_27_PRINTS))


@pytest.mark.parametrize("model_class, shipped", [(FashionMLP, fashion_mlp),
                                                  (FashionCNN, fashion_cnn)])
def test_shipped_weights_are_bound_to_the_parameters_of_their_names(model_class, shipped):
    _, params = model_class.trained().export_tvm(model_class.SPEC)
    arrays = shipped()
    assert [name for name, _ in params] == [model_class.NAMES[k] for k in arrays]
    for (name, param), array in zip(params, arrays.values()):
        np.testing.assert_array_equal(param.data.numpy(), array, err_msg=name)


def test_compiled_mlp_equals_numpy_on_fashion_mnist(mlp, test_set):
    vm, weights = mlp
    x = test_set.flat()[:N]
    w = fashion_mlp()
    want = np.maximum(x @ w["w0"].T + w["b0"], 0) @ w["w1"].T + w["b1"]
    got = vm["forward"](tvm.runtime.tensor(x), *weights).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    assert (got.argmax(1) == test_set.labels[:N]).mean() > 0.8


def cnn_numpy(w, images):
    """conv 3x3 (padding 1) as a sum over 3x3 windows, relu, 2x2 max-pool, linear."""
    windows = sliding_window_view(np.pad(images, ((0, 0), (1, 1), (1, 1))), (3, 3), axis=(1, 2))
    conv = np.einsum("nhwyx,cyx->nchw", windows, w["conv_w"][:, 0]) + w["conv_b"][:, None, None]
    pooled = np.maximum(conv, 0).reshape(len(images), 8, 14, 2, 14, 2).max(axis=(3, 5))
    return pooled.reshape(len(images), -1) @ w["w"].T + w["b"]


def test_compiled_cnn_equals_numpy_on_fashion_mnist(cnn, test_set):
    vm, weights = cnn
    images = test_set.images[:N]
    want = cnn_numpy(fashion_cnn(), images)
    got = vm["forward"](tvm.runtime.tensor(images[:, None]), *weights).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    assert (got.argmax(1) == test_set.labels[:N]).mean() > 0.8


# -- bad input to the compiled model -------------------------------------------------------
def test_a_parameter_of_the_wrong_shape_names_it_with_both_shapes(mlp):
    vm, weights = mlp
    transposed = tvm.runtime.tensor(weights[0].numpy().T.copy())
    with pytest.raises(TVMError, match=r"forward: argument 'fc1.weight' \(param\[1\]\) does not "
                                       r"match its annotation R.Tensor\(\(128, 784\), "
                                       r"\"float32\"\): dimension 0 is 784, expected 128 "
                                       r"\(its shape is \(784, 128\)\)"):
        vm["forward"](tvm.runtime.tensor(np.zeros((2, 784), "float32")), transposed, *weights[1:])


def test_a_parameter_of_the_wrong_dtype_names_it_and_both_dtypes(cnn):
    vm, weights = cnn
    as_float64 = tvm.runtime.tensor(weights[1].numpy().astype("float64"))
    with pytest.raises(TVMError, match=r"forward: argument 'conv.bias' \(param\[2\]\) does not "
                                       r"match .*expected dtype float32, got float64"):
        vm["forward"](tvm.runtime.tensor(np.zeros((1, 1, 28, 28), "float32")), weights[0],
                      as_float64, *weights[2:])


def test_a_missing_parameter_lists_what_forward_expects(mlp):
    vm, weights = mlp
    with pytest.raises(TVMError, match=r"forward expects 5 arguments \(x, fc1.weight, fc1.bias, "
                                       r"fc2.weight, fc2.bias\), got 4"):
        vm["forward"](tvm.runtime.tensor(np.zeros((2, 784), "float32")), *weights[:3])


def test_an_image_batch_of_the_wrong_layout_names_the_input_and_its_shape(cnn):
    vm, weights = cnn
    with pytest.raises(TVMError, match=r"argument 'x' \(param\[0\]\) .* \(its shape is "
                                       r"\(2, 28, 28, 1\)\)"):
        vm["forward"](tvm.runtime.tensor(np.zeros((2, 28, 28, 1), "float32")), *weights)
