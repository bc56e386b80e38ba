"""FoldConstant: kernels on constants run at compile time; the results are the NumPy ones."""

import numpy as np
import pytest

import mlckit
from mlckit import relax, topi
from mlckit.ir import IRModule, assert_structural_equal
from mlckit.ir.op import _OPS, register_op
from mlckit.relax.transform import BindParams, FoldConstant
from mlckit.script import ir as I
from mlckit.script import relax as R
from mlckit.script import tir as T


def _with_main(mod: IRModule, name: str, params: dict) -> IRModule:
    """Keep the Relax function ``name`` as ``main`` (with the module's PrimFuncs) and bind
    ``params`` to it, as TVM's FoldConstant tests do."""
    funcs = {}
    for gv, func in mod.functions.items():
        if isinstance(func, relax.Function):
            if gv.name_hint == name:
                funcs["main"] = relax.Function(func.params, func.body, func.ret_struct_info,
                                               attrs={"global_symbol": "main"})
        else:
            funcs[gv] = func
    return BindParams("main", params)(IRModule(funcs))


@I.ir_module
class AddOne:
    @T.prim_func
    def addone(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32")):
        for i, j in T.grid(16, 16):
            with T.block("addone"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] + T.float32(1)

    @T.prim_func
    def transpose(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32")):
        for i, j in T.grid(16, 16):
            with T.block("transpose"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vj, vi]

    @R.function
    def one(c0: R.Tensor((16, 16), "float32")):
        cls = AddOne
        lv0 = R.call_tir(cls.addone, (c0,), R.Tensor((16, 16), dtype="float32"))
        return lv0

    @R.function
    def two_hops(c0: R.Tensor((16, 16), "float32")):
        cls = AddOne
        with R.dataflow():
            lv0 = R.call_tir(cls.addone, (c0,), R.Tensor((16, 16), dtype="float32"))
            lv1 = R.call_tir(cls.transpose, (lv0,), R.Tensor((16, 16), dtype="float32"))
            R.output(lv1)
        return lv1

    @R.function
    def mixed(c0: R.Tensor((16, 16), "float32"), x: R.Tensor((16, 16), "float32")):
        cls = AddOne
        with R.dataflow():
            lv0 = R.call_tir(cls.addone, (c0,), R.Tensor((16, 16), dtype="float32"))
            lv1 = R.call_tir(cls.addone, (x,), R.Tensor((16, 16), dtype="float32"))
            lv2 = R.call_tir(cls.transpose, (lv0,), R.Tensor((16, 16), dtype="float32"))
            gv = (lv1, lv2)
            R.output(gv)
        return gv

    @R.function
    def expected(c1: R.Tensor((16, 16), "float32")):
        return c1

    @R.function
    def expected_mixed(c1: R.Tensor((16, 16), "float32"), x: R.Tensor((16, 16), "float32")):
        cls = AddOne
        with R.dataflow():
            lv1 = R.call_tir(cls.addone, (x,), R.Tensor((16, 16), dtype="float32"))
            gv = (lv1, c1)
            R.output(gv)
        return gv


C0 = np.arange(256, dtype="float32").reshape(16, 16)


def test_one_kernel_on_a_constant_is_folded():
    before = _with_main(AddOne, "one", {"c0": C0})
    expected = _with_main(AddOne, "expected", {"c1": C0 + 1})
    assert_structural_equal(FoldConstant()(before), expected)


def test_two_hops_fold_through_a_dataflow_block():
    before = _with_main(AddOne, "two_hops", {"c0": C0})
    expected = _with_main(AddOne, "expected", {"c1": (C0 + 1).T})
    after = FoldConstant()(before)
    assert_structural_equal(after, expected)
    np.testing.assert_array_equal(after["main"].body.body.data, (C0 + 1).T)


def test_only_the_constant_part_is_folded():
    before = _with_main(AddOne, "mixed", {"c0": C0})
    expected = _with_main(AddOne, "expected_mixed", {"c1": (C0 + 1).T})
    after = FoldConstant()(before)
    assert_structural_equal(after, expected)
    x = np.ones((16, 16), "float32")
    vm = relax.VirtualMachine(relax.build(after, "llvm"), mlckit.cpu())
    out = vm["main"](x)
    np.testing.assert_array_equal(out[0].numpy(), x + 1)
    np.testing.assert_array_equal(out[1].numpy(), (C0 + 1).T)


def test_folding_keeps_the_numbers_of_the_unfolded_module():
    """The MLP's transposed weights computed once at compile time (topi.transpose on a
    constant), then the same predictions."""
    rng = np.random.default_rng(0)
    w0, b0 = rng.standard_normal((8, 16)).astype("float32"), rng.standard_normal(8).astype("float32")
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorStructInfo((2, 16), "float32"))
    with bb.function("main", [x]):
        with bb.dataflow():
            wt = bb.emit_te(topi.transpose, relax.const(w0))
            lv = bb.emit_te(topi.matmul, x, wt)
            lv = bb.emit_te(topi.add, lv, relax.const(b0))
            gv = bb.emit_output(bb.call_te(topi.nn.relu, lv))
        bb.emit_func_output(gv)
    before = bb.get()
    after = FoldConstant()(before)
    calls = [b.value.args[0].name_hint for b in after["main"].body.blocks[0].bindings]
    assert calls == ["matmul", "add", "relu"]  # the transpose ran at compile time
    x_np = rng.standard_normal((2, 16)).astype("float32")
    for mod in (before, after):
        vm = relax.VirtualMachine(relax.build(mod, "llvm"), mlckit.cpu())
        np.testing.assert_allclose(vm["main"](x_np).numpy(), np.maximum(x_np @ w0.T + b0, 0),
                                   rtol=1e-5, atol=1e-5)


def test_int32_kernels_fold():
    @I.ir_module
    class Mod:
        @T.prim_func
        def addone(A: T.Buffer((16, 16), "int32"), B: T.Buffer((16, 16), "int32")):
            for i, j in T.grid(16, 16):
                with T.block("addone"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    B[vi, vj] = A[vi, vj] + T.int32(1)

        @R.function
        def before(c0: R.Tensor((16, 16), "int32")):
            cls = Mod
            lv0 = R.call_tir(cls.addone, (c0,), R.Tensor((16, 16), dtype="int32"))
            return lv0

        @R.function
        def expected(c1: R.Tensor((16, 16), "int32")):
            return c1

    c0 = np.arange(256, dtype="int32").reshape(16, 16)
    after = FoldConstant()(_with_main(Mod, "before", {"c0": c0}))
    assert_structural_equal(after, _with_main(Mod, "expected", {"c1": c0 + 1}))


# -- high-level operators: folded through their legalization -------------------------------------
@pytest.fixture
def add_one_op():
    """A test-local operator ``test.add_one`` (struct info: its argument's; legalized to
    topi.add(x, 1)), removed from the registry afterwards."""
    name = "test.add_one"
    assert name not in _OPS
    op = register_op(name, FInferStructInfo=lambda call: call.args[0].struct_info, FPurity=True,
                     FLegalize=lambda bb, call: bb.call_te(
                         lambda x: topi.add(x, relax.const(1, "float32").data.item()),
                         call.args[0], primfunc_name_hint="add_one"))
    yield op
    del _OPS[name]


def test_operator_on_a_constant_is_folded_in_a_dataflow_block(add_one_op):
    c = np.arange(4, dtype="float32")
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorStructInfo((4,), "float32"))
    with bb.function("main", [x]):
        with bb.dataflow():
            lv = bb.emit(relax.Call(add_one_op, [relax.const(c)]))
            gv = bb.emit_output(bb.call_te(topi.add, x, lv))
        bb.emit_func_output(gv)
    after = FoldConstant()(bb.get())
    call = after["main"].body.blocks[0].bindings[0].value
    np.testing.assert_array_equal(call.args[1].fields[1].data, c + 1)
    vm = relax.VirtualMachine(relax.build(after, "llvm"), mlckit.cpu())
    np.testing.assert_array_equal(vm["main"](np.ones(4, "float32")).numpy(), c + 2)


def test_operator_outside_a_dataflow_block_is_not_folded(add_one_op):
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorStructInfo((4,), "float32"))
    with bb.function("main", [x]):
        gv = bb.emit(relax.Call(add_one_op, [relax.const(np.zeros(4, "float32"))]))
        bb.emit_func_output(gv)
    mod = bb.get()
    assert_structural_equal(FoldConstant()(mod), mod)


def test_nothing_to_fold_leaves_the_module_equal():
    mod = AddOne
    assert_structural_equal(FoldConstant()(mod), mod)


def test_high_level_operator_folds_through_its_strategy_in_dataflow_only():
    a, b = np.arange(4, dtype="float32"), np.full(4, 0.5, "float32")

    @I.ir_module
    class Module:
        @R.function
        def main(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
            with R.dataflow():
                c = R.multiply(R.const(a), R.const(b))
                gv = R.add(x, c)
                R.output(gv)
            return gv

        @R.function
        def outside(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
            c = R.multiply(R.const(a), R.const(b))
            return c

    after = FoldConstant()(Module)
    call = after["main"].body.blocks[0].bindings[0].value
    assert call.op.name == "relax.add"
    np.testing.assert_array_equal(call.args[1].data, a * b)
    assert_structural_equal(after["outside"], Module["outside"])
    vm = relax.VirtualMachine(relax.build(after, "llvm"), mlckit.cpu())
    np.testing.assert_array_equal(vm["main"](np.ones(4, "float32")).numpy(), 1 + a * b)
