"""Normalize: hand-built IR gets A-normal form and struct infos."""

import numpy as np

import mlckit
from mlckit import relax, topi
from mlckit.ir import IRModule, assert_structural_equal
from mlckit.relax.transform import Normalize

F32x4 = relax.TensorStructInfo((4,), "float32")


def _exp_module():
    """(module with main(x) = exp(exp(x)) built by BlockBuilder, the GlobalVar of exp)."""
    bb = relax.BlockBuilder()
    x = relax.Var("x", F32x4)
    with bb.function("main", [x]):
        lv = bb.emit(bb.call_te(topi.exp, x))
        gv = bb.emit(bb.call_te(topi.exp, lv))
        bb.emit_func_output(gv)
    mod = bb.get()
    return mod, mod.get_global_var("exp")


def test_nested_calls_get_bindings_of_their_own():
    expected, exp_gv = _exp_module()
    y = relax.Var("y", F32x4)
    inner = relax.op.call_tir(exp_gv, [y], F32x4)
    outer = relax.op.call_tir(exp_gv, [inner], F32x4)  # exp(exp(y)), one nested expression
    nested = relax.Function([y], relax.SeqExpr([], outer), expected["main"].ret_struct_info,
                            attrs={"global_symbol": "main"})
    after = Normalize()(IRModule({exp_gv: expected["exp"], "main": nested}))
    assert_structural_equal(after, expected)
    x_np = np.linspace(0, 1, 4).astype("float32")
    vm = relax.VirtualMachine(relax.build(after, "llvm"), mlckit.cpu())
    np.testing.assert_allclose(vm["main"](x_np).numpy(), np.exp(np.exp(x_np)), rtol=1e-6)


def test_normal_form_is_left_alone():
    mod, _ = _exp_module()
    assert Normalize()(mod)["main"] is mod["main"]
