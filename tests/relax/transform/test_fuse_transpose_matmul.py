"""FuseTransposeMatmul: ``matmul(x, permute_dims(w))`` becomes one call reading ``w`` in
place — TVM's ``NT_matmul`` kernel, the llvm kernel with the columns innermost, or NumPy's
BLAS on a transposed view for large problems — chosen by the strategy's ``transposed_b``
form; the transpose goes unless something else uses it."""

import logging

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mlckit
from mlckit import relax
from mlckit.ir import assert_structural_equal
from mlckit.relax.transform import FuseTransposeMatmul
from mlckit.script import ir as I
from mlckit.script import relax as R
from mlckit.script import tir as T
from mlckit.target import Target


@I.ir_module
class Batched:
    @R.function
    def main(x: R.Tensor((2, 3, 4), "float32"), w: R.Tensor((2, 5, 4), "float32")):
        with R.dataflow():
            lv = R.permute_dims(w, axes=[0, 2, 1])
            gv = R.matmul(x, lv)
            R.output(gv)
        return gv


def test_a_small_batched_product_becomes_tvms_nt_matmul():
    @I.ir_module
    class Expected:
        @T.prim_func(private=True)
        def NT_matmul(x: T.Buffer((T.int64(2), T.int64(3), T.int64(4)), "float32"),
                      w: T.Buffer((T.int64(2), T.int64(5), T.int64(4)), "float32"),
                      NT_matmul: T.Buffer((T.int64(2), T.int64(3), T.int64(5)), "float32")):
            T.func_attr({"tir.noalias": True})
            for i0, i1, i2, k in T.grid(T.int64(2), T.int64(3), T.int64(5), T.int64(4)):
                with T.block("NT_matmul"):
                    v_i0, v_i1, v_i2, v_k = T.axis.remap("SSSR", [i0, i1, i2, k])
                    T.reads(x[v_i0, v_i1, v_k], w[v_i0, v_i2, v_k])
                    T.writes(NT_matmul[v_i0, v_i1, v_i2])
                    with T.init():
                        NT_matmul[v_i0, v_i1, v_i2] = T.float32(0)
                    NT_matmul[v_i0, v_i1, v_i2] = (NT_matmul[v_i0, v_i1, v_i2]
                                                   + x[v_i0, v_i1, v_k] * w[v_i0, v_i2, v_k])

        @R.function
        def main(x: R.Tensor((2, 3, 4), "float32"), w: R.Tensor((2, 5, 4), "float32")):
            cls = Expected
            with R.dataflow():
                gv = R.call_tir(cls.NT_matmul, (x, w), out_sinfo=R.Tensor((2, 3, 5), "float32"))
                R.output(gv)
            return gv

    assert_structural_equal(FuseTransposeMatmul()(Batched), Expected)


def _linear(m: int, n: int, k: int):
    @I.ir_module
    class Linear:
        @R.function
        def main(x: R.Tensor((m, k), "float32"), w: R.Tensor((n, k), "float32")):
            with R.dataflow():
                lv = R.permute_dims(w)
                gv = R.matmul(x, lv)
                R.output(gv)
            return gv

    return Linear


@pytest.mark.parametrize("m, n, k, chosen", [
    (1, 10, 128, "matmul_nt.j_inner"),       # the MLP's second layer at batch 1
    (1, 128, 784, "matmul_nt"),              # its first layer: BLAS
    (64, 10, 128, "matmul_nt"),
])
def test_the_strategy_picks_by_size_on_llvm(caplog, m, n, k, chosen):
    with caplog.at_level(logging.INFO, logger="mlckit.strategy"), Target("llvm"):
        mod = FuseTransposeMatmul()(_linear(m, n, k))
    assert f"relax.matmul (transposed_b) -> {chosen} (level" in caplog.text
    assert "R.permute_dims" not in mod.script()


def test_the_library_call_reads_the_weight_untransposed():
    with Target("llvm"):
        mod = FuseTransposeMatmul()(_linear(64, 10, 128))
    assert 'R.call_dps_packed("mlckit.lib.matmul_nt", (x, w)' in mod.script()


def test_the_j_inner_kernel_puts_the_columns_innermost():
    @T.prim_func(private=True)
    def expected(x: T.Buffer((T.int64(2), T.int64(16)), "float32"),
                 w: T.Buffer((T.int64(10), T.int64(16)), "float32"),
                 NT_matmul: T.Buffer((T.int64(2), T.int64(10)), "float32")):
        T.func_attr({"tir.noalias": True})
        for i0 in range(T.int64(2)):
            for i1_init in range(T.int64(10)):
                with T.block("NT_matmul_init"):
                    v_i0, v_i1 = T.axis.remap("SS", [i0, i1_init])
                    T.reads()
                    T.writes(NT_matmul[v_i0, v_i1])
                    NT_matmul[v_i0, v_i1] = T.float32(0)
            for k, i1 in T.grid(T.int64(16), T.int64(10)):
                with T.block("NT_matmul_update"):
                    v_i0, v_i1, v_k = T.axis.remap("SSR", [i0, i1, k])
                    T.reads(NT_matmul[v_i0, v_i1], x[v_i0, v_k], w[v_i1, v_k])
                    T.writes(NT_matmul[v_i0, v_i1])
                    NT_matmul[v_i0, v_i1] = NT_matmul[v_i0, v_i1] + x[v_i0, v_k] * w[v_i1, v_k]

    with Target("llvm"):
        mod = FuseTransposeMatmul()(_linear(2, 10, 16))
    assert_structural_equal(mod["NT_matmul"], expected)


