"""relax.op.matmul and relax.op.linear: TVM's shape rules, its legalized TIR, NumPy's
results, and the strategy's choice between the generic, tiled and library
implementations."""

import logging

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mlckit import relax, tir
from mlckit.error import TVMError
from mlckit.ir import assert_structural_equal
from mlckit.ir.diagnostics import DiagnosticError
from mlckit.relax.op.linear_algebra import LIBRARY_MIN_FLOPS
from mlckit.relax.transform import LegalizeOps
from mlckit.script import from_source
from mlckit.script import ir as I
from mlckit.script import relax as R
from mlckit.script import tir as T

from .numerics import TARGETS, call, random, run, vm_of


def tensor(shape, dtype="float32"):
    return relax.Var("x", relax.TensorStructInfo(shape, dtype))


def infer(expr):
    bb = relax.BlockBuilder()
    return bb.normalize(expr).struct_info


def assert_sinfo(sinfo, shape, dtype="float32"):
    assert_structural_equal(sinfo, relax.TensorStructInfo(shape, dtype))


# -- struct info ------------------------------------------------------------------------------
@pytest.mark.parametrize("s1, s2, out", [
    ((3, 4), (4, 5), (3, 5)),
    ((4,), (2, 3, 4, 5), (2, 3, 5)),           # a 1-D lhs is a row, dropped again
    ((2, 3, 4, 5), (5,), (2, 3, 4)),           # a 1-D rhs is a column, dropped again
    ((4,), (4,), ()),
    ((2, 1, 3, 4), (6, 4, 5), (2, 6, 3, 5)),   # batch dims broadcast
])
def test_matmul_shapes_follow_numpy(s1, s2, out):
    assert_sinfo(infer(relax.op.matmul(tensor(s1), tensor(s2))), out)


def test_matmul_of_symbolic_shapes_broadcasts_unit_batch_dims():
    b, m, k, n = (tir.Var(v, "int64") for v in "bmkn")
    sinfo = infer(relax.op.matmul(tensor((b, 1, m, k)), tensor((1, 7, k, n))))
    assert_sinfo(sinfo, (b, 7, m, n))


def test_matmul_out_dtype_sets_the_result_dtype():
    sinfo = infer(relax.op.matmul(tensor((2, 3), "float16"), tensor((3, 4), "float16"),
                                  out_dtype="float32"))
    assert_sinfo(sinfo, (2, 4), "float32")


def test_matmul_of_unknown_rank_has_unknown_rank():
    x = relax.Var("x", relax.TensorStructInfo(None, "float32", -1))
    sinfo = infer(relax.op.matmul(x, tensor((3, 4))))
    assert (sinfo.ndim, sinfo.dtype) == (-1, "float32")


@pytest.mark.parametrize("s1, s2, words", [
    ((2, 3), (4, 5), ["relax.matmul", "x1 (2, 3)", "x2 (4, 5)", "3 columns", "4 rows"]),
    ((2, 3, 4), (5, 4, 6), ["relax.matmul", "batch dims of x1 (2,)", "batch dims of x2 (5,)"]),
    ((), (3,), ["relax.matmul", "x1 is a 0-d tensor"]),
])
def test_matmul_errors_name_the_op_the_arguments_and_the_shapes(s1, s2, words):
    with pytest.raises(TVMError) as err:
        infer(relax.op.matmul(tensor(s1), tensor(s2)))
    for word in words:
        assert word in str(err.value)


def test_matmul_of_different_dtypes_is_a_type_error():
    with pytest.raises(TypeError, match="x1 .float32. and x2 .float16."):
        infer(relax.op.matmul(tensor((2, 3)), tensor((3, 4), "float16")))


def test_a_bad_matmul_in_a_script_is_reported_at_its_line():
    with pytest.raises(DiagnosticError) as err:
        @I.ir_module
        class Bad:  # noqa: F841
            @R.function
            def main(x: R.Tensor((2, 3), "float32"), y: R.Tensor((4, 5), "float32")):
                gv = R.matmul(x, y)
                return gv

    text = str(err.value)
    assert "gv = R.matmul(x, y)" in text and "x1 (2, 3)" in text and "x2 (4, 5)" in text


