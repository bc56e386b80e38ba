"""MetaScheduleApplyDatabase puts tuned kernels from a tuning database into a Relax module."""

import numpy as np
import pytest

import mlckit as tvm
from mlckit import meta_schedule as ms
from mlckit import relax
from mlckit.ir import assert_structural_equal
from mlckit.script import ir as I
from mlckit.script import relax as R
from mlckit.script import tir as T

from ...meta_schedule.workloads import Linear


@I.ir_module
class Mixture:
    @T.prim_func
    def linear0(X: T.Buffer((1, 64), "float32"), W: T.Buffer((32, 64), "float32"),
                B: T.Buffer((32,), "float32"), Z: T.Buffer((1, 32), "float32")):
        T.func_attr({"global_symbol": "linear0", "tir.noalias": True})
        Y = T.alloc_buffer((1, 32), "float32")
        for i, j, k in T.grid(1, 32, 64):
            with T.block("Y"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    Y[vi, vj] = T.float32(0)
                Y[vi, vj] = Y[vi, vj] + X[vi, vk] * W[vj, vk]
        for i, j in T.grid(1, 32):
            with T.block("Z"):
                vi, vj = T.axis.remap("SS", [i, j])
                Z[vi, vj] = Y[vi, vj] + B[vj]

    @R.function
    def main(x: R.Tensor((1, 64), "float32"), w: R.Tensor((32, 64), "float32"),
             b: R.Tensor((32,), "float32")):
        cls = Mixture
        with R.dataflow():
            out = R.call_tir(cls.linear0, (x, w, b), R.Tensor((1, 32), dtype="float32"))
            R.output(out)
        return out


@pytest.fixture(scope="module")
def database():
    return ms.tune_tir(Linear, "llvm --num-cores=1", database="memory", max_trials_global=2,
                       num_trials_per_iter=2, seed=0, progress=False)


def test_tuned_kernel_replaces_the_original(database):
    with database:
        tuned = relax.transform.MetaScheduleApplyDatabase()(Mixture)
    sch = ms.tir_integration.compile_tir(database, Linear, "llvm")
    expected = sch.mod["main"].with_attr("global_symbol", "linear0") \
        .with_attr("tir.is_scheduled", True)
    assert_structural_equal(tuned["linear0"], expected)
    rng = np.random.default_rng(0)
    x, w, b = (rng.random(s, dtype=np.float32) for s in [(1, 64), (32, 64), (32,)])
    vm = relax.VirtualMachine(tvm.compile(tuned, "llvm"), tvm.cpu())
    np.testing.assert_allclose(vm["main"](x, w, b).numpy(), x @ w.T + b, rtol=1e-5)


def test_work_dir_database(tmp_path):
    ms.tune_tir(Linear, "llvm --num-cores=1", work_dir=str(tmp_path), max_trials_global=1,
                num_trials_per_iter=1, seed=0, progress=False)
    tuned = relax.transform.MetaScheduleApplyDatabase(work_dir=str(tmp_path))(Mixture)
    sch = ms.tir_integration.compile_tir(ms.JSONDatabase(work_dir=str(tmp_path)), Linear, "llvm")
    expected = sch.mod["main"].with_attr("global_symbol", "linear0") \
        .with_attr("tir.is_scheduled", True)
    assert_structural_equal(tuned["linear0"], expected)


def test_without_a_database_the_pass_says_how_to_give_one():
    with pytest.raises(tvm.TVMError, match="inside `with database:` or pass work_dir="):
        relax.transform.MetaScheduleApplyDatabase()(Mixture)


def test_untuned_functions_are_kept_and_warned_about():
    with ms.MemoryDatabase():
        with pytest.warns(UserWarning, match="no tuning record for linear0"):
            out = relax.transform.MetaScheduleApplyDatabase(enable_warning=True)(Mixture)
    assert_structural_equal(out, Mixture)
