"""ApplyDefaultSchedule with the full rule list, as TVM's DLight tutorial: each PrimFunc goes
to the first rule that claims it, and the scheduled model equals NumPy."""

from __future__ import annotations

import numpy as np
import pytest

import mlckit
import mlckit.dlight as dl
from mlckit import relax
from mlckit.script import ir as I
from mlckit.script import relax as R
from mlckit.target import Target


def demo_model(batch):
    """The tutorial's DemoModel (Linear, ReLU, LayerNorm, Linear), smaller; ``batch`` an int
    or the name of a symbolic dimension."""

    @I.ir_module
    class Demo:
        @R.function
        def main(x: R.Tensor((batch, 96), "float32"), w1: R.Tensor((96, 96), "float32"),
                 b1: R.Tensor((96,), "float32"), g: R.Tensor((96,), "float32"),
                 beta: R.Tensor((96,), "float32"), w2: R.Tensor((32, 96), "float32"),
                 b2: R.Tensor((32,), "float32")):
            with R.dataflow():
                h = R.nn.relu(R.add(R.matmul(x, R.permute_dims(w1)), b1))
                h = R.nn.layer_norm(h, g, beta, axes=[-1])
                out = R.add(R.matmul(h, R.permute_dims(w2)), b2)
                R.output(out)
            return out

    with Target("cuda"):
        return relax.get_pipeline("zero")(Demo)


def claimed(mod, rule) -> set[str]:
    """The functions ``rule`` schedules on its own (the tutorial's probing technique)."""
    with Target("cuda"):
        out = dl.ApplyDefaultSchedule(rule)(mod)
    return {gv.name_hint for gv, f in out.functions.items()
            if not isinstance(f, relax.Function) and (f.attrs or {}).get("tir.is_scheduled")}


ALL_RULES = [dl.gpu.Matmul, dl.gpu.GEMV, dl.gpu.Reduction, dl.gpu.GeneralReduction,
             dl.gpu.Fallback]


TRANSPOSES = {"transpose", "transpose1"}  # the weights' R.permute_dims


@pytest.mark.parametrize("batch,expected", [
    (1, {"Matmul": set(), "GEMV": set(), "LowBatchGEMV": set(),
         "Reduction": {"fused_matmul_add_relu", "fused_matmul1_add1"},
         "GeneralReduction": {"layer_norm"}, "Transpose": TRANSPOSES, "RMSNorm": set()}),
    (32, {"Matmul": {"fused_matmul_add_relu", "fused_matmul1_add1"}, "GEMV": set(),
          "LowBatchGEMV": set(), "Reduction": set(), "GeneralReduction": {"layer_norm"},
          "Transpose": TRANSPOSES, "RMSNorm": set()}),
    # TVM's Matmul pads a symbolic number of rows; mlckit's leaves them to Fallback.  TVM
    # 0.27's LowBatchGEMV claims these outer-reduction matmuls (x @ permute_dims(w)) with a
    # schedule it leaves unfinished (no thread bound); mlckit's declines them.
    ("n", {"Matmul": set(), "GEMV": set(), "LowBatchGEMV": set(), "Reduction": set(),
           "GeneralReduction": {"layer_norm"}, "Transpose": TRANSPOSES, "RMSNorm": set()}),
])
def test_each_rule_claims_the_kernels_tvms_claims(batch, expected):
    # TVM's GeneralReduction also claims the matmuls with their epilogue, re-laying out the
    # epilogue with transform_block_layout, which mlckit does not have.
    mod = demo_model(batch)
    for name, functions in expected.items():
        assert claimed(mod, getattr(dl.gpu, name)()) == functions, name


@pytest.mark.parametrize("batch", [1, 32, "n"])
def test_the_tutorials_rule_list_schedules_every_kernel_and_equals_numpy(batch):
    with Target("cuda"):
        mod = dl.ApplyDefaultSchedule(*(rule() for rule in ALL_RULES))(demo_model(batch))
    assert all((f.attrs or {}).get("tir.is_scheduled") for f in mod.functions.values()
               if not isinstance(f, relax.Function))
    vm = relax.VirtualMachine(relax.build(mod, target="cuda", mode="cpu"), mlckit.cpu())
    rng = np.random.default_rng(0)
    rows = 5 if batch == "n" else batch
    x, w1, b1, g, beta, w2, b2 = (rng.uniform(-1, 1, s).astype("float32") for s in [
        (rows, 96), (96, 96), (96,), (96,), (96,), (32, 96), (32,)])
    h = np.maximum(x @ w1.T + b1, 0)
    h = (h - h.mean(1, keepdims=True)) / np.sqrt(h.var(1, keepdims=True) + 1e-5) * g + beta
    np.testing.assert_allclose(vm["main"](x, w1, b1, g, beta, w2, b2).numpy(), h @ w2.T + b2,
                               rtol=1e-4, atol=1e-4)


