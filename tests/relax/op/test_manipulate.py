"""relax.op manipulation family: reshape (with TVM's -1 inference), permute_dims, flatten,
expand_dims, squeeze, concat, split, broadcast_to — shapes, errors, TVM's legalized TIR, and
NumPy's results through the VM."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mlckit import relax, tir
from mlckit.error import TVMError
from mlckit.ir import assert_structural_equal
from mlckit.ir.diagnostics import DiagnosticError
from mlckit.relax.transform import LegalizeOps
from mlckit.script import from_source
from mlckit.script import ir as I
from mlckit.script import relax as R
from mlckit.script import tir as T

from .helpers import infer, one_call_module, tensor
from .numerics import TARGETS, call, random, run, vm_of


def var(shape, dtype="float32", name="x"):
    return relax.Var(name, relax.TensorStructInfo(shape, dtype))


def assert_sinfo(sinfo, shape, dtype="float32"):
    assert_structural_equal(sinfo, relax.TensorStructInfo(shape, dtype))


def check(make, shape, want, target="lnumpy"):
    """``make(x)`` built for ``target`` equals ``want(x)`` on a random ``x``."""
    x = random(shape)
    got = run(one_call_module(make, tensor(shape)), x, target=target)
    expected = want(x)
    if isinstance(expected, (list, tuple)):
        for g, w in zip(got, expected):
            np.testing.assert_array_equal(g, w)
    else:
        np.testing.assert_array_equal(got, expected)


# -- reshape ------------------------------------------------------------------------------------
def test_reshape_infers_the_minus_one_when_the_call_is_built():
    call = relax.op.reshape(var((2, 3, 4)), (2, -1))
    assert_structural_equal(call.args[1], relax.ShapeExpr([2, 12]))
    assert_sinfo(infer(call), (2, 12))


def test_reshape_copies_zero_dims_from_the_input():
    assert_sinfo(infer(relax.op.reshape(var((2, 3, 4)), (0, -1))), (2, 12))


def test_reshape_infers_symbolic_dims():
    n = tir.Var("n", "int64")
    sinfo = infer(relax.op.reshape(var((n, 3, 4)), (-1, 4)))
    assert sinfo.dims[1].value == 4
    assert_structural_equal(sinfo.dims[0], n * 3)


@pytest.mark.parametrize("shape, message", [
    ((4, 2), r"relax.reshape: cannot reshape x \(2, 3\) \(6 elements\) to \(4, 2\) \(8 elements\)"),
    ((-1, -1), r"relax.reshape: the new shape \(-1, -1\) has more than one -1"),
    ((-2, 3), r"relax.reshape: the new shape \(-2, 3\) has the negative dim -2"),
])
def test_reshape_errors_name_the_op_and_the_shapes(shape, message):
    with pytest.raises(TVMError, match=message):
        infer(relax.op.reshape(var((2, 3)), shape))


def test_reshape_legalizes_to_tvms_primfunc():
    @I.ir_module
    class Reshape:
        @R.function
        def main(x: R.Tensor((1, 2, 3, 4), "float32")):
            gv: R.Tensor((8, 3), "float32") = R.reshape(x, (8, 3))
            return gv

    @I.ir_module
    class Expected:
        @R.function
        def main(x: R.Tensor((1, 2, 3, 4), "float32")):
            gv = R.call_tir(Expected.reshape, (x,), R.Tensor((8, 3), dtype="float32"))
            return gv

        @T.prim_func(private=True)
        def reshape(x: T.Buffer((T.int64(1), T.int64(2), T.int64(3), T.int64(4)), "float32"),
                    T_reshape: T.Buffer((T.int64(8), T.int64(3)), "float32")):
            T.func_attr({"tir.noalias": True})
            for i0, i1 in T.grid(T.int64(8), T.int64(3)):
                with T.block("T_reshape"):
                    ax0, ax1 = T.axis.remap("SS", [i0, i1])
                    T.reads(x[T.int64(0), (ax0 * T.int64(3) + ax1) % T.int64(24) // T.int64(12), (ax0 * T.int64(3) + ax1) % T.int64(12) // T.int64(4), (ax0 * T.int64(3) + ax1) % T.int64(4)])
                    T.writes(T_reshape[ax0, ax1])
                    T_reshape[ax0, ax1] = x[T.int64(0), (ax0 * T.int64(3) + ax1) % T.int64(24) // T.int64(12), (ax0 * T.int64(3) + ax1) % T.int64(12) // T.int64(4), (ax0 * T.int64(3) + ax1) % T.int64(4)]

    assert_structural_equal(LegalizeOps()(Reshape), Expected)


def test_reshape_to_a_bound_shape_variable_uses_its_values():
    @I.ir_module
    class Module:
        @R.function
        def main(x: R.Tensor((1, 2, 3, 4), "float32")):
            lv: R.Shape((8, 3)) = R.shape((8, 3))
            gv = R.reshape(x, lv)
            return gv

    x = random((1, 2, 3, 4))
    np.testing.assert_array_equal(run(Module, x, target="lnumpy"), x.reshape(8, 3))


@I.ir_module
class SymbolicReshape:
    @R.function
    def main(x: R.Tensor(("n", "m"), "float32")):
        n = T.int64()
        m = T.int64()
        gv = R.reshape(x, R.shape([m, n]))
        return gv


@pytest.mark.parametrize("target", TARGETS)
def test_symbolic_reshape_equals_numpy_for_any_shape(target):
    vm = vm_of(SymbolicReshape, target)

    @settings(max_examples=10, deadline=None, derandomize=True, database=None)
    @given(st.integers(1, 5), st.integers(1, 5))
    def run_one(n, m):
        x = random((n, m), seed=n * m)
        np.testing.assert_array_equal(call(vm, x), x.reshape(m, n))

    run_one()


# -- permute_dims / flatten / expand_dims / squeeze ---------------------------------------------
@pytest.mark.parametrize("axes, out", [(None, (4, 3, 2)), ([0, 2, 1], (2, 4, 3)),
                                       ([-1, 0, 1], (4, 2, 3))])
def test_permute_dims(axes, out):
    assert_sinfo(infer(relax.op.permute_dims(var((2, 3, 4)), axes)), out)
    check(lambda x: relax.op.permute_dims(x, axes), (2, 3, 4), lambda x: np.transpose(x, axes))


def test_permute_dims_prints_axes_as_tvm():
    mod = one_call_module(lambda x: relax.op.permute_dims(x, [1, 0]), tensor((2, 3)))
    text = mod.script()
    assert "R.permute_dims(x0, axes=[1, 0])" in text
    assert_structural_equal(from_source(text), mod)


@pytest.mark.parametrize("axes, message", [
    ([0, 1], "axes=[0, 1] must list all 3 dims"),
    ([0, 1, 1], "axes=[0, 1, 1] names an axis more than once"),
    ([0, 1, 3], "axes=3 is out of range for a tensor of rank 3"),
])
def test_permute_dims_errors(axes, message):
    with pytest.raises(TVMError, match="relax.permute_dims: " + message.replace("[", r"\[")):
        infer(relax.op.permute_dims(var((2, 3, 4)), axes))


def test_flatten():
    assert_sinfo(infer(relax.op.flatten(var((2, 3, 4)))), (24,))
    assert_sinfo(infer(relax.op.flatten(var(()))), (1,))
    check(relax.op.flatten, (2, 3, 4), np.ravel)


def test_expand_dims():
    assert_sinfo(infer(relax.op.expand_dims(var((3, 4)), [0, -1])), (1, 3, 4, 1))
    check(lambda x: relax.op.expand_dims(x, [0, -1]), (3, 4), lambda x: x[None, :, :, None])
    check(lambda x: relax.op.expand_dims(x, 1), (3, 4), lambda x: x[:, None])


def test_squeeze():
    assert_sinfo(infer(relax.op.squeeze(var((3, 1, 4, 1)))), (3, 4))
    assert_sinfo(infer(relax.op.squeeze(var((3, 1, 4, 1)), [1])), (3, 4, 1))
    check(lambda x: relax.op.squeeze(x, [-1]), (3, 1, 4, 1), lambda x: x[..., 0])
    check(relax.op.squeeze, (3, 1, 4, 1), np.squeeze)


def test_squeezing_a_dim_that_is_not_one_is_an_error():
    with pytest.raises(TVMError, match=r"relax.squeeze: cannot squeeze axis 0 of x \(3, 1\): its "
                                       r"size is 3, not 1"):
        infer(relax.op.squeeze(var((3, 1)), [0]))


def test_squeezing_symbolic_dims_has_an_unknown_shape():
    n = tir.Var("n", "int64")
    sinfo = infer(relax.op.squeeze(var((n, 1))))
    assert sinfo.dims is None and sinfo.ndim == -1


# -- concat / split -------------------------------------------------------------------------------
def test_concat_of_static_and_symbolic_shapes():
    n = tir.Var("n", "int64")
    assert_sinfo(infer(relax.op.concat([var((2, 3)), var((2, 4), name="y")], axis=1)), (2, 7))
    sinfo = infer(relax.op.concat([var((n, 3)), var((n, 3), name="y")], axis=0))
    assert_structural_equal(sinfo.dims[0], n * 2)


@pytest.mark.parametrize("shapes, axis, message", [
    ([(2, 3), (3, 3)], 1, r"relax.concat: the tensors must agree on every dim but axis 1; dim 0 "
                          r"differs: \(2, 3\), \(3, 3\)"),
    ([(2, 3), (2, 3, 1)], 0, r"relax.concat: all tensors must have the same rank"),
])
def test_concat_errors(shapes, axis, message):
    with pytest.raises(TVMError, match=message):
        infer(relax.op.concat([var(s, name=f"x{i}") for i, s in enumerate(shapes)], axis=axis))


@pytest.mark.parametrize("target", TARGETS)
def test_concat_equals_numpy(target):
    a, b, c = random((2, 3), seed=1), random((2, 1), seed=2), random((2, 4), seed=3)
    mod = one_call_module(lambda x, y, z: relax.op.concat([x, y, z], axis=-1),
                          tensor(a.shape), tensor(b.shape), tensor(c.shape))
    np.testing.assert_array_equal(run(mod, a, b, c, target=target),
                                  np.concatenate([a, b, c], -1))


@pytest.mark.parametrize("spec, axis", [(3, 1), ([2, 5], 1), (4, 0), ([1], 0)])
def test_split_equals_numpy(spec, axis):
    x = random((4, 9))
    mod = one_call_module(lambda t: relax.op.split(t, spec, axis), tensor(x.shape))
    got = run(mod, x, target="lnumpy")
    want = np.array_split(x, spec, axis) if isinstance(spec, int) else np.split(x, spec, axis)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


def test_split_into_sections_that_do_not_divide():
    sinfo = infer(relax.op.split(var((10,)), 3))
    assert [int(f.dims[0].value) for f in sinfo.fields] == [4, 4, 2]


def test_split_prints_as_tvm():
    mod = one_call_module(lambda t: relax.op.split(t, [2, 5], axis=1), tensor((4, 9)))
    text = mod.script()
    assert "R.split(x0, indices_or_sections=[2, 5], axis=1)" in text
    assert_structural_equal(from_source(text), mod)


# -- broadcast_to ---------------------------------------------------------------------------------
def test_broadcast_to_equals_numpy():
    check(lambda x: relax.op.broadcast_to(x, (4, 2, 3)), (2, 1),
          lambda x: np.broadcast_to(x, (4, 2, 3)))


def test_broadcast_to_an_incompatible_shape_is_an_error():
    with pytest.raises(TVMError, match=r"relax.broadcast_to: cannot broadcast x \(2, 3\) to "
                                       r"\(4, 2\): dim 1 of x is 3 but the target has 2"):
        infer(relax.op.broadcast_to(var((2, 3)), (4, 2)))


def test_a_bad_reshape_in_a_script_is_reported_at_its_line():
    with pytest.raises(DiagnosticError) as err:
        @I.ir_module
        class Bad:  # noqa: F841
            @R.function
            def main(x: R.Tensor((2, 3), "float32")):
                gv = R.reshape(x, (4, 2))
                return gv

    assert "gv = R.reshape(x, (4, 2))" in str(err.value)
    assert "(6 elements)" in str(err.value)
