"""AnnotateTIROpPattern: every PrimFunc gets the OpPatternKind its blocks show."""

import numpy as np
import pytest

import mlckit
from mlckit import relax, topi
from mlckit.ir import assert_structural_equal
from mlckit.relax.analysis.tir_op_pattern_kind import OpPatternKind, analyze_op_pattern_kind
from mlckit.relax.transform import AnnotateTIROpPattern
from mlckit.script import ir as I
from mlckit.script import tir as T

K = OpPatternKind


def _emit_te_module(*calls):
    """main(x: (4, 8), w: (6, 8), b: (6,)) emitting ``calls`` on the previous result."""
    x = relax.Var("x", relax.TensorStructInfo((4, 8), "float32"))
    w = relax.Var("w", relax.TensorStructInfo((6, 8), "float32"))
    b = relax.Var("b", relax.TensorStructInfo((6,), "float32"))
    bb = relax.BlockBuilder()
    with bb.function("main", [x, w, b]):
        with bb.dataflow():
            lv = bb.emit_te(topi.nn.dense, x, w)
            lv = bb.emit_te(topi.add, lv, b)
            lv = bb.emit_te(topi.nn.relu, lv)
            lv = bb.emit_te(topi.transpose, lv)
            gv = bb.emit_output(lv)
        bb.emit_func_output(gv)
    return bb.get()


def test_mlp_kernels_get_their_kinds():
    mod = AnnotateTIROpPattern()(_emit_te_module())
    kinds = {gv.name_hint: f.attrs["op_pattern"] for gv, f in mod.functions.items()
             if "op_pattern" in f.attrs}
    # dense is a multiply-add reduction; the bias add has one element-wise load beside the
    # broadcast bias, which makes it element-wise (as TVM's test_annotate_opkind_bias_add)
    assert kinds == {"dense": K.kOutEWiseFusable, "add": K.kElemWise, "relu": K.kElemWise,
                     "transpose": K.kInjective}


def test_annotated_kernel_prints_as_tvm():
    @I.ir_module
    class Before:
        @T.prim_func
        def relu(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
            for i in range(4):
                with T.block("B"):
                    vi = T.axis.spatial(4, i)
                    B[vi] = T.max(A[vi], T.float32(0))

    @I.ir_module
    class Expected:
        @T.prim_func
        def relu(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
            T.func_attr({"op_pattern": 0})
            for i in range(4):
                with T.block("B"):
                    vi = T.axis.spatial(4, i)
                    B[vi] = T.max(A[vi], T.float32(0))

    assert_structural_equal(AnnotateTIROpPattern()(Before), Expected)
    assert "op_pattern" not in Before["relu"].attrs  # the input module is unchanged


def test_matmul_with_casts_is_out_ewise_fusable():
    @T.prim_func
    def matmul(A: T.Buffer((8, 8), "float16"), B: T.Buffer((8, 8), "float16"),
               C: T.Buffer((8, 8), "float32")):
        for i, j, k in T.grid(8, 8, 8):
            with T.block("matmul"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    C[vi, vj] = T.float32(0)
                C[vi, vj] = C[vi, vj] + T.Cast("float32", A[vi, vk]) * T.Cast("float32", B[vk, vj])

    assert analyze_op_pattern_kind(matmul) == K.kOutEWiseFusable


def test_row_sum_is_comm_reduce():
    @T.prim_func
    def row_sum(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16,), "float32")):
        for i, j in T.grid(16, 16):
            with T.block("sum"):
                vi, vj = T.axis.remap("SR", [i, j])
                with T.init():
                    B[vi] = T.float32(0)
                B[vi] = B[vi] + A[vi, vj]

    assert analyze_op_pattern_kind(row_sum) == K.kCommReduce


def test_pure_broadcast_and_injective_and_unit_dims():
    @T.prim_func
    def broadcast(A: T.Buffer((4, 4), "float32"), B: T.Buffer((4, 4, 4, 4), "float32")):
        for i0, j0, i1, j1 in T.grid(4, 4, 4, 4):
            with T.block("b"):
                vi0, vj0, vi1, vj1 = T.axis.remap("SSSS", [i0, j0, i1, j1])
                B[vi0, vj0, vi1, vj1] = A[vj0, vj1]

    @T.prim_func
    def unflatten(A: T.Buffer((16,), "float32"), B: T.Buffer((4, 4), "float32")):
        for i, j in T.grid(4, 4):
            with T.block("u"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi * 4 + vj]

    @T.prim_func
    def add_unit(A: T.Buffer((2, 3), "float32"), B: T.Buffer((2, 1), "float32"),
                 C: T.Buffer((2, 3), "float32")):
        for i, j in T.grid(2, 3):
            with T.block("c"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = A[vi, vj] + B[vi, 0]

    assert analyze_op_pattern_kind(broadcast) == K.kBroadcast
    assert analyze_op_pattern_kind(unflatten) == K.kInjective
    assert analyze_op_pattern_kind(add_unit) == K.kElemWise


def test_reduce_then_elementwise_output_is_out_ewise_fusable():
    """Softmax's rule: a reduction followed by an element-wise block writing the output."""

    @T.prim_func
    def normalize(A: T.Buffer((4, 4), "float32"), B: T.Buffer((4, 4), "float32")):
        total = T.alloc_buffer((4,), "float32")
        for i, k in T.grid(4, 4):
            with T.block("total"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    total[vi] = T.float32(0)
                total[vi] = total[vi] + A[vi, vk]
        for i, j in T.grid(4, 4):
            with T.block("norm"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] / total[vi]

    assert analyze_op_pattern_kind(normalize) == K.kOutEWiseFusable


def test_two_stores_at_different_indices_and_no_store_are_opaque():
    @T.prim_func
    def two_stores(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
        with T.block("s"):
            B[0] = A[0]
            B[1] = A[1]

    @T.prim_func
    def no_store(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
        for i in range(4):
            with T.block("e"):
                vi = T.axis.spatial(4, i)
                T.evaluate(0)

    assert analyze_op_pattern_kind(two_stores) == K.kOpaque
    assert analyze_op_pattern_kind(no_store) == K.kOpaque


def test_existing_nonzero_pattern_is_kept():
    @I.ir_module
    class Mod:
        @T.prim_func
        def copy(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
            T.func_attr({"op_pattern": 8})
            for i in range(4):
                with T.block("B"):
                    vi = T.axis.spatial(4, i)
                    B[vi] = A[vi]

    assert AnnotateTIROpPattern()(Mod)["copy"].attrs["op_pattern"] == K.kOpaque


@pytest.mark.parametrize("target", ["llvm", "lnumpy"])
def test_annotation_does_not_change_results(target):
    mod = _emit_te_module()
    rng = np.random.default_rng(0)
    x, w, b = (rng.standard_normal(s).astype("float32") for s in [(4, 8), (6, 8), (6,)])
    vm = relax.VirtualMachine(relax.build(AnnotateTIROpPattern()(mod), target), mlckit.cpu())
    expected = np.maximum(x @ w.T + b, 0).T
    np.testing.assert_allclose(vm["main"](x, w, b).numpy(), expected, rtol=1e-5, atol=1e-5)


def test_relax_functions_are_left_alone():
    mod = _emit_te_module()
    out = AnnotateTIROpPattern()(mod)
    assert out["main"] is mod["main"]
