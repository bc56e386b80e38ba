"""Calling the Relax VM wrongly: a VMError (or the struct-info check's error) naming the
function, the argument and what was expected — and the VM still serves a good call."""

import numpy as np
import pytest

import mlckit
from mlckit import relax
from mlckit.script import ir as I
from mlckit.script import relax as R
from mlckit.script import tir as T

from .common import refused


@mlckit.register_func("test.bad_input.fill_zero", override=True)
def fill_zero(x, out):
    out.numpy()[...] = 0


@I.ir_module
class Module:
    @T.prim_func
    def relu(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
        for i in range(4):
            with T.block("B"):
                vi = T.axis.spatial(4, i)
                B[vi] = T.max(A[vi], T.float32(0))

    @R.function
    def main(x: R.Tensor((4,), "float32")):
        cls = Module
        with R.dataflow():
            y = R.call_tir(cls.relu, (x,), out_sinfo=R.Tensor((4,), "float32"))
            R.output(y)
        return y

    @R.function
    def unregistered(x: R.Tensor((4,), "float32")):
        y = R.call_dps_packed("test.bad_input.nothere", (x,), out_sinfo=R.Tensor((4,), "float32"))
        return y

    @R.function
    def wrong_arity(x: R.Tensor((4,), "float32")):
        y = R.call_dps_packed("test.bad_input.fill_zero", (x, x),
                              out_sinfo=R.Tensor((4,), "float32"))
        return y


@pytest.fixture(scope="module")
def vm():
    return relax.VirtualMachine(relax.build(Module, "llvm"), mlckit.cpu())


X = np.arange(4, dtype="float32") - 2

CASES = [
    # (id, call(vm), phrases)
    ("profile_of_a_misspelled_function", lambda vm: vm.profile("mian", X),
     ["no Relax function 'mian'", "did you mean 'main'?"]),
    ("misspelled_function", lambda vm: vm["mian"], ["no Relax function 'mian'"]),
    ("invoke_of_a_misspelled_function", lambda vm: vm.invoke("mian", X),
     ["did you mean 'main'?"]),
    ("time_evaluator_of_a_misspelled_function",
     lambda vm: vm.time_evaluator("mian", mlckit.cpu()), ["did you mean 'main'?"]),
    ("a_kernel_name_is_not_a_relax_function", lambda vm: vm["relu"],
     ["no Relax function 'relu'"]),
    ("one_argument_too_many", lambda vm: vm["main"](X, X), ["main expects 1 argument (x), got 2"]),
    ("no_argument", lambda vm: vm["main"](), ["main expects 1 argument (x), got 0"]),
    ("profile_with_one_argument_too_many", lambda vm: vm.profile("main", X, X),
     ["main expects 1 argument (x), got 2"]),
    ("int32_argument", lambda vm: vm["main"](X.astype("int32")),
     ["argument 'x'", "expected dtype float32, got int32"]),
    ("argument_of_another_shape", lambda vm: vm["main"](np.zeros(5, "float32")),
     ["argument 'x'", "dimension 0 is 5, expected 4"]),
    ("argument_of_another_rank", lambda vm: vm["main"](np.zeros((2, 2), "float32")),
     ["argument 'x'", "expected 1 dimension, got 2"]),
    ("a_list_for_a_tensor", lambda vm: vm["main"]([1.0, 2.0, 3.0, 4.0]),
     ["argument 'x'", "expected a tensor, got a tuple of 4 values"]),
    ("none_for_a_tensor", lambda vm: vm["main"](None),
     ["argument 'x'", "expected a tensor, got a NoneType (None)"]),
    ("unregistered_packed_function", lambda vm: vm["unregistered"](X),
     ["'test.bad_input.nothere' is not registered", "unregistered"]),
    ("packed_function_of_another_arity", lambda vm: vm["wrong_arity"](X),
     ["'test.bad_input.fill_zero' was called with 3 arguments", "fill_zero(x, out)"]),
]


@pytest.mark.parametrize("call, phrases", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_vm_call_is_refused_and_the_vm_still_serves(vm, call, phrases):
    refused(lambda: call(vm), *phrases)
    np.testing.assert_array_equal(vm["main"](X).numpy(), np.maximum(X, 0))


@I.ir_module
class _AddOne:
    @T.prim_func
    def add_one(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
        for i in range(4):
            with T.block("B"):
                vi = T.axis.spatial(4, i)
                B[vi] = A[vi] + T.float32(1)

    @R.function
    def main(x: R.Tensor((4,), "float32")):
        cls = _AddOne
        y = R.call_tir(cls.add_one, (x,), out_sinfo=R.Tensor((4,), "float32"))
        return y


@pytest.mark.parametrize("bad, detail", [
    (np.zeros(4, "float64"), "expected dtype float32, got float64"),
    (np.zeros(5, "float32"), "dimension 0 is 5, expected 4 (its shape is (5,))"),
    (np.zeros((4, 1), "float32"), "expected 1 dimension, got 2 (its shape is (4, 1))"),
])
def test_a_kernel_and_the_vm_word_an_argument_mismatch_the_same_way(bad, detail):
    # one wording (backend.signature.mismatch): who, "does not match" what, then the detail
    kernel = mlckit.build(_AddOne["add_one"], target="llvm")
    vm = relax.VirtualMachine(relax.build(_AddOne, target="llvm"), mlckit.cpu())
    refused(lambda: kernel(bad, np.zeros(4, "float32")),
            "add_one(): argument 1 (A) does not match its buffer", detail)
    refused(lambda: vm["main"](bad), "main: argument 'x' (param[0]) does not match its "
            "annotation", detail)
