"""tvm.testing.assert_allclose: NumPy's check with TVM's absolute tolerance, on tensors too."""

import numpy as np
import pytest

import mlckit as tvm


def test_equal_within_tolerance_passes_for_tensors_and_arrays():
    x = np.linspace(0, 1, 10, dtype="float32")
    tvm.testing.assert_allclose(tvm.runtime.tensor(x), x + 1e-8)
    tvm.testing.assert_allclose(x, x * (1 + 1e-6), rtol=1e-5)


def test_a_difference_beyond_tolerance_fails():
    with pytest.raises(AssertionError, match="Not equal to tolerance"):
        tvm.testing.assert_allclose(np.ones(3), np.array([1.0, 1.0, 1.1]), rtol=1e-5)


def test_different_shapes_fail_before_broadcasting():
    with pytest.raises(AssertionError, match=r"shapes differ: actual \(3,\), desired \(1, 3\)"):
        tvm.testing.assert_allclose(np.ones(3), np.ones((1, 3)))
