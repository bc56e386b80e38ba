"""A VM function without jumps runs as one generated Python function: the same results and
errors as the interpreter, its checks inline, its source readable."""

import numpy as np
import pytest

import mlckit
from mlckit import relax
from mlckit.script import relax as R

from .mlp_modules import MyModule, numpy_mlp, random_params

PARAMS = random_params()
ARGS = [PARAMS[k] for k in ("w0", "b0", "w1", "b1")]


@pytest.fixture(scope="module")
def vm():
    return relax.VirtualMachine(relax.build(MyModule, target="llvm"), mlckit.cpu())


def _x(n, seed=3):
    return np.random.default_rng(seed).standard_normal((n, 784)).astype("float32")


def test_main_is_compiled_and_equals_the_interpreter(vm):
    idx = vm.exec.func_map["main"]
    assert idx in vm._compiled
    x = _x(5)
    compiled = vm["main"](x, *ARGS).numpy()
    interpreted = vm._interpret(idx, [x, *ARGS])
    np.testing.assert_array_equal(compiled, interpreted)
    np.testing.assert_allclose(compiled, numpy_mlp(x, PARAMS), rtol=1e-5, atol=1e-5)


def test_the_source_has_one_line_per_instruction_and_inline_checks():
    @R.function
    def main(x: R.Tensor((2, 3), "float32")):
        return x

    vm = relax.VirtualMachine(relax.build(main), mlckit.cpu())
    source = vm.python_source("main")
    assert "def main(r0):" in source
    assert "if type(r0) is not ndarray or r0.ndim != 2 or r0.dtype != k0:" in source
    assert "if type(r0) is not ndarray or r0.shape != (2, 3):" in source
    assert "return r0" in source


def test_a_wrong_argument_raises_the_builtins_error_with_the_instruction(vm):
    with pytest.raises(ValueError, match=r"main: argument 'w0' \(param\[1\]\) does not match "
                                         r"its annotation .*dimension 1 is 785, expected 784") \
            as info:
        vm["main"](_x(2), np.zeros((128, 785), "float32"), *ARGS[1:])
    notes = "\n".join(getattr(info.value, "__notes__", []))
    assert "raised by the VM while running 'main', instruction" in notes
    assert "vm.builtin.match_shape" in notes


def test_a_wrong_dtype_is_caught_by_the_inline_guard(vm):
    with pytest.raises(ValueError, match=r"argument 'x' \(param\[0\]\).*expected dtype "
                                         r"float32, got float64"):
        vm["main"](_x(2).astype("float64"), *ARGS)


def test_a_function_with_branches_runs_in_the_interpreter():
    @R.function
    def main(c: R.Tensor((), "bool"), x: R.Tensor((2,), "float32"),
             y: R.Tensor((2,), "float32")):
        if c:
            z = x
        else:
            z = y
        return z

    vm = relax.VirtualMachine(relax.build(main), mlckit.cpu())
    assert vm.python_source("main") is None
    x, y = np.zeros(2, "float32"), np.ones(2, "float32")
    np.testing.assert_array_equal(vm["main"](np.array(False), x, y).numpy(), y)


def test_profiling_times_every_call_in_the_interpreter(vm):
    report = vm.profile(_x(2), *ARGS)
    assert {"linear0", "relu0", "linear1", "vm.builtin.match_shape"} <= {r.name for r in
                                                                          report.rows}
