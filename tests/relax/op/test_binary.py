"""Broadcasting binary operators: construction, struct-info inference (NumPy broadcasting,
symbolic dims, TVM's dtype rules), located errors, and VM results equal to NumPy."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mlckit import DiagnosticError, TVMError, relax, tir
from mlckit.ir import Op, assert_structural_equal
from mlckit.relax.op.op_common import OpTypeError
from mlckit.script import from_source

from .helpers import SETTINGS, built, call, infer, one_call_module, run, tensor

ARITH = {
    "add": np.add, "subtract": np.subtract, "multiply": np.multiply, "divide": np.divide,
    "floor_divide": lambda a, b: np.floor(a / b), "power": np.power, "maximum": np.maximum,
    "minimum": np.minimum,
}
COMPARE = {
    "equal": np.equal, "not_equal": np.not_equal, "less": np.less, "less_equal": np.less_equal,
    "greater": np.greater, "greater_equal": np.greater_equal,
}
n, m = tir.Var("n", "int64"), tir.Var("m", "int64")


# -- construction -----------------------------------------------------------------------------
@pytest.mark.parametrize("name", sorted({**ARITH, **COMPARE}))
def test_constructor_builds_a_call_of_the_registered_op(name):
    x = relax.Var("x", tensor((2, 3)))
    y = relax.Var("y", tensor((3,)))
    call_expr = getattr(relax.op, name)(x, y)
    assert call_expr.op is Op.get(f"relax.{name}")
    assert call_expr.args == [x, y] and call_expr.attrs is None
    assert Op.get(f"relax.{name}").get_attr("arguments") == ("x1", "x2")


# -- inference ----------------------------------------------------------------------------------
@pytest.mark.parametrize("s1, s2, out", [
    ((2, 3), (2, 3), (2, 3)),
    ((4, 1), (3,), (4, 3)),
    ((1, 2, 3), (4, 3, 2, 1), (4, 3, 2, 3)),
    ((), (5, 6), (5, 6)),
    ((7, 1, 5), (1, 6, 1), (7, 6, 5)),
])
def test_static_shapes_broadcast_as_numpy(s1, s2, out):
    x, y = relax.Var("x", tensor(s1)), relax.Var("y", tensor(s2))
    assert_structural_equal(infer(relax.op.add(x, y)), tensor(out))


def test_symbolic_dim_broadcasts_against_one_and_itself():
    x = relax.Var("x", tensor((n, 1)))
    y = relax.Var("y", tensor((1, m)))
    assert_structural_equal(infer(relax.op.multiply(x, y)), tensor((n, m)))
    z = relax.Var("z", tensor((n, m)))
    assert_structural_equal(infer(relax.op.multiply(z, z)), tensor((n, m)))


def test_two_different_symbolic_dims_give_an_unknown_shape_of_known_rank():
    # as TVM: n and m may or may not be equal, decided at run time
    x = relax.Var("x", tensor((n, 4)))
    y = relax.Var("y", tensor((m, 4)))
    assert_structural_equal(infer(relax.op.add(x, y)), tensor(None, "float32", 2))


def test_unknown_rank_and_dtype_propagate():
    x = relax.Var("x", tensor(None, "float32", -1))
    y = relax.Var("y", tensor((3,)))
    assert_structural_equal(infer(relax.op.add(x, y)), tensor(None, "float32", -1))
    u = relax.Var("u", tensor((2, 3), ""))
    assert_structural_equal(infer(relax.op.add(u, y)), tensor((2, 3), ""))
    r2 = relax.Var("r2", tensor(None, "float32", 2))
    assert_structural_equal(infer(relax.op.add(r2, y)), tensor(None, "float32", 2))


def test_comparisons_give_bool_and_accept_mixed_dtypes():
    x = relax.Var("x", tensor((2, 3)))
    i = relax.Var("i", tensor((3,), "int32"))
    for name in COMPARE:
        assert_structural_equal(infer(getattr(relax.op, name)(x, i)), tensor((2, 3), "bool"))


def test_bool_mixes_with_any_dtype_and_keeps_x1s():
    x = relax.Var("x", tensor((2, 3)))
    b = relax.Var("b", tensor((2, 3), "bool"))
    assert_structural_equal(infer(relax.op.multiply(x, b)), tensor((2, 3), "float32"))
    assert_structural_equal(infer(relax.op.multiply(b, x)), tensor((2, 3), "bool"))


def test_prim_value_argument_counts_as_a_scalar():
    x = relax.Var("x", tensor((4, 5)))
    s = relax.Var("s", relax.PrimStructInfo("float32"))
    assert_structural_equal(infer(relax.op.add(x, s)), tensor((4, 5)))
    assert_structural_equal(infer(relax.op.add(s, s)), relax.PrimStructInfo("float32"))


def test_incompatible_static_dims_name_op_arguments_and_shapes():
    x, y = relax.Var("x", tensor((3, 4))), relax.Var("y", tensor((5,)))
    with pytest.raises(TVMError, match=r"relax.add: cannot broadcast x1 \(3, 4\) and x2 "
                                       r"\(5,\): dim 1 of x1 is 4 and dim 0 of x2 is 5"):
        infer(relax.op.add(x, y))


def test_mismatched_dtypes_are_a_type_error_naming_both():
    x, y = relax.Var("x", tensor((3,))), relax.Var("y", tensor((3,), "float16"))
    with pytest.raises(OpTypeError, match=r"relax.subtract: the dtypes of x1 \(float32\) and "
                                          r"x2 \(float16\) must be equal"):
        infer(relax.op.subtract(x, y))
    with pytest.raises(TypeError):  # also the built-in kind, as TVM's TypeError
        infer(relax.op.subtract(x, y))


def test_non_tensor_argument_is_refused():
    x = relax.Var("x", tensor((3,)))
    t = relax.Var("t", relax.TupleStructInfo([tensor((3,))]))
    with pytest.raises(OpTypeError, match=r"relax.add: argument x2 must be a tensor or a "
                                          r"scalar .* but it is R.Tuple"):
        infer(relax.op.add(x, t))


def test_python_number_argument_is_a_prim_value_of_tvm_dtype():
    # as TVM's FFI: 1.5 becomes R.prim_value(T.float64(1.5)), which a float32 tensor refuses
    x = relax.Var("x", tensor((3,)))
    assert isinstance(relax.op.add(x, 1.5).args[1], relax.PrimValue)
    with pytest.raises(OpTypeError, match="float32.*float64"):
        infer(relax.op.add(x, 1.5))


# -- located errors in TVMScript ------------------------------------------------------------------
def test_script_error_is_at_the_line_of_the_call():
    src = '''
@R.function
def main(x: R.Tensor((3, 4), "float32"), y: R.Tensor((5,), "float32")):
    z = R.exp(x)
    w = R.add(z, y)
    return w
'''
    with pytest.raises(DiagnosticError) as info:
        from_source(src)
    assert info.value.line == 5
    assert "relax.add: cannot broadcast x1 (3, 4) and x2 (5,)" in info.value.message


def test_script_dtype_error_is_located_too():
    src = '''
@R.function
def main(x: R.Tensor((3,), "float32"), y: R.Tensor((3,), "int32")):
    w = R.multiply(x, y)
    return w
'''
    with pytest.raises(DiagnosticError) as info:
        from_source(src)
    assert info.value.line == 4
    assert "relax.multiply: the dtypes of x1 (float32) and x2 (int32) must be equal" in \
        info.value.message


# -- numerics through the VM ----------------------------------------------------------------------
def _data(draw_shape, dtype, positive=False, seed=0):
    rng = np.random.default_rng(seed)
    low = 0.5 if positive else -2.0
    return rng.uniform(low, 2.0, draw_shape).astype(dtype)


def _symbolic_module(name):
    """main: (n, m) op (m,);  outer: (n, 1) op (1, m) — one kernel serves every size."""
    op = getattr(relax.op, name)
    sn, sm = tir.Var("n", "int64"), tir.Var("m", "int64")
    x, y = relax.Var("x", tensor((sn, sm))), relax.Var("y", tensor((sm,)))
    a, b = relax.Var("a", tensor((sn, 1))), relax.Var("b", tensor((1, sm)))
    bb = relax.BlockBuilder()
    with bb.function("main", [x, y]):
        bb.emit_func_output(bb.emit(op(x, y)))
    with bb.function("outer", [a, b]):
        bb.emit_func_output(bb.emit(op(a, b)))
    return bb.get()


@pytest.mark.parametrize("name", sorted({**ARITH, **COMPARE}))
@settings(max_examples=6, **SETTINGS)
@given(rows=st.integers(1, 6), cols=st.integers(1, 6), seed=st.integers(0, 2**16))
def test_symbolic_shapes_match_numpy_on_llvm(name, rows, cols, seed):
    vm = built(("binary", name), lambda: _symbolic_module(name))
    ref = {**ARITH, **COMPARE}[name]
    positive = name in ("power", "divide", "floor_divide")
    x, y = _data((rows, cols), "float32", positive, seed), _data((cols,), "float32", positive, seed + 1)
    np.testing.assert_allclose(call(vm, x, y), ref(x, y), rtol=1e-5)
    a, b = _data((rows, 1), "float32", positive, seed + 2), _data((1, cols), "float32", positive, seed + 3)
    np.testing.assert_allclose(call(vm, a, b, func="outer"), ref(a, b), rtol=1e-5)


@st.composite
def broadcast_pair(draw):
    """Two shapes NumPy broadcasts: each dim of the shorter one is the longer's or 1."""
    out = draw(st.lists(st.integers(1, 4), min_size=0, max_size=4))
    short = draw(st.integers(0, len(out)))
    s1 = [d if draw(st.booleans()) else 1 for d in out]
    s2 = [d if draw(st.booleans()) else 1 for d in out[len(out) - short:]]
    return (tuple(s2), tuple(s1)) if draw(st.booleans()) else (tuple(s1), tuple(s2))


