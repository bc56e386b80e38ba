"""astype: the dtype changes, the shape stays; TVM's attrs, printing and lowering."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mlckit import relax, tir
from mlckit.ir import Op, assert_structural_equal
from mlckit.relax.op.op_attrs import AstypeAttrs
from mlckit.relax.op.op_common import OpTypeError

from .helpers import SETTINGS, built, call, infer, one_call_module, run, tensor

n = tir.Var("n", "int64")


def test_constructor_carries_tvm_attrs():
    x = relax.Var("x", tensor((n, 4)))
    call_expr = relax.op.astype(x, "float16")
    assert call_expr.op is Op.get("relax.astype")
    assert_structural_equal(call_expr.attrs, AstypeAttrs("float16"))
    assert_structural_equal(infer(call_expr), tensor((n, 4), "float16"))


def test_numpy_dtypes_are_accepted():
    x = relax.Var("x", tensor((2,)))
    assert relax.op.astype(x, np.int8).attrs.dtype == "int8"


def test_unknown_shape_and_input_dtype():
    x = relax.Var("x", tensor(None, "", 3))
    assert_structural_equal(infer(relax.op.astype(x, "int32")), tensor(None, "int32", 3))


def test_bad_dtype_and_bad_input_are_refused():
    x = relax.Var("x", tensor((2,)))
    with pytest.raises(ValueError, match="relax.astype: unknown dtype 'float17'"):
        relax.op.astype(x, "float17")
    t = relax.Var("t", relax.TupleStructInfo([]))
    with pytest.raises(OpTypeError, match="relax.astype: requires argument x to be a tensor"):
        infer(relax.op.astype(t, "int32"))


def test_expr_astype_is_the_operator():
    x = relax.Var("x", tensor((2,)))
    assert_structural_equal(x.astype("int32"), relax.op.astype(x, "int32"))


@pytest.mark.parametrize("src, dst", [("float32", "int32"), ("int32", "float32"),
                                      ("float32", "float64"), ("float32", "bool"),
                                      ("int64", "int8")])
@settings(max_examples=4, **SETTINGS)
@given(size=st.integers(1, 10), seed=st.integers(0, 2**16))
def test_matches_numpy_astype_on_llvm(src, dst, size, seed):
    sn = tir.Var("n", "int64")
    vm = built(("astype", src, dst),
               lambda: one_call_module(lambda v: relax.op.astype(v, dst), tensor((sn,), src)))
    x = (np.random.default_rng(seed).uniform(-50, 50, size)).astype(src)
    np.testing.assert_array_equal(call(vm, x), x.astype(dst))


def test_float16_on_lnumpy():
    x = np.linspace(-3, 3, 6, dtype="float32")
    got = run(one_call_module(lambda v: relax.op.astype(v, "float16"), tensor((6,))), x,
              target="lnumpy")
    np.testing.assert_array_equal(got, x.astype("float16"))
