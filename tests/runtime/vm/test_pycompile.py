"""A VM function without jumps runs as one generated Python function: the same results and
errors as the interpreter, its checks inline, its source readable."""

import re

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


# -- kernels called without their own check ---------------------------------------------------
@R.function
def two_kernels(x: R.Tensor((4, 8), "float32"), y: R.Tensor((4, 8), "float32")):
    with R.dataflow():
        s = R.add(x, y)
        p = R.multiply(s, s)
        R.output(p)
    return p


@pytest.fixture(scope="module")
def static_vm():
    return relax.VirtualMachine(relax.build(two_kernels, target="llvm"), mlckit.cpu())


def _xy():
    rng = np.random.default_rng(0)
    return (rng.standard_normal((4, 8)).astype("float32"),
            rng.standard_normal((4, 8)).astype("float32"))


def test_a_kernel_on_tensors_the_vm_knows_is_called_without_its_check(static_vm):
    source = static_vm.python_source("main")
    # the kernel reading the arguments: unchecked when both are compact, aligned, writable
    assert "fast = type(r0) is ndarray and r0.flags.carray and type(r1) is ndarray and " \
           "r1.flags.carray" in source
    lines = [ln.strip() for ln in source.splitlines()]
    add = next(ln for ln in lines if "if fast else" in ln)
    # the unchecked entry (numba_cpu.entry's with the kernel's address first, or the kernel's
    # dispatcher); else the kernel, which checks
    assert re.fullmatch(
        r"rv = \(d(\d+)\((k\d+, )?r0, r1, r3\) if fast else f\1\(r0, r1, r3\)\)", add)
    # the kernel reading the tensor the VM allocated: unchecked always
    mul = next(ln for ln in lines if ln.startswith("rv = d") and "if fast" not in ln)
    assert re.fullmatch(r"rv = d\d+\((k\d+, )?r4, r4, r6\)", mul)  # r4: a copy of r3
    assert any(ln.endswith("# multiply, unchecked") for ln in lines)
    x, y = _xy()
    np.testing.assert_allclose(static_vm["main"](x, y).numpy(), (x + y) ** 2, rtol=1e-6)


def test_a_kernel_without_its_wrapper_is_called_through_the_entry_with_its_address(
        monkeypatch):
    from mlckit.backend.numba_cpu import entry as entry_module

    @R.function
    def add_then_square(x: R.Tensor((3, 5), "float32"), y: R.Tensor((3, 5), "float32")):
        with R.dataflow():  # kernels of their own (no other test's shape)
            s = R.add(x, y)
            p = R.multiply(s, s)
            R.output(p)
        return p

    monkeypatch.setattr(entry_module, "REPEATS", 1)  # every kernel through numba_cpu.entry
    vm = relax.VirtualMachine(relax.build(add_then_square, target="llvm"), mlckit.cpu())
    lines = [ln.strip() for ln in vm.python_source("main").splitlines()]
    add = next(ln for ln in lines if "if fast else" in ln)
    assert re.fullmatch(r"rv = \(d\d+\(k\d+, r0, r1, r3\) if fast else f\d+\(r0, r1, r3\)\)",
                        add)
    rng = np.random.default_rng(1)
    x, y = (rng.standard_normal((3, 5)).astype("float32") for _ in range(2))
    np.testing.assert_allclose(vm["main"](x, y).numpy(), (x + y) ** 2, rtol=1e-6)


class _Recording:
    """A kernel standing in the VM's function table that notes each checked call."""

    def __init__(self, kernel):
        self.kernel, self.calls = kernel, 0

    def __call__(self, *args):
        self.calls += 1
        return self.kernel(*args)


def _checked_calls_of_add(vm, *args) -> int:
    """How many times ``main(*args)`` calls the ``add`` kernel through its checked call."""
    idx = next(i for i, f in enumerate(vm._funcs) if f is vm.exec.kernels["add"])
    recording = vm._funcs[idx] = _Recording(vm._funcs[idx])
    try:
        vm["main"](*args)
    finally:
        vm._funcs[idx] = recording.kernel
    return recording.calls


def test_compact_arguments_skip_the_check(static_vm):
    assert _checked_calls_of_add(static_vm, *_xy()) == 0


@pytest.mark.parametrize("make", [
    lambda a: np.repeat(a, 2, axis=1)[:, ::2],  # a strided view: the check compacts it
    lambda a: np.broadcast_to(a, (4, 8)),  # read-only: Numba would type it differently
    np.asfortranarray,  # column-major: compacted by the check as well
], ids=["strided", "read-only", "fortran"])
def test_arguments_not_compact_aligned_and_writable_take_the_checked_call(static_vm, make):
    x, y = _xy()
    arg = make(x)
    assert not arg.flags.carray
    assert _checked_calls_of_add(static_vm, arg, y) == 1
    np.testing.assert_allclose(static_vm["main"](arg, y).numpy(), (x + y) ** 2, rtol=1e-6)


def test_a_wrong_shape_is_still_refused_before_any_kernel_runs(static_vm):
    x, y = _xy()
    with pytest.raises(ValueError, match=r"argument 'y' \(param\[1\]\) does not match"):
        static_vm["main"](x, y[:, :7].copy())


@R.function
def chain(x: R.Tensor((4, 8), "float32")):
    with R.dataflow():
        a = R.add(x, x)
        b = R.add(a, a)
        c = R.add(b, b)
        d = R.add(c, c)
        R.output(d)
    return d


def test_a_storage_used_again_gives_the_view_taken_before():
    # planned memory: a, b, c take turns in two storages, d (returned) has its own; a
    # storage keeps one view per shape and dtype, so c reuses the view a was given
    vm = relax.VirtualMachine(relax.build(chain, target="llvm"), mlckit.cpu())
    source = vm.python_source("main")
    assert source.count(".views.get(") == 3
    assert "r7 = r2  # r1's view, as before" in source
    x, _ = _xy()
    np.testing.assert_allclose(vm["main"](x).numpy(), x * 16, rtol=1e-6)
    np.testing.assert_allclose(vm["main"](x + 1).numpy(), (x + 1) * 16, rtol=1e-6)
