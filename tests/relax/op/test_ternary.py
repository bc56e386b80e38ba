"""ewise_fma: x1 * x2 + x3 on three tensors of one shape and dtype (no broadcasting, as
TVM); mlckit lowers it to one PrimFunc (TVM v0.23 has no legalization for it)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mlckit import relax, tir
from mlckit.ir import Op, assert_structural_equal
from mlckit.relax.op.op_common import OpTypeError
from mlckit.relax.transform import LegalizeOps
from mlckit.script import ir as I
from mlckit.script import relax as R
from mlckit.script import tir as T

from .helpers import SETTINGS, built, call, infer, tensor

n = tir.Var("n", "int64")


def test_constructor_and_inference():
    x, y, z = (relax.Var(v, tensor((n, 4))) for v in "xyz")
    call_expr = relax.op.ewise_fma(x, y, z)
    assert call_expr.op is Op.get("relax.ewise_fma") and call_expr.args == [x, y, z]
    assert_structural_equal(infer(call_expr), tensor((n, 4)))


def test_unknown_shape_keeps_the_rank_and_unknown_dtype_propagates():
    x = relax.Var("x", tensor(None, "float32", 2))
    y = relax.Var("y", tensor((3, 4)))
    assert_structural_equal(infer(relax.op.ewise_fma(x, y, y)), tensor(None, "float32", 2))
    u = relax.Var("u", tensor((3, 4), ""))
    assert_structural_equal(infer(relax.op.ewise_fma(u, y, y)), tensor((3, 4), ""))


def test_shape_rank_and_dtype_mismatches_name_the_arguments():
    x = relax.Var("x", tensor((3, 4)))
    with pytest.raises(ValueError, match=r"relax.ewise_fma: the 3 arguments must have the same "
                                         r"shape, but they are x1 \(3, 4\), x2 \(3, 4\), x3 "
                                         r"\(3, 5\)"):
        infer(relax.op.ewise_fma(x, x, relax.Var("w", tensor((3, 5)))))
    with pytest.raises(ValueError, match="same number of dimensions, but x1 has 2, x2 has 2, "
                                         "x3 has 1"):
        infer(relax.op.ewise_fma(x, x, relax.Var("v", tensor((4,)))))
    with pytest.raises(OpTypeError, match="same dtype, but they are x1 float32, x2 float32, "
                                          "x3 float16"):
        infer(relax.op.ewise_fma(x, x, relax.Var("h", tensor((3, 4), "float16"))))


def test_legalizes_to_one_fused_kernel():
    @I.ir_module
    class Before:
        @R.function
        def main(x: R.Tensor((2, 3), "float32"), y: R.Tensor((2, 3), "float32"),
                 z: R.Tensor((2, 3), "float32")):
            gv = R.ewise_fma(x, y, z)
            return gv

    @I.ir_module
    class Expected:
        @R.function
        def main(x: R.Tensor((2, 3), "float32"), y: R.Tensor((2, 3), "float32"),
                 z: R.Tensor((2, 3), "float32")):
            gv = R.call_tir(Expected.ewise_fma, (x, y, z), R.Tensor((2, 3), dtype="float32"))
            return gv

        @T.prim_func(private=True)
        def ewise_fma(x: T.Buffer((T.int64(2), T.int64(3)), "float32"),
                      y: T.Buffer((T.int64(2), T.int64(3)), "float32"),
                      z: T.Buffer((T.int64(2), T.int64(3)), "float32"),
                      T_ewise_fma: T.Buffer((T.int64(2), T.int64(3)), "float32")):
            T.func_attr({"tir.noalias": True})
            for ax0, ax1 in T.grid(T.int64(2), T.int64(3)):
                with T.block("T_ewise_fma"):
                    v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
                    T.reads(x[v_ax0, v_ax1], y[v_ax0, v_ax1], z[v_ax0, v_ax1])
                    T.writes(T_ewise_fma[v_ax0, v_ax1])
                    T_ewise_fma[v_ax0, v_ax1] = x[v_ax0, v_ax1] * y[v_ax0, v_ax1] + z[v_ax0, v_ax1]

    assert_structural_equal(LegalizeOps()(Before), Expected)


def _module():
    sn = tir.Var("n", "int64")
    params = [relax.Var(v, tensor((sn, 3))) for v in "xyz"]
    bb = relax.BlockBuilder()
    with bb.function("main", params):
        bb.emit_func_output(bb.emit(relax.op.ewise_fma(*params)))
    return bb.get()


@settings(max_examples=8, **SETTINGS)
@given(rows=st.integers(1, 9), seed=st.integers(0, 2**16))
def test_matches_numpy_on_llvm(rows, seed):
    rng = np.random.default_rng(seed)
    x, y, z = (rng.standard_normal((rows, 3)).astype("float32") for _ in range(3))
    got = call(built(("ternary", "ewise_fma"), _module), x, y, z)
    np.testing.assert_allclose(got, x * y + z, rtol=1e-5, atol=1e-6)


def test_the_course_rewrite_of_multiply_add_into_ewise_fma_runs():
    import mlckit
    from mlckit.ir import IRModule

    @I.ir_module
    class MyModule:
        @R.function
        def main(x: R.Tensor((3, 4), "float32"), y: R.Tensor((3, 4), "float32")):
            with R.dataflow():
                lv0 = relax.op.multiply(x, y)
                gv0 = relax.op.add(lv0, y)
                R.output(gv0)
            return gv0

    @relax.expr_functor.mutator
    class EwiseFMARewriter(relax.PyExprMutator):
        def visit_call_(self, call):
            call = self.visit_expr_post_order(call)
            if call.op != Op.get("relax.add"):
                return call
            value = self.lookup_binding(call.args[0])
            if not isinstance(value, relax.Call) or value.op != Op.get("relax.multiply"):
                return call
            return relax.Call(Op.get("relax.ewise_fma"),
                              [value.args[0], value.args[1], call.args[1]], None, None)

    fused = relax.analysis.remove_all_unused(EwiseFMARewriter().visit_expr(MyModule["main"]))
    assert 'gv0: R.Tensor((3, 4), dtype="float32") = R.ewise_fma(x, y, y)' in fused.script()
    assert "R.multiply" not in fused.script()
    ex = relax.build(IRModule({"main": fused}), "llvm")
    x, y = np.random.rand(3, 4).astype("float32"), np.random.rand(3, 4).astype("float32")
    got = relax.VirtualMachine(ex, mlckit.cpu())["main"](mlckit.nd.array(x), mlckit.nd.array(y))
    np.testing.assert_allclose(got.numpy(), x * y + y, rtol=1e-6)
