"""Struct-info deduction: every Relax expression kind and intrinsic, with its errors."""

import numpy as np
import pytest

from mlckit import relax as rx
from mlckit.ir import GlobalVar, assert_structural_equal
from mlckit.relax.analysis import (
    StructInfoError,
    describe_struct_info,
    infer_struct_info,
    is_base_of,
    struct_info_lca,
)
from mlckit.relax.op import (
    assert_op,
    call_dps_packed,
    call_packed,
    call_pure_packed,
    call_tir,
    null_value,
    shape_of,
)
from mlckit.relax.op import print as rprint
from mlckit.relax.struct_info import (
    FuncStructInfo,
    ObjectStructInfo,
    PrimStructInfo,
    ShapeStructInfo,
    TensorStructInfo,
    TupleStructInfo,
)
from mlckit.tir import IntImm
from mlckit.tir import Var as TirVar

n = TirVar("n", "int64")
m = TirVar("m", "int64")


def tensor(shape, dtype="float32"):
    return TensorStructInfo(shape, dtype)


def var(name, sinfo):
    return rx.Var(name, sinfo)


def check(expr, expected):
    assert_structural_equal(infer_struct_info(expr), expected)


# -- leaves ------------------------------------------------------------------------------------
def test_constant_is_a_tensor_with_int64_dims():
    sinfo = infer_struct_info(rx.Constant(np.zeros((2, 3), "float32")))
    assert isinstance(sinfo, TensorStructInfo) and sinfo.dtype == "float32"
    assert [d.dtype for d in sinfo.dims] == ["int64", "int64"]
    assert [d.value for d in sinfo.dims] == [2, 3]


def test_scalar_bool_constant():
    check(rx.Constant(np.array(True)), TensorStructInfo([], "bool"))


def test_shape_expr_and_prim_value():
    check(rx.ShapeExpr([n, 4]), ShapeStructInfo([n, 4]))
    check(rx.PrimValue(n), PrimStructInfo("int64", n))


def test_string_and_dtype_are_objects():
    check(rx.StringImm("hi"), ObjectStructInfo())
    check(rx.DataTypeImm("float32"), ObjectStructInfo())


def test_expr_struct_info_is_cached():
    t = rx.Tuple([var("x", tensor([n]))])
    assert t.struct_info is t.struct_info


# -- tuples ------------------------------------------------------------------------------------
def test_tuple_and_tuple_get_item():
    x, s = var("x", tensor([n, 4])), var("s", ShapeStructInfo(ndim=2))
    t = rx.Tuple([x, s])
    check(t, TupleStructInfo([tensor([n, 4]), ShapeStructInfo(ndim=2)]))
    check(rx.TupleGetItem(t, 1), ShapeStructInfo(ndim=2))


def test_tuple_get_item_out_of_range():
    t = rx.Tuple([var("x", tensor([4]))])
    with pytest.raises(StructInfoError, match="tuple index 3 is out of range: the tuple has 1 field"):
        infer_struct_info(rx.TupleGetItem(t, 3))


def test_tuple_get_item_of_a_tensor():
    with pytest.raises(StructInfoError, match=r"indexing \[0\] needs a tuple"):
        infer_struct_info(rx.TupleGetItem(var("x", tensor([4])), 0))


# -- intrinsics -------------------------------------------------------------------------------
def test_call_tir_layout_and_struct_info():
    gv, x = GlobalVar("relu"), var("x", tensor([n, 4]))
    call = call_tir(gv, [x], tensor([n, 4]))
    assert call.op.name == "relax.call_tir"
    assert call.args[0] is gv and isinstance(call.args[1], rx.Tuple)
    assert call.args[1].fields == [x]
    check(call, tensor([n, 4]))


def test_call_tir_single_arg_is_wrapped_in_a_tuple():
    x = var("x", tensor([4]))
    call = call_tir(GlobalVar("f"), x, tensor([4]))
    assert isinstance(call.args[1], rx.Tuple) and call.args[1].fields == [x]


def test_call_tir_several_outputs_give_a_tuple():
    call = call_tir(GlobalVar("f"), [], [tensor([2]), tensor([3], "int32")])
    check(call, TupleStructInfo([tensor([2]), tensor([3], "int32")]))


def test_call_tir_with_tir_vars():
    call = call_tir(GlobalVar("f"), [], tensor([n]), tir_vars=[n])
    assert len(call.args) == 3 and isinstance(call.args[2], rx.ShapeExpr)
    check(call, tensor([n]))


def test_call_tir_out_ty_alias():
    a = call_tir(GlobalVar("f"), [], out_ty=tensor([2]))
    assert_structural_equal(a.sinfo_args, [tensor([2])])


def test_call_tir_errors():
    with pytest.raises(TypeError, match="requires out_sinfo"):
        call_tir(GlobalVar("f"), [])
    with pytest.raises(TypeError, match="use R.call_dps_packed"):
        call_tir("f", [], tensor([2]))
    with pytest.raises(ValueError, match="must have a known shape"):
        call_tir(GlobalVar("f"), [], TensorStructInfo(None, "float32", 2))


