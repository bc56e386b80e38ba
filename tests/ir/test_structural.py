"""Structural equality and hashing: renaming is invisible, any real change is reported with
the path of the first difference."""

import numpy as np
import pytest

from mlckit import relax, tir
from mlckit.ir import IRModule, assert_structural_equal, structural_equal, structural_hash


def make_add_one(n=16, dtype="float32", loop_name="i", const=1.0, extent=None):
    """for i in range(extent or n): B[i] = A[i] + const, built node by node."""
    A = tir.decl_buffer((n,), dtype, "A")
    B = tir.decl_buffer((n,), dtype, "B")
    a, b = tir.Var("a", "handle"), tir.Var("b", "handle")
    i = tir.Var(loop_name, "int32")
    store = tir.BufferStore(B, A[i] + tir.const(const, dtype), [i])
    loop = tir.For(i, 0, extent or n, tir.ForKind.SERIAL, store)
    return tir.PrimFunc([a, b], loop, buffer_map={a: A, b: B})


def make_relax_chain(order=("relu", "exp"), dtype="float32"):
    """main(x): lv0 = op0(x); lv1 = op1(lv0); return lv1 — with call_packed-style ExternFuncs."""
    sinfo = relax.TensorStructInfo([4], dtype)
    x = relax.Var("x", sinfo)
    lv0 = relax.Var("lv0", sinfo)
    lv1 = relax.Var("lv1", sinfo)
    b0 = relax.VarBinding(lv0, relax.Call(relax.ExternFunc(order[0]), [x], sinfo_args=[sinfo]))
    b1 = relax.VarBinding(lv1, relax.Call(relax.ExternFunc(order[1]), [lv0], sinfo_args=[sinfo]))
    body = relax.SeqExpr([relax.BindingBlock([b0, b1])], lv1)
    return relax.Function([x], body, sinfo)


def test_same_function_built_twice_with_other_names_is_equal():
    f, g = make_add_one(loop_name="i"), make_add_one(loop_name="k")
    assert structural_equal(f, g)
    assert_structural_equal(f, g)
    assert structural_hash(f) == structural_hash(g)


def test_modules_with_renamed_variables_are_equal():
    m1 = IRModule({"add_one": make_add_one(loop_name="i"), "main": make_relax_chain()})
    m2 = IRModule({"add_one": make_add_one(loop_name="j"), "main": make_relax_chain()})
    assert_structural_equal(m1, m2)
    assert structural_hash(m1) == structural_hash(m2)


@pytest.mark.parametrize(
    "changed, path_fragment, reason",
    [
        (dict(const=2.0), ".value.b.value", "values differ"),
        (dict(extent=8), ".extent.value", "values differ"),
        (dict(dtype="float64"), ".dtype", "values differ"),
    ],
)
def test_a_change_is_reported_with_the_path_of_the_first_difference(changed, path_fragment, reason):
    with pytest.raises(ValueError) as err:
        assert_structural_equal(make_add_one(), make_add_one(**changed))
    message = str(err.value)
    assert path_fragment in message
    assert reason in message
    assert not structural_equal(make_add_one(), make_add_one(**changed))


def test_changed_loop_extent_names_the_loop():
    with pytest.raises(ValueError, match=r"<root>\.body\.extent\.value: values differ"):
        assert_structural_equal(make_add_one(), make_add_one(extent=15))


def test_changed_binding_order_is_reported_at_the_first_binding():
    with pytest.raises(ValueError) as err:
        assert_structural_equal(make_relax_chain(("relu", "exp")), make_relax_chain(("exp", "relu")))
    assert "<root>.body.blocks[0].bindings[0].value.op" in str(err.value)


def test_free_variables_need_map_free_vars():
    x, y = tir.Var("x"), tir.Var("y")
    assert not structural_equal(x + 1, y + 1)
    assert structural_equal(x + 1, y + 1, map_free_vars=True)
    assert structural_equal(x + 1, x + 1)


def test_variables_must_be_bound_consistently():
    # (x, x) vs (y, z): the second use of x cannot match z once x is matched with y
    x, y, z = tir.Var("x"), tir.Var("y"), tir.Var("z")
    assert not structural_equal(x + x, y + z, map_free_vars=True)
    assert structural_equal(x + x, y + y, map_free_vars=True)


def test_constant_arrays_compare_by_value_and_dtype():
    a = relax.Constant(np.arange(4, dtype="float32"))
    assert structural_equal(a, relax.Constant(np.arange(4, dtype="float32")))
    assert not structural_equal(a, relax.Constant(np.arange(4, dtype="float64")))
    assert not structural_equal(a, relax.Constant(np.arange(1, 5, dtype="float32")))


def test_relax_params_map_symbolic_shape_variables():
    def f(name):
        n = tir.Var(name, "int64")
        x = relax.Var("x", relax.TensorStructInfo([n, 4], "float32"))
        return relax.Function([x], relax.SeqExpr([], x), relax.TensorStructInfo([n, 4], "float32"))

    assert_structural_equal(f("n"), f("m"))
    assert structural_hash(f("n")) == structural_hash(f("m"))


def test_global_vars_compare_by_name():
    m1 = IRModule({"f": make_add_one()})
    m2 = IRModule({"g": make_add_one()})
    with pytest.raises(ValueError, match="key 'f' is missing"):
        assert_structural_equal(m1, m2)


def test_first_difference_gives_the_path_and_the_two_sides():
    from mlckit.ir.structural import first_difference
    from mlckit.script import tir as T

    @T.prim_func
    def a(A: T.Buffer((4, 4), "float32"), B: T.Buffer((4, 4), "float32")):
        for i, j in T.grid(4, 4):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vj, vi]

    @T.prim_func
    def b(A: T.Buffer((4, 4), "float32"), B: T.Buffer((4, 4), "float32")):
        for i, j in T.grid(4, 4):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj]

    assert first_difference(a.body, a.body) is None
    d = first_difference(a.body, b.body, map_free_vars=True)
    assert d.path == "<root>.block.body.body.body.block.reads[0].region[0].min"
    assert (d.lhs.name_hint, d.rhs.name_hint) == ("vj", "vi")
    assert d.reason == "variables are bound to different definitions"
