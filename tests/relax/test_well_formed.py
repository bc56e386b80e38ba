"""Relax well-formedness on IR built directly (the parser runs the same check)."""

import pytest

from mlckit import DiagnosticError, IRModule
from mlckit import relax as rx
from mlckit.ir import GlobalVar, Span
from mlckit.relax.analysis import check_well_formed, well_formed
from mlckit.relax.op import call_packed, call_tir
from mlckit.relax.struct_info import TensorStructInfo
from mlckit.tir import Var as TirVar

T4 = TensorStructInfo([4], "float32")


def func(params, blocks, body, **kw):
    return rx.Function(params, rx.SeqExpr(blocks, body), body.struct_info, **kw)


def at(line):
    return Span("<test>", line, 1)


def test_a_simple_function_is_well_formed():
    x = rx.Var("x", T4)
    assert well_formed(func([x], [], x))


def test_undefined_var():
    x, y = rx.Var("x", T4), rx.Var("y", T4)
    z = rx.Var("z", T4)
    f = func([x], [rx.BindingBlock([rx.VarBinding(z, y, span=at(3))])], z)
    with pytest.raises(DiagnosticError, match="variable 'y' is used but not defined") as info:
        check_well_formed(f)
    assert info.value.line == 3


def test_var_defined_twice():
    x, y = rx.Var("x", T4), rx.Var("y", T4)
    f = func([x], [rx.BindingBlock([rx.VarBinding(y, x), rx.VarBinding(y, x, span=at(5))])], y)
    with pytest.raises(DiagnosticError, match="Var 'y' is defined more than once") as info:
        check_well_formed(f)
    assert info.value.line == 5


def test_dataflow_var_used_outside_its_block():
    x, lv, y = rx.Var("x", T4), rx.DataflowVar("lv", T4), rx.Var("y", T4)
    f = func([x], [rx.DataflowBlock([rx.VarBinding(lv, x)]),
                   rx.BindingBlock([rx.VarBinding(y, lv, span=at(7))])], y)
    with pytest.raises(DiagnosticError, match="DataflowVar 'lv' is used outside"):
        check_well_formed(f)


def test_impure_call_in_dataflow_block():
    x, y = rx.Var("x", T4), rx.Var("y", T4)
    f = func([x], [rx.DataflowBlock([rx.VarBinding(y, call_packed("f", x, sinfo_args=T4))])], y,
             is_pure=False)
    with pytest.raises(DiagnosticError, match="non-pure call in dataflow block"):
        check_well_formed(f)


def test_undefined_symbolic_var():
    n = TirVar("n", "int64")
    x, y = rx.Var("x", T4), rx.Var("y", TensorStructInfo([n], "float32"))
    call = rx.Call(rx.ExternFunc("f"), [x], sinfo_args=[TensorStructInfo([n], "float32")])
    f = func([x], [rx.BindingBlock([rx.VarBinding(y, call)])], y, is_pure=False)
    with pytest.raises(DiagnosticError, match="symbolic variable 'n'.* is not defined"):
        check_well_formed(f)


def test_global_function_not_in_module():
    x, y = rx.Var("x", T4), rx.Var("y", T4)
    missing = GlobalVar("missing")
    missing.struct_info_ = rx.FuncStructInfo([T4], T4)
    f = func([x], [rx.BindingBlock([rx.VarBinding(y, rx.Call(missing, [x]))])], y)
    with pytest.raises(DiagnosticError, match="function 'missing' is not in the IRModule"):
        check_well_formed(IRModule({"main": f}))


def test_call_tir_of_a_relax_function():
    x, y = rx.Var("x", T4), rx.Var("y", T4)
    gv = GlobalVar("main")
    f = func([x], [rx.BindingBlock([rx.VarBinding(y, call_tir(gv, [x], T4))])], y)
    with pytest.raises(DiagnosticError, match="not a PrimFunc"):
        check_well_formed(IRModule({gv: f}))
