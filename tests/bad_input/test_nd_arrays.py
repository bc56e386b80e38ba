"""Making a tensor of what is not one: ragged lists, Python objects, strings, a misspelled
dtype, a negative size — a TVMError naming the problem, not NumPy's own message."""

import numpy as np
import pytest

import mlckit

from .common import refused

CASES = [
    ("ragged_lists", lambda: mlckit.nd.array([[1.0, 2.0], [3.0]]),
     ["mlckit.nd.array", "ragged", "same length"]),
    ("object_array", lambda: mlckit.nd.array(np.array([1, "a"], dtype=object)),
     ["element type 'object'", "Python objects"]),
    ("strings", lambda: mlckit.runtime.tensor(["a", "b"]), ["not numbers"]),
    ("a_dict", lambda: mlckit.nd.array({"a": 1}), ["element type 'object'"]),
    ("dtype_typo", lambda: mlckit.nd.array(np.ones(3), dtype="flaot32"),
     ["unknown dtype 'flaot32'", "float32"]),
    ("empty_dtype_typo", lambda: mlckit.nd.empty((2, 3), "flaot32"),
     ["mlckit.nd.empty", "unknown dtype 'flaot32'"]),
    ("empty_negative_size", lambda: mlckit.nd.empty((2, -1), "float32"),
     ["dimension 1 of shape (2, -1) is -1", "cannot be negative"]),
    ("empty_negative_int", lambda: mlckit.nd.empty(-3), ["is -3"]),
    ("empty_float_size", lambda: mlckit.nd.empty((2.5,)), ["dimension 0", "float, not an int"]),
]


@pytest.mark.parametrize("action, phrases", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_not_a_tensor_is_refused(action, phrases):
    refused(action, *phrases)


def test_good_tensors_are_still_made():
    assert mlckit.nd.array([[1, 2], [3, 4]], dtype="float16").dtype == "float16"
    assert mlckit.nd.empty((0, 3)).shape == (0, 3)
    assert mlckit.nd.empty(np.int64(4), "int8").shape == (4,)
    np.testing.assert_array_equal(mlckit.nd.array([True, False]).numpy(), [True, False])