@pytest.mark.parametrize("target", ["llvm", "lnumpy"])
@pytest.mark.parametrize("m, n, k", [(1, 10, 128), (3, 7, 5), (64, 10, 128), (1, 128, 784)])
def test_results_equal_numpy_through_the_default_pipeline(target, m, n, k):
    rng = np.random.default_rng(m * n * k)
    x = rng.standard_normal((m, k)).astype("float32")
    w = rng.standard_normal((n, k)).astype("float32")
    ex = relax.build(_linear(m, n, k), target,
                     relax_pipeline=relax.get_default_pipeline(Target(target)))
    assert not any(name.startswith("transpose") for name in ex.kernels)
    got = relax.VirtualMachine(ex, mlckit.cpu())["main"](x, w).numpy()
    np.testing.assert_allclose(got, x @ w.T, rtol=1e-4, atol=1e-4)


def test_batched_results_equal_numpy():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 4)).astype("float32")
    w = rng.standard_normal((2, 5, 4)).astype("float32")
    ex = relax.build(Batched, "llvm", relax_pipeline=relax.get_default_pipeline("llvm"))
    got = relax.VirtualMachine(ex, mlckit.cpu())["main"](x, w).numpy()
    np.testing.assert_allclose(got, x @ np.swapaxes(w, 1, 2), rtol=1e-5, atol=1e-5)


def test_a_transpose_used_elsewhere_stays():
    @I.ir_module
    class Shared:
        @R.function
        def main(x: R.Tensor((2, 4), "float32"), w: R.Tensor((3, 4), "float32")):
            with R.dataflow():
                lv = R.permute_dims(w)
                lv1 = R.matmul(x, lv)
                gv = (lv1, lv)
                R.output(gv)
            return gv

    text = FuseTransposeMatmul()(Shared).script()
    assert "R.permute_dims(w" in text and "NT_matmul" in text


def test_other_permutations_are_left_alone():
    @I.ir_module
    class Other:
        @R.function
        def main(x: R.Tensor((2, 4, 3), "float32"), w: R.Tensor((4, 3, 2), "float32")):
            with R.dataflow():
                lv = R.permute_dims(w, axes=[2, 1, 0])
                gv = R.matmul(x, lv)
                R.output(gv)
            return gv

    assert_structural_equal(FuseTransposeMatmul()(Other), Other)


def test_a_constant_weight_is_read_in_place_too():
    w = np.random.default_rng(5).standard_normal((3, 4)).astype("float32")
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorStructInfo((2, 4), "float32"))
    with bb.function("main", [x]):
        with bb.dataflow():
            lv = bb.emit(relax.op.permute_dims(relax.const(w)))
            gv = bb.emit_output(relax.op.matmul(x, lv))
        bb.emit_func_output(gv)
    mod = FuseTransposeMatmul()(bb.get())
    assert "R.permute_dims" not in mod.script() and "NT_matmul" in mod.script()
    ex = relax.build(mod, "llvm")
    xv = np.random.default_rng(6).standard_normal((2, 4)).astype("float32")
    got = relax.VirtualMachine(ex, mlckit.cpu())["main"](xv).numpy()
    np.testing.assert_allclose(got, xv @ w.T, rtol=1e-5, atol=1e-5)


@settings(max_examples=20, deadline=None, derandomize=True, database=None)
@given(batch=st.sampled_from([(), (2,), (1, 3)]), m=st.integers(1, 5), n=st.integers(1, 40),
       k=st.integers(1, 40), shared_batch=st.booleans())
def test_random_transposed_products_equal_numpy_on_lnumpy(batch, m, n, k, shared_batch):
    """Any ``x @ permute_dims(w)`` with the last two axes swapped (batched or not, ``w``'s
    batch dims equal to ``x``'s or absent) through the lnumpy default pipeline: the kernel
    or the library the strategy picks equals NumPy."""
    w_batch = batch if shared_batch else ()
    x_shape, w_shape = (*batch, m, k), (*w_batch, n, k)
    axes = [*range(len(w_batch)), len(w_batch) + 1, len(w_batch)]
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorStructInfo(x_shape, "float32"))
    w = relax.Var("w", relax.TensorStructInfo(w_shape, "float32"))
    with bb.function("main", [x, w]):
        with bb.dataflow():
            lv = bb.emit(relax.op.permute_dims(w, axes))
            gv = bb.emit_output(relax.op.matmul(x, lv))
        bb.emit_func_output(gv)
    ex = relax.build(bb.get(), "lnumpy", relax_pipeline=relax.get_default_pipeline("lnumpy"))
    assert not any(name.startswith("transpose") for name in ex.kernels)
    rng = np.random.default_rng(m + 7 * n + 13 * k)
    xv = rng.standard_normal(x_shape).astype("float32")
    wv = rng.standard_normal(w_shape).astype("float32")
    got = relax.VirtualMachine(ex, mlckit.cpu())["main"](xv, wv).numpy()
    np.testing.assert_allclose(got, xv @ np.swapaxes(wv, -1, -2), rtol=1e-4, atol=1e-4)
