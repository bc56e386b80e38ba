"""Bad builds and kernel calls: refused before the kernel runs, naming the argument; nothing
from Numba or NumPy reaches the learner.  A good call still works afterwards."""

import numpy as np
import pytest

import mlckit
from mlckit import relax
from mlckit.script import tir as T

from .common import refused


@T.prim_func
def add_one(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
    for i in range(4):
        with T.block("B"):
            vi = T.axis.spatial(4, i)
            B[vi] = A[vi] + T.float32(1)


@T.prim_func
def scale(a: T.handle, b: T.handle, n: T.int32, s: T.float32):
    A = T.match_buffer(a, (n,), "float32")
    B = T.match_buffer(b, (n,), "float32")
    for i in range(n):
        with T.block("B"):
            vi = T.axis.spatial(n, i)
            B[vi] = A[vi] * s


def _read_only(shape=(4,)):
    out = np.zeros(shape, "float32")
    out.setflags(write=False)
    return out


X = np.arange(4, dtype="float32")

CASES = [
    # (id, target, kernel, make arguments, phrases)
    ("read_only_output", "llvm", add_one, lambda: (X, _read_only()),
     ["argument 2 (B) is read-only", "add_one writes its result into B"]),
    ("read_only_output_lnumpy", "lnumpy", add_one, lambda: (X, _read_only()),
     ["argument 2 (B) is read-only"]),
    ("read_only_input_is_fine_but_output_of_wrong_dtype", "llvm", add_one,
     lambda: (_read_only(), np.zeros(4, "float64")),
     ["argument 2 (B) does not match its buffer", "expected dtype float32, got float64"]),
    ("int32_input_to_a_float32_kernel", "llvm", add_one,
     lambda: (X.astype("int32"), np.zeros(4, "float32")),
     ["argument 1 (A) does not match its buffer", "expected dtype float32, got int32"]),
    ("input_of_another_shape", "lnumpy", add_one, lambda: (np.zeros(5, "float32"), X.copy()),
     ["argument 1 (A) does not match its buffer T.Buffer((4,), \"float32\")",
      "dimension 0 is 5, expected 4 (its shape is (5,))"]),
    ("input_of_another_rank", "llvm", add_one,
     lambda: (np.zeros((2, 2), "float32"), X.copy()),
     ["argument 1 (A) does not match its buffer", "expected 1 dimension, got 2"]),
    ("one_argument_missing", "llvm", add_one, lambda: (X,),
     ["add_one() takes 2 arguments (A, B) but 1 was given"]),
    ("one_argument_too_many", "lnumpy", add_one, lambda: (X, X.copy(), X.copy()),
     ["add_one() takes 2 arguments (A, B) but 3 were given"]),
    ("a_list_for_a_buffer", "llvm", add_one, lambda: ([1, 2, 3, 4], X.copy()),
     ["argument 1 (A) must be a NumPy array or mlckit.nd.NDArray", "got list"]),
    ("a_string_for_a_buffer", "lnumpy", add_one, lambda: ("x", X.copy()),
     ["argument 1 (A) must be a NumPy array", "got str"]),
    ("symbolic_sizes_that_disagree", "llvm", scale,
     lambda: (X, np.zeros(5, "float32"), 4, 2.0),
     ["argument 2 (B) does not match its buffer", "the symbolic size n = 4",
      "(its shape is (5,))"]),
    ("int_scalar_out_of_its_range", "llvm", scale,
     lambda: (X, X.copy(), 2 ** 40, 2.0), ["argument 3 (n) is 1099511627776", "int32"]),
    ("float_for_an_int_scalar", "lnumpy", scale, lambda: (X, X.copy(), 4.0, 2.0),
     ["argument 3 (n) must be a int32 scalar, got float"]),
    ("array_for_a_float_scalar", "llvm", scale, lambda: (X, X.copy(), 4, X),
     ["argument 4 (s) must be a float32 scalar, got ndarray"]),
]


@pytest.mark.parametrize("target, kernel, make_args, phrases", [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])
def test_bad_kernel_call_is_refused_before_it_runs(target, kernel, make_args, phrases):
    f = mlckit.build(kernel, target)
    args = make_args()
    before = [np.array(a, copy=True) if isinstance(a, np.ndarray) else a for a in args]
    refused(lambda: f(*args), *phrases)
    for a, b in zip(args, before):  # nothing was written
        if isinstance(a, np.ndarray):
            np.testing.assert_array_equal(a, b)
    out = np.zeros(4, "float32")
    if kernel is add_one:
        f(X, out)
        np.testing.assert_array_equal(out, X + 1)
    else:
        f(X, out, 4, 3.0)
        np.testing.assert_array_equal(out, X * 3)


BUILDS = [
    ("unknown_target", lambda: mlckit.build(add_one, "llvmm"),
     ["unknown target kind 'llvmm' (did you mean 'llvm'?)"]),
    ("relax_build_of_a_prim_func", lambda: relax.build(42, "llvm"),
     ["relax.build expects an IRModule, got int"]),
    ("missing_kernel_name", lambda: mlckit.build(add_one, "llvm")["nothere"], ["nothere"]),
    ("exec_mode_compiled", lambda: relax.build(mlckit.IRModule({}), "llvm",
                                               exec_mode="compiled"), ["exec_mode 'compiled'"]),
]


@pytest.mark.parametrize("action, phrases", [c[1:] for c in BUILDS], ids=[c[0] for c in BUILDS])
def test_bad_build_is_refused(action, phrases):
    refused(action, *phrases)