@settings(max_examples=25, **SETTINGS)
@given(shapes=broadcast_pair(), name=st.sampled_from(sorted({**ARITH, **COMPARE})),
       seed=st.integers(0, 2**16))
def test_static_broadcasting_matches_numpy_on_lnumpy(shapes, name, seed):
    s1, s2 = shapes
    ref = {**ARITH, **COMPARE}[name]
    mod = one_call_module(getattr(relax.op, name), tensor(s1), tensor(s2))
    positive = name in ("power", "divide", "floor_divide")
    x, y = _data(s1, "float32", positive, seed), _data(s2, "float32", positive, seed + 1)
    got = run(mod, x, y, target="lnumpy")
    want = np.asarray(ref(x, y))
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-5)


def test_integer_floor_divide_and_mod_round_toward_minus_infinity():
    x = np.array([-7, -6, 5, 7], "int32")
    y = np.array([2, -4, -3, 3], "int32")
    for name, ref in (("floor_divide", np.floor_divide), ("floor_mod", np.mod)):
        mod = one_call_module(getattr(relax.op, name), tensor((4,), "int32"),
                              tensor((4,), "int32"))
        np.testing.assert_array_equal(run(mod, x, y), ref(x, y))


def test_scalar_constant_operand_is_inlined_and_correct():
    mod = one_call_module(lambda x: relax.op.multiply(x, relax.const(2.5, "float32")),
                          tensor((2, 3)))
    lowered = relax.transform.LegalizeOps()(mod)
    kernel = lowered["multiply"]
    assert len(kernel.params) == 2  # x and the output: the constant is inside the PrimFunc
    x = _data((2, 3), "float32")
    np.testing.assert_allclose(run(mod, x), x * np.float32(2.5), rtol=1e-6)
