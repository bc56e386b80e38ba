"""Element-wise unary operators: inference (the input's struct info; float-only ops refuse
integer tensors), located errors, and VM results equal to NumPy."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mlckit import DiagnosticError, relax, tir
from mlckit.ir import Op, assert_structural_equal
from mlckit.relax.op.op_common import OpTypeError
from mlckit.script import from_source

from .helpers import SETTINGS, built, call, infer, one_call_module, run, tensor

_erf = np.vectorize(math.erf)

# name -> (NumPy reference, input range, float only)
UNARY = {
    "negative": (np.negative, (-3, 3), False),
    "abs": (np.abs, (-3, 3), False),
    "exp": (np.exp, (-3, 3), True),
    "log": (np.log, (0.1, 5), True),
    "sqrt": (np.sqrt, (0, 5), True),
    "rsqrt": (lambda x: 1 / np.sqrt(x), (0.1, 5), True),
    "tanh": (np.tanh, (-3, 3), True),
    "sigmoid": (lambda x: 1 / (1 + np.exp(-x)), (-5, 5), True),
    "erf": (lambda x: _erf(x).astype(x.dtype), (-2, 2), True),
    "sin": (np.sin, (-3, 3), True),
    "cos": (np.cos, (-3, 3), True),
    "tan": (np.tan, (-1, 1), True),
    "sinh": (np.sinh, (-2, 2), True),
    "cosh": (np.cosh, (-2, 2), True),
    "asin": (np.arcsin, (-0.9, 0.9), True),
    "acos": (np.arccos, (-0.9, 0.9), True),
    "atan": (np.arctan, (-3, 3), True),
    "floor": (np.floor, (-3, 3), False),
    "ceil": (np.ceil, (-3, 3), False),
    "trunc": (np.trunc, (-3, 3), False),
    "round": (np.round, (-3.4, 3.4), False),
    "sign": (np.sign, (-3, 3), False),
    "square": (np.square, (-3, 3), False),
}
CHECKS = {"isnan": np.isnan, "isinf": np.isinf, "isfinite": np.isfinite}
n = tir.Var("n", "int64")


# -- inference ----------------------------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(UNARY))
def test_result_has_the_input_struct_info(name):
    x = relax.Var("x", tensor((n, 4)))
    call_expr = getattr(relax.op, name)(x)
    assert call_expr.op is Op.get(f"relax.{name}") and call_expr.args == [x]
    assert_structural_equal(infer(call_expr), tensor((n, 4)))


@pytest.mark.parametrize("name", sorted(CHECKS))
def test_checks_give_bool_tensors(name):
    x = relax.Var("x", tensor((n, 4)))
    assert_structural_equal(infer(getattr(relax.op, name)(x)), tensor((n, 4), "bool"))


def test_unknown_shape_rank_and_dtype_propagate():
    x = relax.Var("x", tensor(None, "", -1))
    assert_structural_equal(infer(relax.op.exp(x)), tensor(None, "", -1))
    y = relax.Var("y", tensor(None, "float16", 3))
    assert_structural_equal(infer(relax.op.tanh(y)), tensor(None, "float16", 3))


@pytest.mark.parametrize("name", sorted(n for n, (_, _, f) in UNARY.items() if f))
def test_float_only_ops_refuse_integer_tensors(name):
    x = relax.Var("x", tensor((2,), "int32"))
    with pytest.raises(OpTypeError, match=rf"relax.{name}: requires x to have a float dtype, "
                                          r"but its dtype is int32"):
        infer(getattr(relax.op, name)(x))


@pytest.mark.parametrize("name", ["negative", "abs", "floor", "sign", "square"])
def test_integer_friendly_ops_accept_integers(name):
    x = relax.Var("x", tensor((2,), "int32"))
    assert_structural_equal(infer(getattr(relax.op, name)(x)), tensor((2,), "int32"))


def test_non_tensor_input_is_refused():
    s = relax.Var("s", relax.ShapeStructInfo([2, 3]))
    with pytest.raises(OpTypeError, match=r"relax.exp: requires argument x to be a tensor, "
                                          r"but it is R.Shape\(\[2, 3\]\)"):
        infer(relax.op.exp(s))


def test_clip_takes_scalar_bounds():
    x = relax.Var("x", tensor((n, 4)))
    call_expr = relax.op.clip(x, 0.0, 6.0)
    assert all(isinstance(a, relax.PrimValue) for a in call_expr.args[1:])
    assert_structural_equal(infer(call_expr), tensor((n, 4)))
    with pytest.raises(TypeError, match="relax.clip: min must be a scalar"):
        relax.op.clip(x, x, 6.0)


def test_script_error_is_located():
    src = '''
@R.function
def main(x: R.Tensor((3,), "int32")):
    y = R.sqrt(x)
    return y
'''
    with pytest.raises(DiagnosticError) as info:
        from_source(src)
    assert info.value.line == 4
    assert "relax.sqrt: requires x to have a float dtype, but its dtype is int32" in \
        info.value.message


# -- numerics through the VM ----------------------------------------------------------------------
def _symbolic_module(name):
    sn, sm = tir.Var("n", "int64"), tir.Var("m", "int64")
    return one_call_module(getattr(relax.op, name), tensor((sn, sm)))


@pytest.mark.parametrize("name", sorted(UNARY))
@settings(max_examples=5, **SETTINGS)
@given(rows=st.integers(1, 5), cols=st.integers(1, 7), seed=st.integers(0, 2**16))
def test_symbolic_shapes_match_numpy_on_llvm(name, rows, cols, seed):
    ref, (low, high), _ = UNARY[name]
    vm = built(("unary", name), lambda: _symbolic_module(name))
    x = np.random.default_rng(seed).uniform(low, high, (rows, cols)).astype("float32")
    np.testing.assert_allclose(call(vm, x), ref(x), rtol=2e-5, atol=1e-6)


@pytest.mark.parametrize("name", sorted(UNARY))
def test_static_shape_matches_numpy_on_lnumpy(name):
    ref, (low, high), _ = UNARY[name]
    x = np.random.default_rng(1).uniform(low, high, (2, 3, 4)).astype("float32")
    got = run(one_call_module(getattr(relax.op, name), tensor((2, 3, 4))), x, target="lnumpy")
    np.testing.assert_allclose(got, ref(x), rtol=2e-5, atol=1e-6)


def test_checks_match_numpy():
    x = np.array([0.0, np.inf, -np.inf, np.nan, 1.5], "float32")
    for name, ref in CHECKS.items():
        got = run(one_call_module(getattr(relax.op, name), tensor((5,))), x)
        np.testing.assert_array_equal(got, ref(x))


def test_integer_negative_and_abs():
    x = np.array([-3, 0, 4], "int32")
    for name, ref in (("negative", np.negative), ("abs", np.abs)):
        got = run(one_call_module(getattr(relax.op, name), tensor((3,), "int32")), x)
        np.testing.assert_array_equal(got, ref(x))
        assert got.dtype == np.int32


def test_clip_matches_numpy():
    x = np.linspace(-2, 8, 12, dtype="float32").reshape(3, 4)
    got = run(one_call_module(lambda v: relax.op.clip(v, 0.0, 6.0), tensor((3, 4))), x)
    np.testing.assert_allclose(got, np.clip(x, 0, 6))


def test_erf_of_float16_is_computed_in_float32():
    lowered = relax.transform.LegalizeOps()(
        one_call_module(relax.op.erf, tensor((4,), "float16")))
    text = lowered["erf"].script()
    assert 'T.Cast("float32"' in text and 'T.Cast("float16"' in text
    x = np.linspace(-2, 2, 4).astype("float16")
    got = run(one_call_module(relax.op.erf, tensor((4,), "float16")), x, target="lnumpy")
    np.testing.assert_allclose(got, _erf(x).astype("float16"), rtol=1e-3)