def test_matmul_prints_and_parses_as_tvm():
    @I.ir_module
    class Module:
        @R.function
        def main(x: R.Tensor((2, 3), "float16"), y: R.Tensor((3, 4), "float16")):
            gv = R.matmul(x, y, out_dtype="float32")
            return gv

    text = Module.script()
    assert 'R.matmul(x, y, out_dtype="float32")' in text
    assert_structural_equal(from_source(text), Module)


# -- legalization (TVM's expected TIR) ------------------------------------------------------------
def test_matmul_legalizes_to_tvms_primfunc_with_casts_and_broadcast_batch():
    @I.ir_module
    class Matmul:
        @R.function
        def main(x: R.Tensor((2, 3, 4, 5), "float16"), y: R.Tensor((6, 2, 3, 5, 7), "float16")):
            gv: R.Tensor((6, 2, 3, 4, 7), "float32") = R.matmul(x, y, out_dtype="float32")
            return gv

    @I.ir_module
    class Expected:
        @R.function
        def main(x: R.Tensor((2, 3, 4, 5), "float16"), y: R.Tensor((6, 2, 3, 5, 7), "float16")):
            gv = R.call_tir(Expected.matmul, (x, y), R.Tensor((6, 2, 3, 4, 7), dtype="float32"))
            return gv

        @T.prim_func(private=True)
        def matmul(rxplaceholder: T.Buffer((T.int64(2), T.int64(3), T.int64(4), T.int64(5)), "float16"),
                   rxplaceholder_1: T.Buffer((T.int64(6), T.int64(2), T.int64(3), T.int64(5), T.int64(7)), "float16"),
                   matmul: T.Buffer((T.int64(6), T.int64(2), T.int64(3), T.int64(4), T.int64(7)), "float32")):
            T.func_attr({"tir.noalias": True})
            for i0, i1, i2, i3, i4, i5 in T.grid(T.int64(6), T.int64(2), T.int64(3), T.int64(4), T.int64(7), T.int64(5)):
                with T.block("matmul"):
                    i0_1, i1_1, i2_1, i3_1, i4_1, k = T.axis.remap("SSSSSR", [i0, i1, i2, i3, i4, i5])
                    T.reads(rxplaceholder[i1_1, i2_1, i3_1, k], rxplaceholder_1[i0_1, i1_1, i2_1, k, i4_1])
                    T.writes(matmul[i0_1, i1_1, i2_1, i3_1, i4_1])
                    with T.init():
                        matmul[i0_1, i1_1, i2_1, i3_1, i4_1] = T.float32(0)
                    matmul[i0_1, i1_1, i2_1, i3_1, i4_1] = matmul[i0_1, i1_1, i2_1, i3_1, i4_1] + T.Cast("float32", rxplaceholder[i1_1, i2_1, i3_1, k]) * T.Cast("float32", rxplaceholder_1[i0_1, i1_1, i2_1, k, i4_1])

    assert_structural_equal(LegalizeOps()(Matmul), Expected)


