"""tirx: TVM >= 0.24's names for the TensorIR classes, ops and build are mlckit.tir's."""

import numpy as np
import pytest

import mlckit as tvm
from mlckit import s_tir, tir, tirx
from mlckit.ir import IRModule
from mlckit.ir.transform import module_pass
from tests.kernels import mm_relu


def _inputs():
    rng = np.random.default_rng(0)
    a = rng.uniform(size=(128, 128)).astype("float32")
    b = rng.uniform(size=(128, 128)).astype("float32")
    return a, b, np.maximum(a @ b, 0)


@pytest.mark.parametrize("name", ["PrimFunc", "Buffer", "Var", "IntImm", "FloatImm", "Add",
                                  "BufferLoad", "BufferStore", "For", "ForKind", "SeqStmt",
                                  "LetStmt", "IfThenElse", "Evaluate", "decl_buffer", "exp",
                                  "sqrt", "max", "floordiv", "if_then_else", "const"])
def test_the_ir_names_are_tir_objects(name):
    assert getattr(tirx, name) is getattr(tir, name)


def test_bind_is_let_stmt_and_sblock_is_the_block():
    assert tirx.Bind is tir.LetStmt
    assert tirx.SBlock is tir.Block is s_tir.SBlock
    assert tirx.transform is tir.transform and tirx.analysis is tir.analysis


def test_an_op_builds_the_tir_call():
    x = tirx.Var("x", "float32")
    assert tvm.ir.structural_equal(tirx.exp(x), tir.exp(x))
    assert tirx.exp(x).dtype == "float32"


@pytest.mark.parametrize("build", [tvm.tirx.build, tvm.tir.build])
def test_build_compiles_a_kernel_that_computes_what_numpy_does(build):
    a, b, expected = _inputs()
    lib = build(IRModule({"main": mm_relu}), target="llvm")
    c = tvm.runtime.tensor(np.zeros((128, 128), "float32"))
    lib(tvm.runtime.tensor(a), tvm.runtime.tensor(b), c)
    np.testing.assert_allclose(c.numpy(), expected, rtol=1e-5)
    assert lib.time_evaluator("main", tvm.cpu(), number=1)(a, b, c.numpy()).mean > 0


def test_build_takes_a_prim_func_a_dict_target_and_the_current_target():
    a, b, expected = _inputs()
    c = np.zeros((128, 128), "float32")
    tvm.tirx.build(mm_relu, target={"kind": "llvm", "num-cores": 1})(a, b, c)
    np.testing.assert_allclose(c, expected, rtol=1e-5)
    with tvm.target.Target("lnumpy"):
        lib = tvm.tir.build(mm_relu)
    assert lib.backend == "lnumpy"  # (its 128³ loops in Python would take 12 s to run)
    assert "def main(A, B, C):" in lib.get_source()


def test_build_runs_a_pipeline_pass_first():
    seen = []

    @module_pass(opt_level=0, name="Record")
    def record(mod, ctx):
        seen.append(sorted(gv.name_hint for gv in mod.functions))
        return mod

    tvm.tirx.build(mm_relu, target="llvm", pipeline=record)
    assert seen == [["main"]]


@pytest.mark.parametrize("mod, pipeline, message", [
    (mm_relu, "fast", r"pipeline 'fast' is not known"),
    ("main", "default", r"expects a PrimFunc or an IRModule, got str"),
])
def test_build_refuses_what_it_cannot_build(mod, pipeline, message):
    with pytest.raises(tvm.TVMError, match=message):
        tvm.tirx.build(mod, target="llvm", pipeline=pipeline)
