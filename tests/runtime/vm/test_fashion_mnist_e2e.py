"""The course's end-to-end chapter on real data: every flow predicts the same classes as the
NumPy reference on the 10,000 Fashion-MNIST test images, with the shipped weights."""

import os

import numpy as np
import pytest

import mlckit
from mlckit import relax
from mlckit.datasets import DatasetNotFoundError, fashion_mnist
from mlckit.models import fashion_mlp

from .mlp_modules import (
    MyModule,
    MyModuleByName,
    MyModuleMixture,
    MyModuleWithExternCall,
    numpy_mlp,
    register_numpy_library,
)


@pytest.fixture(scope="module")
def data():
    try:
        test = fashion_mnist("test")
    except DatasetNotFoundError as err:
        if os.environ.get("CI"):  # .ci/run installs the data: never skip there
            raise
        pytest.skip(str(err))
    params = fashion_mlp()
    x = test.flat()
    reference = numpy_mlp(x, params).argmax(1)
    return x, test.labels, params, reference


def lnumpy_mlp(data, w0, b0, w1, b1):
    """The course's low-level NumPy MLP (explicit loops), for one image."""
    lv0 = np.empty((1, 128), dtype="float32")
    for i in range(1):
        for j in range(128):
            for k in range(784):
                if k == 0:
                    lv0[i, j] = 0
                lv0[i, j] = lv0[i, j] + data[i, k] * w0[j, k]
    lv1 = np.empty((1, 128), dtype="float32")
    for i in range(1):
        for j in range(128):
            lv1[i, j] = max(lv0[i, j] + b0[j], 0)
    out = np.empty((1, 10), dtype="float32")
    for i in range(1):
        for j in range(10):
            for k in range(128):
                if k == 0:
                    out[i, j] = 0
                out[i, j] = out[i, j] + lv1[i, k] * w1[j, k]
    return out + b1


def test_accuracy_of_shipped_weights(data):
    x, labels, params, reference = data
    accuracy = float((reference == labels).mean())
    print(f"\nFashion-MNIST test accuracy of the shipped MLP (NumPy): {accuracy:.4f}")
    assert accuracy >= 0.85


def test_low_level_numpy_agrees_on_a_few_images(data):
    x, _, p, reference = data
    for i in range(3):
        out = lnumpy_mlp(x[i:i + 1], p["w0"], p["b0"], p["w1"], p["b1"])
        assert out.argmax(1)[0] == reference[i]


def test_low_level_numpy_agrees_on_the_whole_test_set(data):
    # The very same loops, compiled by Numba so that 10,000 images take seconds, not minutes.
    import numba

    compiled = numba.njit(lnumpy_mlp)
    x, _, p, reference = data
    pred = np.array([compiled(x[i:i + 1], p["w0"], p["b0"], p["w1"], p["b1"]).argmax()
                     for i in range(len(x))])
    np.testing.assert_array_equal(pred, reference)


@pytest.mark.parametrize("module", [MyModule, MyModuleByName, MyModuleWithExternCall,
                                    MyModuleMixture],
                         ids=["call_tir", "call_dps_packed_by_name", "extern_call", "mixture"])
def test_vm_predictions_equal_numpy_on_the_whole_test_set(data, module):
    x, labels, p, reference = data
    register_numpy_library()
    vm = relax.VirtualMachine(relax.build(module, target="llvm"), mlckit.cpu())
    logits = vm["main"](mlckit.nd.array(x), p["w0"], p["b0"], p["w1"], p["b1"]).numpy()
    pred = logits.argmax(1)
    np.testing.assert_array_equal(pred, reference)
    print(f"\nVM accuracy {(pred == labels).mean():.4f} on {len(labels)} images")


def test_bind_params_flow_on_the_whole_test_set(data):
    x, labels, p, reference = data
    mod = relax.transform.BindParams("main", p)(MyModule)
    ex = relax.build(mod, target="llvm")
    vm = relax.VirtualMachine(ex, mlckit.cpu())
    pred = np.concatenate([vm["main"](x[i:i + 2500]).numpy().argmax(1)
                           for i in range(0, len(x), 2500)])
    np.testing.assert_array_equal(pred, reference)
    print(f"\nBindParams: VM accuracy {(pred == labels).mean():.4f}")