def test_symbolic_matmul_legalizes_to_tvms_primfunc():
    @I.ir_module
    class Matmul:
        @R.function
        def main(x: R.Tensor(("b", 1, "m", "k"), "float32"),
                 y: R.Tensor(("a", 1, "c", "k", "n"), "float32")):
            gv = R.matmul(x, y)
            return gv

    @I.ir_module
    class Expected:
        @R.function
        def main(x: R.Tensor(("b", 1, "m", "k"), "float32"),
                 y: R.Tensor(("a", 1, "c", "k", "n"), "float32")):
            a, b, c, m, n = T.int64(), T.int64(), T.int64(), T.int64(), T.int64()
            gv = R.call_tir(Expected.matmul, (x, y), R.Tensor((a, b, c, m, n), dtype="float32"))
            return gv

        @T.prim_func(private=True)
        def matmul(var_x: T.handle, var_y: T.handle, var_matmul: T.handle):
            T.func_attr({"tir.noalias": True})
            a, b, c, k, m, n = T.int64(), T.int64(), T.int64(), T.int64(), T.int64(), T.int64()
            x = T.match_buffer(var_x, (b, T.int64(1), m, k))
            y = T.match_buffer(var_y, (a, T.int64(1), c, k, n))
            matmul = T.match_buffer(var_matmul, (a, b, c, m, n))
            for i0, i1, i2, i3, i4, i5 in T.grid(a, b, c, m, n, k):
                with T.block("matmul"):
                    v0, v1, v2, v3, v4, vk = T.axis.remap("SSSSSR", [i0, i1, i2, i3, i4, i5])
                    T.reads(x[v1, T.int64(0), v3, vk], y[v0, T.int64(0), v2, vk, v4])
                    T.writes(matmul[v0, v1, v2, v3, v4])
                    with T.init():
                        matmul[v0, v1, v2, v3, v4] = T.float32(0)
                    matmul[v0, v1, v2, v3, v4] = matmul[v0, v1, v2, v3, v4] + x[v1, T.int64(0), v3, vk] * y[v0, T.int64(0), v2, vk, v4]

    assert_structural_equal(LegalizeOps()(Matmul), Expected)


# -- numerics -----------------------------------------------------------------------------------
@I.ir_module
class BatchedMatmul:
    @R.function
    def main(x: R.Tensor(("b", "m", "k"), "float32"), y: R.Tensor(("k", "n"), "float32")):
        gv = R.matmul(x, y)
        return gv


@pytest.mark.parametrize("target", TARGETS)
def test_symbolic_batched_matmul_equals_numpy_for_any_shape(target):
    vm = vm_of(BatchedMatmul, target)

    @settings(max_examples=15, deadline=None)
    @given(st.integers(1, 3), st.integers(1, 6), st.integers(1, 6), st.integers(1, 6))
    def check(b, m, k, n):
        x, y = random((b, m, k), seed=b * m), random((k, n), seed=k * n)
        np.testing.assert_allclose(call(vm, x, y), x @ y, rtol=1e-5, atol=1e-6)

    check()


@pytest.mark.parametrize("s1, s2", [((5,), (2, 5, 3)), ((2, 3, 4), (4,)), ((4,), (4,)),
                                    ((3, 1, 2, 4), (5, 4, 6))])
def test_matmul_of_vectors_and_broadcast_batches_equals_numpy(s1, s2):
    x, y = relax.Var("x", relax.TensorStructInfo(s1, "float32")), \
        relax.Var("y", relax.TensorStructInfo(s2, "float32"))
    bb = relax.BlockBuilder()
    with bb.function("main", [x, y]):
        out = bb.emit(relax.op.matmul(x, y))
        bb.emit_func_output(out)
    a, b = random(s1, seed=1), random(s2, seed=2)
    np.testing.assert_allclose(run(bb.get(), a, b, target="lnumpy"), np.matmul(a, b),
                               rtol=1e-5, atol=1e-6)


def test_matmul_out_dtype_accumulates_in_the_wider_type():
    @I.ir_module
    class Module:
        @R.function
        def main(x: R.Tensor((4, 8), "float16"), y: R.Tensor((8, 3), "float16")):
            gv = R.matmul(x, y, out_dtype="float32")
            return gv

    a, b = random((4, 8), "float16"), random((8, 3), "float16", seed=3)
    got = run(Module, a, b, target="lnumpy")
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, a.astype("float32") @ b.astype("float32"), rtol=1e-5)


# -- linear ---------------------------------------------------------------------------------------
def test_linear_is_matmul_of_the_transposed_weight_plus_bias():
    x, w, b = tensor((2, 4)), tensor((3, 4)), tensor((3,))
    expected = relax.op.add(relax.op.matmul(x, relax.op.permute_dims(w)), b)
    assert_structural_equal(relax.op.linear(x, w, b), expected)
    assert_structural_equal(relax.op.linear(x, w),
                            relax.op.matmul(x, relax.op.permute_dims(w)))