CATALOG = [dl.gpu.Matmul, dl.gpu.GEMV, dl.gpu.LowBatchGEMV, dl.gpu.Reduction,
           dl.gpu.GeneralReduction, dl.gpu.Transpose, dl.gpu.RMSNorm, dl.gpu.Fallback]


@pytest.mark.parametrize("batch", [1, "n"])
def test_the_tutorials_full_rule_catalog_schedules_every_kernel_and_equals_numpy(batch):
    with Target("cuda"):
        mod = dl.ApplyDefaultSchedule(*(rule() for rule in CATALOG))(demo_model(batch))
    transpose = next(f for gv, f in mod.functions.items() if gv.name_hint == "transpose")
    assert "w1_shared = T.alloc_buffer((T.int64(96), T.int64(96)), scope=\"shared\")" in \
        transpose.script()  # Transpose's tile, not Fallback's one element per thread
    vm = relax.VirtualMachine(relax.build(mod, target="cuda", mode="cpu"), mlckit.cpu())
    rng = np.random.default_rng(1)
    rows = 3 if batch == "n" else batch
    x, w1, b1, g, beta, w2, b2 = (rng.uniform(-1, 1, s).astype("float32") for s in [
        (rows, 96), (96, 96), (96,), (96,), (96,), (32, 96), (32,)])
    h = np.maximum(x @ w1.T + b1, 0)
    h = (h - h.mean(1, keepdims=True)) / np.sqrt(h.var(1, keepdims=True) + 1e-5) * g + beta
    np.testing.assert_allclose(vm["main"](x, w1, b1, g, beta, w2, b2).numpy(), h @ w2.T + b2,
                               rtol=1e-4, atol=1e-4)


def test_a_custom_rule_from_a_function_goes_before_fallback():
    # the tutorial's MyTileAndBind: single injective blocks, fused and split by 256
    from mlckit import tir
    from mlckit.dlight.analysis import normalize_prim_func

    @dl.ScheduleRule.from_callable("MyTileAndBind")
    def tile_and_bind(func, target, tunable):
        sch = tir.Schedule(func)
        infos = normalize_prim_func(sch)
        if infos is None or len(infos) != 1 or not infos[0].is_injective():
            return None
        bx, tx = sch.split(sch.fuse(*sch.get_loops(infos[0].block_rv)), [None, 256])
        sch.bind(bx, "blockIdx.x")
        sch.bind(tx, "threadIdx.x")
        return sch

    assert type(tile_and_bind).__name__ == "MyTileAndBind"
    with Target("cuda"):
        mod = dl.ApplyDefaultSchedule(tile_and_bind, dl.gpu.Fallback())(demo_model(1))
    transpose = next(f for gv, f in mod.functions.items() if gv.name_hint == "transpose")
    loops = [s for s in transpose.script().splitlines() if "thread_binding" in s]
    assert "T.thread_binding(T.int64(36), thread=\"blockIdx.x\")" in loops[0]  # 96*96 / 256
    assert "T.thread_binding(T.int64(256), thread=\"threadIdx.x\")" in loops[1]


def test_the_rule_interface_is_where_tvm_keeps_it():
    from mlckit.s_tir.dlight.base import ApplyDefaultSchedule
    from mlckit.s_tir.dlight.base.schedule_rule import ScheduleRule

    assert ScheduleRule is dl.ScheduleRule and ApplyDefaultSchedule is dl.ApplyDefaultSchedule


def test_a_function_marked_scheduled_under_either_key_is_left_alone():
    from mlckit.dlight.base import is_scheduled

    func = relax.transform.LegalizeOps()(demo_model(4))["layer_norm"]
    assert not is_scheduled(func)
    for key in ("tir.is_scheduled", "tirx.is_scheduled"):
        marked = func.with_attr(key, True)
        assert is_scheduled(marked)
        mod = mlckit.IRModule({"layer_norm": marked})
        with Target("cuda"):
            assert dl.ApplyDefaultSchedule(dl.gpu.Fallback())(mod)["layer_norm"] is marked
