"""relax.op reductions (sum, mean, max, min, prod) and argmax/argmin: TVM's shape rules
(axis None, negative axes, keepdims, symbolic dims), TVM's legalized TIR for sum, and NumPy's
results through the VM for any shape."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mlckit import relax, tir
from mlckit.error import TVMError
from mlckit.ir import assert_structural_equal
from mlckit.relax.transform import LegalizeOps
from mlckit.script import from_source
from mlckit.script import ir as I
from mlckit.script import relax as R
from mlckit.script import tir as T

from .helpers import infer, one_call_module, tensor
from .numerics import TARGETS, call, random, run, vm_of

REDUCTIONS = {"sum": np.sum, "mean": np.mean, "max": np.max, "min": np.min, "prod": np.prod}


def var(shape, dtype="float32"):
    return relax.Var("x", relax.TensorStructInfo(shape, dtype))


@pytest.mark.parametrize("axis, keepdims, out", [
    (None, False, ()),
    (None, True, (1, 1, 1, 1)),
    ([0, 3], False, (3, 4)),
    ([-1], True, (2, 3, 4, 1)),
    (1, False, (2, 4, 5)),
])
@pytest.mark.parametrize("op", sorted(REDUCTIONS))
def test_reduction_shapes(op, axis, keepdims, out):
    sinfo = infer(getattr(relax.op, op)(var((2, 3, 4, 5)), axis, keepdims))
    assert_structural_equal(sinfo, relax.TensorStructInfo(out, "float32"))


def test_reduction_of_symbolic_dims_keeps_the_others():
    a, b = tir.Var("a", "int64"), tir.Var("b", "int64")
    sinfo = infer(relax.op.sum(var((a, b, 3)), axis=[1]))
    assert sinfo.dims[0] is a and sinfo.dims[1].value == 3


def test_reduction_of_unknown_shape_knows_its_rank():
    x = relax.Var("x", relax.TensorStructInfo(None, "float32", 3))
    assert infer(relax.op.mean(x, axis=[0])).ndim == 2
    assert_structural_equal(infer(relax.op.max(x)), relax.TensorStructInfo((), "float32"))


@pytest.mark.parametrize("axis, message", [
    ([3], r"relax.sum: axis=3 is out of range for a tensor of rank 3"),
    ([0, -3], r"relax.sum: axis=\[0, -3\] names an axis more than once"),
])
def test_reduction_axis_errors(axis, message):
    with pytest.raises(TVMError, match=message):
        infer(relax.op.sum(var((2, 3, 4)), axis))


def test_sum_legalizes_to_tvms_primfunc():
    @I.ir_module
    class Sum:
        @R.function
        def main(x: R.Tensor((2, 3, 4, 5), "float32")):
            gv: R.Tensor((), "float32") = R.sum(x)
            return gv

    @I.ir_module
    class Expected:
        @R.function
        def main(x: R.Tensor((2, 3, 4, 5), "float32")):
            gv = R.call_tir(Expected.sum, (x,), R.Tensor((), dtype="float32"))
            return gv

        @T.prim_func(private=True)
        def sum(x: T.Buffer((T.int64(2), T.int64(3), T.int64(4), T.int64(5)), "float32"),
                x_red: T.Buffer((), "float32")):
            T.func_attr({"tir.noalias": True})
            for i0, i1, i2, i3 in T.grid(T.int64(2), T.int64(3), T.int64(4), T.int64(5)):
                with T.block("x_red"):
                    k0, k1, k2, k3 = T.axis.remap("RRRR", [i0, i1, i2, i3])
                    T.reads(x[k0, k1, k2, k3])
                    T.writes(x_red[()])
                    with T.init():
                        x_red[()] = T.float32(0)
                    x_red[()] = x_red[()] + x[k0, k1, k2, k3]

    assert_structural_equal(LegalizeOps()(Sum), Expected)


def test_mean_legalizes_to_tvms_sum_then_divide():
    @I.ir_module
    class Mean:
        @R.function
        def main(x: R.Tensor((2, 3, 4, 5), "float32")):
            gv: R.Tensor((3, 4), "float32") = R.mean(x, [0, 3])
            return gv

    @I.ir_module
    class Expected:
        @R.function
        def main(x: R.Tensor((2, 3, 4, 5), "float32")):
            gv = R.call_tir(Expected.mean, (x,), R.Tensor((3, 4), dtype="float32"))
            return gv

        @T.prim_func(private=True)
        def mean(x: T.Buffer((T.int64(2), T.int64(3), T.int64(4), T.int64(5)), "float32"),
                 T_divide: T.Buffer((T.int64(3), T.int64(4)), "float32")):
            T.func_attr({"tir.noalias": True})
            x_red = T.alloc_buffer((T.int64(3), T.int64(4)))
            for i0, i1, i2, i3 in T.grid(T.int64(3), T.int64(4), T.int64(2), T.int64(5)):
                with T.block("x_red"):
                    ax0, ax1, k0, k3 = T.axis.remap("SSRR", [i0, i1, i2, i3])
                    with T.init():
                        x_red[ax0, ax1] = T.float32(0)
                    x_red[ax0, ax1] = x_red[ax0, ax1] + x[k0, ax0, ax1, k3]
            for i0, i1 in T.grid(T.int64(3), T.int64(4)):
                with T.block("T_divide"):
                    ax0, ax1 = T.axis.remap("SS", [i0, i1])
                    T_divide[ax0, ax1] = x_red[ax0, ax1] / T.float32(10)

    assert_structural_equal(LegalizeOps()(Mean), Expected)


def test_reductions_print_their_attributes_as_tvm():
    mod = one_call_module(lambda x: relax.op.max(x, axis=[1], keepdims=True), tensor((2, 3)))
    text = mod.script()
    assert "R.max(x0, axis=[1], keepdims=True)" in text
    assert_structural_equal(from_source(text), mod)


def reduction_module(op, axis, keepdims):
    n, m = tir.Var("n", "int64"), tir.Var("m", "int64")
    return one_call_module(lambda x: getattr(relax.op, op)(x, axis, keepdims),
                           tensor((n, m, 3)))


@pytest.mark.parametrize("op", sorted(REDUCTIONS))
@pytest.mark.parametrize("axis, keepdims", [(None, False), ([0, 2], True), ([-2], False)])
def test_reductions_equal_numpy_for_any_shape(op, axis, keepdims):
    vm = vm_of(reduction_module(op, axis, keepdims), "lnumpy")
    np_axis = None if axis is None else tuple(axis)

    @settings(max_examples=6, deadline=None, derandomize=True, database=None)
    @given(st.integers(1, 4), st.integers(1, 4))
    def check(n, m):
        x = random((n, m, 3), seed=n * 7 + m, low=0.5, high=1.5)
        want = REDUCTIONS[op](x, axis=np_axis, keepdims=keepdims)
        np.testing.assert_allclose(call(vm, x), want, rtol=1e-5)

    check()


@pytest.mark.parametrize("op", ["sum", "mean", "max"])
def test_reductions_on_llvm_equal_numpy(op):
    x = random((3, 4, 5), seed=1)
    mod = one_call_module(lambda t: getattr(relax.op, op)(t, axis=[0, 2]), tensor(x.shape))
    np.testing.assert_allclose(run(mod, x), REDUCTIONS[op](x, axis=(0, 2)), rtol=1e-5)


# -- argmax / argmin ------------------------------------------------------------------------------
@pytest.mark.parametrize("axis, keepdims, out", [(None, False, ()), (1, False, (2, 4)),
                                                 (-1, True, (2, 3, 1)), (None, True, (1, 1, 1))])
def test_argmax_shapes_are_int64(axis, keepdims, out):
    sinfo = infer(relax.op.argmax(var((2, 3, 4)), axis, keepdims))
    assert_structural_equal(sinfo, relax.TensorStructInfo(out, "int64"))


def test_argmax_takes_one_axis():
    with pytest.raises(TypeError, match=r"relax.argmax: axis must be one int \(or None\), got "
                                        r"\[0, 1\]"):
        relax.op.argmax(var((2, 3)), [0, 1])


@pytest.mark.parametrize("op", ["argmax", "argmin"])
@pytest.mark.parametrize("target", TARGETS)
def test_argmax_and_argmin_equal_numpy(op, target):
    x = random((3, 5, 4), seed=2)
    x[0, 1:3, 0] = x[0, :, 0].max() + 1  # a tie: the first index wins, as NumPy
    x[1, 2:4, 1] = x[1, :, 1].min() - 1
    mod = one_call_module(lambda t: getattr(relax.op, op)(t, axis=1), tensor(x.shape))
    got = run(mod, x, target=target)
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, getattr(np, op)(x, axis=1))


def test_argmax_over_all_elements_equals_numpy():
    x = random((3, 4), seed=3)
    mod = one_call_module(lambda t: relax.op.argmax(t), tensor(x.shape))
    assert run(mod, x, target="lnumpy") == np.argmax(x)