def test_linear_equals_numpy():
    x, w, b = tensor((2, 4)), tensor((3, 4)), tensor((3,))
    bb = relax.BlockBuilder()
    with bb.function("main", [x, w, b]):
        bb.emit_func_output(bb.emit(relax.op.linear(x, w, b)))
    a, wv, bv = random((2, 4)), random((3, 4), seed=1), random((3,), seed=2)
    for target in TARGETS:
        np.testing.assert_allclose(run(bb.get(), a, wv, bv, target=target), a @ wv.T + bv,
                                   rtol=1e-5, atol=1e-6)


# -- strategy -------------------------------------------------------------------------------------
def matmul_module(m, k, n):
    x, y = tensor((m, k)), tensor((k, n))
    bb = relax.BlockBuilder()
    with bb.function("main", [x, y]):
        bb.emit_func_output(bb.emit(relax.op.matmul(x, y)))
    return bb.get()


def legalize_logged(mod, caplog):
    with caplog.at_level(logging.INFO, logger="mlckit.strategy"):
        return LegalizeOps()(mod), caplog.text


def test_a_small_matmul_that_does_not_tile_uses_the_generic_implementation(caplog):
    mod, log = legalize_logged(matmul_module(3, 5, 7), caplog)
    assert "relax.matmul -> matmul.generic (level 10) for target llvm" in log
    a, b = random((3, 5)), random((5, 7), seed=1)
    np.testing.assert_allclose(run(matmul_module(3, 5, 7), a, b), a @ b, rtol=1e-5, atol=1e-6)


def test_a_small_tileable_matmul_uses_the_tiled_schedule_on_llvm(caplog):
    mod, log = legalize_logged(matmul_module(16, 24, 32), caplog)
    assert "relax.matmul -> matmul.tiled (level 15) for target llvm" in log
    func = mod["matmul"]
    text = func.script()
    assert 'scope="local"' in text and "T.vectorized" in text and "T.unroll" in text
    a, b = random((16, 24)), random((24, 32), seed=1)
    np.testing.assert_allclose(run(matmul_module(16, 24, 32), a, b), a @ b, rtol=1e-5, atol=1e-6)


def test_a_single_row_is_tiled_one_row_at_a_time(caplog):
    mod, log = legalize_logged(matmul_module(1, 24, 32), caplog)
    assert "relax.matmul -> matmul.tiled (level 15) for target llvm" in log
    assert "T.vectorized(T.int64(32))" in mod["matmul"].script()
    a, b = random((1, 24)), random((24, 32), seed=1)
    np.testing.assert_allclose(run(matmul_module(1, 24, 32), a, b), a @ b, rtol=1e-5, atol=1e-6)


def test_the_tiled_schedule_is_for_llvm_only(caplog):
    from mlckit.target import Target

    with Target("c"):
        _, log = legalize_logged(matmul_module(16, 24, 32), caplog)
    assert "relax.matmul -> matmul.generic (level 10) for target c" in log


def test_a_large_matmul_calls_numpy_through_the_library(caplog):
    n = 64
    assert n * n * n >= LIBRARY_MIN_FLOPS
    mod, log = legalize_logged(matmul_module(n, n, n), caplog)
    assert "relax.matmul -> matmul (level 20) for target llvm" in log
    assert 'R.call_dps_packed("mlckit.lib.matmul", (x, x' in mod.script() or \
        "mlckit.lib.matmul" in mod.script()
    assert not any(isinstance(f, tir.PrimFunc) for f in mod.functions.values())
    a, b = random((n, n)), random((n, n), seed=1)
    for target in TARGETS:
        np.testing.assert_allclose(run(matmul_module(n, n, n), a, b, target=target), a @ b,
                                   rtol=1e-4, atol=1e-5)


def test_a_large_batched_matmul_with_out_dtype_uses_the_library():
    @I.ir_module
    class Module:
        @R.function
        def main(x: R.Tensor((2, 64, 64), "float16"), y: R.Tensor((64, 64), "float16")):
            gv = R.matmul(x, y, out_dtype="float32")
            return gv

    assert "mlckit.lib.matmul" in LegalizeOps()(Module).script()
    a, b = random((2, 64, 64), "float16"), random((64, 64), "float16", seed=4)
    got = run(Module, a, b)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, a.astype("float32") @ b.astype("float32"), rtol=1e-3)