def test_call_dps_packed_by_name():
    x = var("x", tensor([1, 4]))
    call = call_dps_packed("env.linear", (x,), tensor([1, 8]))
    assert isinstance(call.args[0], rx.ExternFunc) and call.args[0].global_symbol == "env.linear"
    check(call, tensor([1, 8]))


def test_call_packed_is_a_call_of_an_extern_func():
    x = var("x", ObjectStructInfo())
    call = call_packed("vm.builtin.copy", x, sinfo_args=tensor([4]))
    assert isinstance(call.op, rx.ExternFunc)
    check(call, tensor([4]))
    check(call_packed("test", x), ObjectStructInfo())


def test_call_pure_packed():
    call = call_pure_packed("my_sort", var("x", tensor([8])), sinfo_args=tensor([8]))
    assert call.op.name == "relax.call_pure_packed"
    check(call, tensor([8]))
    with pytest.raises(TypeError, match="requires sinfo_args"):
        call_pure_packed("f")


def test_print_and_assert_are_void():
    x = var("x", tensor([4]))
    call = rprint(x, format="x: {}")
    assert isinstance(call.args[0], rx.StringImm) and call.args[0].value == "x: {}"
    check(call, TupleStructInfo([]))
    check(assert_op(var("c", TensorStructInfo([], "bool"))), TupleStructInfo([]))
    check(assert_op(n > 0), TupleStructInfo([]))


def test_assert_needs_a_bool_condition():
    with pytest.raises(StructInfoError, match="must be a boolean scalar"):
        infer_struct_info(assert_op(var("x", tensor([4]))))


def test_shape_of():
    check(shape_of(var("x", tensor([n, 4]))), ShapeStructInfo([n, 4]))
    check(shape_of(var("x", TensorStructInfo(None, "float32", 3))), ShapeStructInfo(ndim=3))
    with pytest.raises(StructInfoError, match="R.shape_of expects a tensor"):
        infer_struct_info(shape_of(var("s", ShapeStructInfo(ndim=1))))


def test_null_value():
    check(null_value(), ObjectStructInfo())


# -- calls of functions ------------------------------------------------------------------------
def test_call_of_a_global_var_matches_symbolic_dims():
    gv = GlobalVar("linear")
    gv.struct_info_ = FuncStructInfo([tensor([n, 4])], tensor([n, 8]))
    check(rx.Call(gv, [var("x", tensor([m, 4]))]), tensor([m, 8]))
    check(rx.Call(gv, [var("x", tensor([5, 4]))]), tensor([5, 8]))


def test_call_with_wrong_arity_or_dtype():
    gv = GlobalVar("f")
    gv.struct_info_ = FuncStructInfo([tensor([4])], tensor([4]))
    with pytest.raises(StructInfoError, match="takes 1 argument, but the call passes 2"):
        infer_struct_info(rx.Call(gv, [var("a", tensor([4])), var("b", tensor([4]))]))
    with pytest.raises(StructInfoError, match="does not match"):
        infer_struct_info(rx.Call(gv, [var("a", tensor([4], "int32"))]))


def test_call_of_an_undeclared_global_var():
    with pytest.raises(StructInfoError, match="no known signature"):
        infer_struct_info(rx.Call(GlobalVar("nowhere"), []))


def test_call_of_a_non_function():
    with pytest.raises(StructInfoError, match="is not callable"):
        infer_struct_info(rx.Call(var("x", tensor([4])), []))


# -- control flow and functions ----------------------------------------------------------------
def test_if_joins_both_branches():
    c = var("c", TensorStructInfo([], "bool"))
    a, b = var("a", tensor([2, 3])), var("b", tensor([4, 3]))
    check(rx.If(c, a, b), TensorStructInfo(None, "float32", 2))
    check(rx.If(c, a, a), tensor([2, 3]))


def test_if_condition_must_be_scalar():
    with pytest.raises(StructInfoError, match="condition of `if`"):
        infer_struct_info(rx.If(var("c", tensor([2])), rx.PrimValue(1), rx.PrimValue(2)))


def test_seq_expr_and_function():
    x = var("x", tensor([n]))
    seq = rx.SeqExpr([], x)
    check(seq, tensor([n]))
    func = rx.Function([x], seq, tensor([n]), is_pure=False)
    check(func, FuncStructInfo([tensor([n])], tensor([n]), False))


def test_lca_and_base_of():
    assert is_base_of(TensorStructInfo(None, "", -1), tensor([n]))
    assert not is_base_of(tensor([n]), tensor([m]))
    assert isinstance(struct_info_lca(tensor([2]), ShapeStructInfo(ndim=1)), ObjectStructInfo)


def test_describe():
    assert describe_struct_info(tensor([n, IntImm("int64", 4)])) == 'R.Tensor((n, 4), "float32")'
    assert describe_struct_info(TupleStructInfo([ObjectStructInfo()])) == "R.Tuple(R.Object)"
