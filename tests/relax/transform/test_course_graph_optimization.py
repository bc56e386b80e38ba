"""The flow of the course's graph-optimization chapter, with mlckit's names: a hand-written
fusion of matmul + add into ``Primitive`` sub-functions, their lowering to TensorIR through
``call_te``, ``FuseTIR``, and ``tvm.compile`` on the VM — against NumPy."""

import numpy as np

import mlckit as tvm
from mlckit import relax, topi
from mlckit.ir import IRModule
from mlckit.models import fashion_mlp

PARAMS = fashion_mlp()


def mlp():
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorStructInfo((1, 784), "float32"))
    w0, b0, w1, b1 = (relax.const(PARAMS[k], "float32") for k in ("w0", "b0", "w1", "b1"))
    with bb.function("main", [x]):
        with bb.dataflow():
            lv0 = bb.emit(relax.op.matmul(x, relax.op.permute_dims(w0)))
            lv1 = bb.emit(relax.op.add(lv0, b0))
            lv2 = bb.emit(relax.op.nn.relu(lv1))
            lv3 = bb.emit(relax.op.matmul(lv2, relax.op.permute_dims(w1)))
            gv = bb.emit_output(relax.op.add(lv3, b1))
        bb.emit_func_output(gv)
    return bb.get()


@relax.expr_functor.mutator
class FuseMatmulAdd(relax.PyExprMutator):
    """add(matmul(x, w), b) -> a call of a new ``Primitive: 1`` function (as the course)."""

    def __init__(self, mod: IRModule):
        super().__init__()
        self.mod_ = mod
        self.count = 0

    def transform(self) -> IRModule:
        for gv, func in self.mod_.functions.items():
            if isinstance(func, relax.Function) and not func.attrs.get("Primitive"):
                new = relax.analysis.remove_all_unused(self.visit_expr(func))
                self.builder_.update_func(gv, new)
        return self.builder_.get()

    def visit_call_(self, call):
        call = self.visit_expr_post_order(call)
        if not (isinstance(call, relax.Call) and call.op == tvm.ir.Op.get("relax.add")):
            return call
        producer = self.lookup_binding(call.args[0])
        if not (isinstance(producer, relax.Call)
                and producer.op == tvm.ir.Op.get("relax.matmul")):
            return call
        args = [producer.args[0], producer.args[1], call.args[1]]
        params = [relax.Var(n, relax.TensorStructInfo(a.struct_info.shape, a.struct_info.dtype))
                  for n, a in zip("xwb", args)]
        name = f"fused_matmul_add{self.count}"
        self.count += 1
        bb = relax.BlockBuilder()
        with bb.function(name, params):
            with bb.dataflow():
                lv = bb.emit(relax.op.matmul(params[0], params[1]))
                gv = bb.emit_output(relax.op.add(lv, params[2]))
            bb.emit_func_output(gv)
        gvar = self.builder_.add_func(bb.get()[name].with_attr("Primitive", 1), name)
        return relax.Call(gvar, args, None, None)


@relax.expr_functor.mutator
class LowerToTIR(relax.PyExprMutator):
    """Each operator of ``lowerings`` becomes a call_te of its topi function."""

    lowerings = {
        "relax.matmul": lambda bb, call: bb.call_te(topi.nn.matmul, *call.args),
        "relax.add": lambda bb, call: bb.call_te(topi.add, *call.args),
        "relax.nn.relu": lambda bb, call: bb.call_te(topi.nn.relu, call.args[0]),
        "relax.permute_dims": lambda bb, call: bb.call_te(topi.transpose, call.args[0]),
    }

    def __init__(self, mod: IRModule):
        super().__init__()
        self.mod_ = mod

    def transform(self) -> IRModule:
        for gv, func in self.mod_.functions.items():
            if isinstance(func, relax.Function):
                self.builder_.update_func(gv, self.visit_expr(func))
        return self.builder_.get()

    def visit_call_(self, call):
        call = self.visit_expr_post_order(call)
        lower = self.lowerings.get(getattr(call.op, "name", None))
        return lower(self.builder_, call) if lower is not None else call


def test_the_chapter_flow_fuses_lowers_and_predicts_as_numpy():
    fused = tvm.ir.transform.module_pass(opt_level=2, name="MatmulAddFuse")(
        lambda mod, ctx: FuseMatmulAdd(mod).transform())(mlp())
    assert sorted(gv.name_hint for gv in fused.functions) == [
        "fused_matmul_add0", "fused_matmul_add1", "main"]
    lowered = LowerToTIR(fused).transform()
    final = relax.transform.FuseTIR()(lowered)
    # each hand-fused function is one PrimFunc now; transposes and relu stay kernels of main
    assert sorted(gv.name_hint for gv in final.functions) == [
        "fused_matmul_add0", "fused_matmul_add1", "main", "relu", "transpose", "transpose1"]
    assert isinstance(final["fused_matmul_add0"], tvm.tir.PrimFunc)
    assert relax.analysis.well_formed(final)

    img = np.random.default_rng(0).random((1, 784)).astype("float32")
    ex = tvm.compile(final, tvm.target.Target("llvm", host="llvm"))
    vm = relax.VirtualMachine(ex, tvm.cpu())
    out = vm["main"](tvm.runtime.tensor(img)).numpy()
    p = PARAMS
    expected = np.maximum(img @ p["w0"].T + p["b0"], 0) @ p["w1"].T + p["b1"]
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-4)
    assert out.argmax() == expected.argmax()
