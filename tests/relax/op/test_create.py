"""full / ones / zeros and their _like forms: TVM's InitAttrs, inference, lowering through
topi.full, and VM results equal to NumPy."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mlckit import relax, tir
from mlckit.ir import Op, assert_structural_equal
from mlckit.relax.op.op_attrs import InitAttrs
from mlckit.relax.transform import LegalizeOps
from mlckit.script import ir as I
from mlckit.script import relax as R
from mlckit.script import tir as T

from .helpers import SETTINGS, built, call, infer, run, tensor

n, m = tir.Var("n", "int64"), tir.Var("m", "int64")


# -- construction and inference -----------------------------------------------------------------
def test_zeros_and_ones_take_a_shape_and_a_required_dtype():
    call_expr = relax.op.zeros((n, 4), "float32")
    assert call_expr.op is Op.get("relax.zeros")
    assert isinstance(call_expr.args[0], relax.ShapeExpr)
    assert_structural_equal(call_expr.attrs, InitAttrs("float32"))
    assert_structural_equal(infer(call_expr), tensor((n, 4)))
    assert_structural_equal(infer(relax.op.ones(relax.ShapeExpr([2]), "int8")),
                            tensor((2,), "int8"))
    with pytest.raises(ValueError, match="relax.zeros: a dtype is required"):
        relax.op.zeros((2, 3), None)


def test_full_takes_its_dtype_from_the_value_unless_given():
    v = relax.Var("v", tensor((), "int32"))
    assert_structural_equal(relax.op.full((2, 3), v).attrs, InitAttrs("void"))
    assert_structural_equal(infer(relax.op.full((2, 3), v)), tensor((2, 3), "int32"))
    assert_structural_equal(infer(relax.op.full((2, 3), v, "float16")), tensor((2, 3), "float16"))


def test_full_needs_a_scalar_tensor_value_and_a_shape():
    x = relax.Var("x", tensor((2,)))
    with pytest.raises(ValueError, match=r"relax.full: requires fill_value to be a scalar "
                                         r"tensor .* but it is \(2,\)"):
        infer(relax.op.full((2, 3), x))
    with pytest.raises(ValueError, match=r"relax.full: requires fill_value to be a scalar "
                                         r"tensor .* but it is R.Prim"):
        infer(relax.op.full((2, 3), 1.5))  # as TVM: a Python number is a PrimValue
    with pytest.raises(ValueError, match="relax.full: requires the shape to be a shape"):
        infer(relax.op.full(x, relax.const(1.0)))


def test_like_forms_follow_the_input():
    x = relax.Var("x", tensor((n, m), "float16"))
    for op in (relax.op.zeros_like, relax.op.ones_like):
        assert_structural_equal(infer(op(x)), tensor((n, m), "float16"))
        assert_structural_equal(infer(op(x, "int32")), tensor((n, m), "int32"))
    v = relax.const(2.0, "float32")
    assert_structural_equal(infer(relax.op.full_like(x, v)), tensor((n, m), "float16"))
    assert_structural_equal(infer(relax.op.full_like(x, v, "int8")), tensor((n, m), "int8"))
    unknown = relax.Var("u", tensor(None, "float32", 2))
    assert_structural_equal(infer(relax.op.zeros_like(unknown)), tensor(None, "float32", 2))


# -- legalization: TVM's PrimFuncs ----------------------------------------------------------------
def test_zeros_legalizes_to_topi_full_with_a_constant():
    @I.ir_module
    class Before:
        @R.function
        def main() -> R.Tensor((2, 3), "float32"):
            gv: R.Tensor((2, 3), "float32") = R.zeros((2, 3), "float32")
            return gv

    @I.ir_module
    class Expected:
        @R.function
        def main() -> R.Tensor((2, 3), "float32"):
            gv = R.call_tir(Expected.zeros, R.tuple(), R.Tensor((2, 3), dtype="float32"))
            return gv

        @T.prim_func(private=True)
        def zeros(T_full: T.Buffer((T.int64(2), T.int64(3)), "float32")):
            T.func_attr({"tir.noalias": True})
            for i0, i1 in T.grid(T.int64(2), T.int64(3)):
                with T.block("T_full"):
                    ax0, ax1 = T.axis.remap("SS", [i0, i1])
                    T.reads()
                    T.writes(T_full[ax0, ax1])
                    T_full[ax0, ax1] = T.float32(0)

    assert_structural_equal(LegalizeOps()(Before), Expected)


def test_full_with_a_symbolic_shape_reads_the_value_tensor():
    @I.ir_module
    class Before:
        @R.function
        def main(dumb_param: R.Tensor(("m", "n")), v: R.Tensor((), "int32")):
            m = T.int64()
            n = T.int64()
            gv: R.Tensor((m, n), "int32") = R.full((m, n), v, dtype="int32")
            return gv

    @I.ir_module
    class Expected:
        @R.function
        def main(dumb_param: R.Tensor(("m", "n")), v: R.Tensor((), "int32")):
            m = T.int64()
            n = T.int64()
            gv = R.call_tir(Expected.full, (v,), R.Tensor((m, n), dtype="int32"))
            return gv

        @T.prim_func(private=True)
        def full(rxplaceholder: T.Buffer((), "int32"), var_T_full: T.handle):
            T.func_attr({"tir.noalias": True})
            m = T.int64()
            n = T.int64()
            T_full = T.match_buffer(var_T_full, [m, n], dtype="int32")
            for i0, i1 in T.grid(m, n):
                with T.block("T_full"):
                    ax0, ax1 = T.axis.remap("SS", [i0, i1])
                    T.reads(rxplaceholder[()])
                    T.writes(T_full[ax0, ax1])
                    T_full[ax0, ax1] = rxplaceholder[()]

    assert_structural_equal(LegalizeOps()(Before), Expected)


def test_full_like_casts_the_value_to_the_result_dtype():
    @I.ir_module
    class Before:
        @R.function
        def main(x: R.Tensor((2, 3), "int32"), v: R.Tensor((), "float32")):
            gv: R.Tensor((2, 3), "int32") = R.full_like(x, v)
            return gv

    @I.ir_module
    class Expected:
        @R.function
        def main(x: R.Tensor((2, 3), "int32"), v: R.Tensor((), "float32")):
            gv = R.call_tir(Expected.full, (v,), R.Tensor((2, 3), dtype="int32"))
            return gv

        @T.prim_func(private=True)
        def full(rxplaceholder: T.Buffer((), "float32"), T_full: T.Buffer((T.int64(2), T.int64(3)), "int32")):
            T.func_attr({"tir.noalias": True})
            for i0, i1 in T.grid(T.int64(2), T.int64(3)):
                with T.block("T_full"):
                    ax0, ax1 = T.axis.remap("SS", [i0, i1])
                    T.reads(rxplaceholder[()])
                    T.writes(T_full[ax0, ax1])
                    T_full[ax0, ax1] = T.Cast("int32", rxplaceholder[()])

    assert_structural_equal(LegalizeOps()(Before), Expected)


def test_constant_fill_value_is_inlined():
    @I.ir_module
    class Before:
        @R.function
        def main() -> R.Tensor((2, 3), "int32"):
            gv: R.Tensor((2, 3), "int32") = R.full((2, 3), R.const(3.5, "float32"), dtype="int32")
            return gv

    lowered = LegalizeOps()(Before)
    assert len(lowered["full"].params) == 1  # only the output: 3 is inside the kernel
    np.testing.assert_array_equal(run(Before), np.full((2, 3), 3, "int32"))


# -- numerics through the VM ----------------------------------------------------------------------
def _module():
    sn, sm = tir.Var("n", "int64"), tir.Var("m", "int64")
    x = relax.Var("x", tensor((sn, sm)))
    v = relax.Var("v", tensor((), "float32"))
    bb = relax.BlockBuilder()
    with bb.function("main", [x, v]):
        outs = [bb.emit(relax.op.zeros(relax.ShapeExpr([sn, sm]), "int32")),
                bb.emit(relax.op.ones(relax.ShapeExpr([sm]), "float32")),
                bb.emit(relax.op.full(relax.ShapeExpr([sn, 2]), v)),
                bb.emit(relax.op.zeros_like(x)),
                bb.emit(relax.op.ones_like(x, "int64")),
                bb.emit(relax.op.full_like(x, v, "int32"))]
        bb.emit_func_output(bb.emit(relax.Tuple(outs)))
    return bb.get()


@settings(max_examples=8, **SETTINGS)
@given(rows=st.integers(1, 5), cols=st.integers(1, 5), value=st.floats(-100, 100, width=32))
def test_match_numpy_on_llvm(rows, cols, value):
    x = np.zeros((rows, cols), "float32")
    v = np.array(value, "float32")
    got = call(built(("create", "all"), _module), x, v)
    want = [np.zeros((rows, cols), "int32"), np.ones(cols, "float32"),
            np.full((rows, 2), v, "float32"), np.zeros((rows, cols), "float32"),
            np.ones((rows, cols), "int64"), np.full((rows, cols), v).astype("int32")]
    for g, w in zip(got, want):
        assert g.dtype == w.dtype
        np.testing.assert_array_equal(g, w)
