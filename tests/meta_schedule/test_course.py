"""The course chapter's tuning flow (chapter_auto_program_optimization), with its modules
(built from the shared kernel factories) and calls: a hand-written space, the built-in space, and the tuned linear0 put back
into the end-to-end MLP with ``IRModule.update_func``.  The fast tests use a few trials; the
slow one uses the course's 64 (the same code path)."""

import numpy as np
import pytest

import mlckit as tvm
from mlckit import meta_schedule as ms
from mlckit import relax
from mlckit.models import fashion_mlp
from mlckit.script import relax as R

from ..kernels import make_linear0, make_matmul
from .workloads import stochastic_schedule_mm

TARGET = "llvm --num-cores=1"

# the course's MyModule and MyModuleMixture (its linear0 with the MLP calling it)
MyModule = tvm.IRModule({"main": make_matmul(128)})


@R.function
def main(x: R.Tensor((1, 784), "float32"), w0: R.Tensor((128, 784), "float32"),
         b0: R.Tensor((128,), "float32"), w1: R.Tensor((10, 128), "float32"),
         b1: R.Tensor((10,), "float32")):
    with R.dataflow():
        lv0 = R.call_dps_packed("linear0", (x, w0, b0), R.Tensor((1, 128), dtype="float32"))
        lv1 = R.call_dps_packed("env.relu", (lv0,), R.Tensor((1, 128), dtype="float32"))
        out = R.call_dps_packed("env.linear", (lv1, w1, b1), R.Tensor((1, 10), dtype="float32"))
        R.output(out)
    return out


MyModuleMixture = tvm.IRModule({"linear0": make_linear0(784, 128), "main": main})


@tvm.register_global_func("env.linear", override=True)
def np_linear(x, w, b, out):
    np.from_dlpack(out)[...] = np.from_dlpack(x) @ np.from_dlpack(w).T + np.from_dlpack(b)


@tvm.register_global_func("env.relu", override=True)
def np_relu(x, out):
    np.from_dlpack(out)[...] = np.maximum(np.from_dlpack(x), 0)


def check_matmul(sch):
    rng = np.random.default_rng(0)
    a, b = rng.random((128, 128), dtype=np.float32), rng.random((128, 128), dtype=np.float32)
    c = np.zeros((128, 128), np.float32)
    tvm.compile(sch.mod, target="llvm").mod["main"](a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4)


def chapter(work_dir, trials):
    """The chapter's meta_schedule cells, in order, with ``trials`` for 64."""
    database = ms.tune_tir(mod=MyModule, target=TARGET, max_trials_global=trials,
                           num_trials_per_iter=trials,
                           space=ms.space_generator.ScheduleFn(stochastic_schedule_mm),
                           work_dir=work_dir, seed=0, progress=False)
    sch = ms.tir_integration.compile_tir(database, MyModule, TARGET)
    check_matmul(sch)
    database = ms.tune_tir(mod=MyModule, target=TARGET, max_trials_global=trials,
                           num_trials_per_iter=trials, work_dir=work_dir, seed=0,
                           progress=False)
    sch = ms.tir_integration.compile_tir(database, MyModule, TARGET)
    check_matmul(sch)
    reloaded = ms.tir_integration.compile_tir(ms.JSONDatabase(work_dir=work_dir), MyModule,
                                              TARGET)
    assert str(reloaded.trace) == str(sch.trace)

    params = {k: tvm.runtime.tensor(v) for k, v in fashion_mlp().items()}
    mod_linear = tvm.IRModule.from_expr(MyModuleMixture["linear0"].with_attr("global_symbol",
                                                                             "main"))
    database = ms.tune_tir(mod=mod_linear, target=TARGET, max_trials_global=trials,
                           num_trials_per_iter=trials, work_dir=work_dir, seed=0,
                           progress=False)
    sch = ms.tir_integration.compile_tir(database, mod_linear, TARGET)
    tuned = relax.transform.BindParams("main", params)(MyModuleMixture)
    new_func = sch.mod["main"].with_attr("global_symbol", "linear0")
    gv = tuned.get_global_var("linear0")
    tuned.update_func(gv, new_func)
    vm = relax.VirtualMachine(tvm.compile(tuned, tvm.target.Target("llvm", host="llvm")),
                              tvm.cpu())
    x = np.random.default_rng(0).random((1, 784), dtype=np.float32)
    p = fashion_mlp()
    want = np.maximum(x @ p["w0"].T + p["b0"], 0) @ p["w1"].T + p["b1"]
    np.testing.assert_allclose(vm["main"](tvm.runtime.tensor(x)).numpy(), want, rtol=1e-4,
                               atol=1e-5)


def test_chapter_flow_with_a_few_trials(tmp_path):
    chapter(str(tmp_path), trials=4)


@pytest.mark.slow
def test_chapter_flow_at_the_course_trial_counts(tmp_path):
    chapter(str(tmp_path), trials=64)
