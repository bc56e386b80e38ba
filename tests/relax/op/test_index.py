"""relax.op.take and relax.op.strided_slice: TVM's argument forms and shape rules, Python's
slicing semantics, NumPy's results through the VM."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mlckit import relax, tir
from mlckit.error import TVMError
from mlckit.ir import assert_structural_equal
from mlckit.script import from_source
from mlckit.script import ir as I
from mlckit.script import relax as R

from .helpers import infer, one_call_module, tensor
from .numerics import TARGETS, call, random, run, vm_of


def var(shape, dtype="float32", name="x"):
    return relax.Var(name, relax.TensorStructInfo(shape, dtype))


# -- take -------------------------------------------------------------------------------------
def test_take_shape_is_the_indices_shape_in_place_of_the_axis():
    sinfo = infer(relax.op.take(var((4, 5, 6)), var((2, 3), "int64", "i"), axis=1))
    assert_structural_equal(sinfo, relax.TensorStructInfo((4, 2, 3, 6), "float32"))


def test_take_of_a_scalar_index_drops_the_axis():
    sinfo = infer(relax.op.take(var((4, 5)), relax.PrimValue(tir.IntImm("int64", 2)), axis=0))
    assert_structural_equal(sinfo, relax.TensorStructInfo((5,), "float32"))


@pytest.mark.parametrize("make, message", [
    (lambda: relax.op.take(var((4, 5)), var((2,), "float32", "i"), axis=0),
     "relax.take: requires integer indices, but their dtype is float32"),
    (lambda: relax.op.take(var((4, 5)), var((2,), "int64", "i")),
     r"relax.take: without axis, x must be 1-D, but it is \(4, 5\)"),
    (lambda: relax.op.take(var((4, 5)), var((2,), "int64", "i"), axis=2),
     "relax.take: axis=2 is out of range for a tensor of rank 2"),
])
def test_take_errors(make, message):
    with pytest.raises(TVMError, match=message):
        infer(make())


@pytest.mark.parametrize("target", TARGETS)
def test_take_is_an_embedding_lookup(target):
    table = random((10, 4))
    ids = np.array([[3, 0], [9, 3]], dtype="int64")
    mod = one_call_module(lambda t, i: relax.op.take(t, i, axis=0), tensor(table.shape),
                          tensor(ids.shape, "int64"))
    np.testing.assert_array_equal(run(mod, table, ids, target=target), table[ids])


@pytest.mark.parametrize("mode, want", [("clip", [0, 4, 4, 2]), ("wrap", [4, 0, 1, 2])])
def test_take_modes_for_indices_out_of_range(mode, want):
    x = np.arange(5, dtype="float32")
    ids = np.array([-1, 5, 6, 2], dtype="int32")
    mod = one_call_module(lambda t, i: relax.op.take(t, i, axis=0, mode=mode), tensor((5,)),
                          tensor((4,), "int32"))
    np.testing.assert_array_equal(run(mod, x, ids, target="lnumpy"), np.array(want, "float32"))


def test_take_along_a_middle_axis_equals_numpy():
    x = random((3, 6, 2))
    ids = np.array([5, 1, 1], dtype="int64")
    mod = one_call_module(lambda t, i: relax.op.take(t, i, axis=1), tensor(x.shape),
                          tensor(ids.shape, "int64"))
    np.testing.assert_array_equal(run(mod, x, ids, target="lnumpy"), np.take(x, ids, axis=1))


# -- strided_slice ------------------------------------------------------------------------------
def test_strided_slice_takes_tuples_of_int64_values_as_tvm():
    call_expr = relax.op.strided_slice(var((8, 9)), axes=[1], begin=[1], end=[7], strides=[2])
    assert len(call_expr.args) == 5
    assert_structural_equal(call_expr.args[1], relax.Tuple([relax.PrimValue(
        tir.IntImm("int64", 1))]))
    assert_structural_equal(infer(call_expr), relax.TensorStructInfo((8, 3), "float32"))


@pytest.mark.parametrize("slices", [
    [(0, 1, 7, 2)],
    [(1, -1, -8, -1)],
    [(0, -3, 100, 1), (1, 2, 4, 1)],
    [(1, 0, 9, 3)],
    [(0, 5, 2, 1)],                      # empty
])
def test_strided_slice_equals_python_slicing(slices):
    x = random((6, 9))
    axes, begin, end, strides = (list(v) for v in zip(*slices))
    mod = one_call_module(lambda t: relax.op.strided_slice(t, axes, begin, end, strides),
                          tensor(x.shape))
    index = [slice(None)] * 2
    for a, b, e, s in slices:
        index[a] = slice(b, e, s)
    want = x[tuple(index)]
    assert_structural_equal(mod["main"].ret_struct_info,
                            relax.TensorStructInfo(want.shape, "float32"))
    np.testing.assert_array_equal(run(mod, x, target="lnumpy"), want)


@I.ir_module
class SymbolicSlice:
    @R.function
    def main(x: R.Tensor(("n", 4), "float32")):
        gv = R.strided_slice(x, axes=[0], begin=[1], end=[-1])
        return gv


@pytest.mark.parametrize("target", TARGETS)
def test_strided_slice_of_a_symbolic_dim_equals_numpy_for_any_length(target):
    vm = vm_of(SymbolicSlice, target)

    @settings(max_examples=8, deadline=None, derandomize=True, database=None)
    @given(st.integers(1, 9))
    def check(n):
        x = random((n, 4), seed=n)
        np.testing.assert_array_equal(call(vm, x), x[1:-1])

    check()


def test_strided_slice_prints_as_tvm():
    mod = one_call_module(lambda t: relax.op.strided_slice(t, [0], [1], [3]), tensor((4, 4)))
    text = mod.script()
    assert "R.strided_slice(x0, (R.prim_value(0),), (R.prim_value(1),), (R.prim_value(3),), " \
        "assume_inbound=False)" in text
    assert_structural_equal(from_source(text), mod)


def test_strided_slice_with_mismatched_lengths_is_an_error():
    with pytest.raises(TVMError, match="relax.strided_slice: axes, begin, end .and strides. must "
                                       "have the same length"):
        relax.op.strided_slice(var((4, 4)), [0, 1], [1], [3])
