"""The operator strategy registry: implementations by level, condition and target."""

import pytest

from mlckit import TVMError, relax, topi
from mlckit.ir import Op
from mlckit.relax import strategy
from mlckit.target import Target


def _call():
    x = relax.Var("x", relax.TensorStructInfo((2, 3), "float32"))
    return relax.BlockBuilder().normalize(relax.op.exp(x))


def test_every_operator_of_the_families_has_a_generic_implementation():
    for name in ("add", "subtract", "multiply", "divide", "floor_divide", "power", "maximum",
                 "minimum", "equal", "not_equal", "less", "less_equal", "greater",
                 "greater_equal", "negative", "abs", "exp", "log", "sqrt", "rsqrt", "tanh",
                 "sigmoid", "erf", "ewise_fma", "astype", "zeros", "ones", "full",
                 "zeros_like", "ones_like", "full_like"):
        impls = strategy.implementations(f"relax.{name}")
        assert [i.name for i in impls] == [f"{name}.generic"], name
        assert impls[0].level == 10 and impls[0].targets is None and impls[0].kind == "te"


def test_implementations_are_listed_highest_level_first_ties_in_registration_order():
    fn = strategy.te_compute(topi.exp, "tir_exp")
    try:
        strategy.register("relax.exp", "exp.a", level=10)(fn)
        strategy.register("relax.exp", "exp.b", level=30)(fn)
        assert [i.name for i in strategy.implementations("relax.exp")] == \
            ["exp.b", "exp.generic", "exp.a"]
        assert strategy.select(_call()).name == "exp.b"
    finally:
        strategy.unregister("relax.exp", "exp.a")
        strategy.unregister("relax.exp", "exp.b")


def test_a_name_is_registered_once_unless_overridden():
    fn = strategy.te_compute(topi.exp)
    with pytest.raises(ValueError, match="relax.exp already has an implementation named "
                                         "'exp.generic'; pass override=True"):
        strategy.register("relax.exp", "exp.generic")(fn)


def test_unknown_operator_and_unknown_implementation_are_reported():
    with pytest.raises(KeyError, match="operator 'relax.no_such_op' is not registered"):
        strategy.register("relax.no_such_op", "x")(lambda bb, call: call)
    with pytest.raises(KeyError, match=r"relax.exp has no implementation 'nope' \(it has: "
                                       r"exp.generic\)"):
        strategy.unregister("relax.exp", "nope")


def test_targets_match_kind_names_and_keys():
    impl = strategy.Implementation("relax.exp", "exp.cpu", lambda bb, c: c, targets=("cpu",))
    assert impl.serves(Target("llvm")) and impl.serves(Target("lnumpy"))
    assert not impl.serves(Target("cuda"))
    assert impl.rejection(_call(), Target("cuda")) == "targets cpu"


def test_select_defaults_to_llvm_and_reads_the_current_target():
    assert strategy.current_target().kind.name == "llvm"
    with Target("lnumpy"):
        assert strategy.current_target().kind.name == "lnumpy"


def test_an_op_without_implementations_selects_none():
    call = relax.op.shape_of(relax.Var("x", relax.TensorStructInfo((2,), "float32")))
    assert strategy.select(call) is None
    assert not strategy.has_implementations("relax.shape_of")


def test_library_functions_are_global_functions():
    from mlckit.ffi import get_global_func

    def double(x, out):
        out.copyfrom(2 * x.numpy())

    impl = strategy.register_library("relax.exp", "not_exp", double, level=1)
    try:
        assert impl.kind == "library"
        assert get_global_func("mlckit.lib.not_exp") is double
    finally:
        strategy.unregister("relax.exp", "not_exp")


def test_decorator_refuses_a_non_function():
    with pytest.raises(TVMError, match="decorates a function"):
        strategy.register("relax.exp", "exp.bad")(42)


def test_ops_know_tvm_argument_names():
    assert Op.get("relax.ewise_fma").get_attr("arguments") == ("x1", "x2", "x3")


def test_an_implementation_of_a_form_is_chosen_only_for_that_form():
    fn = strategy.te_compute(topi.exp, "tir_exp")
    strategy.register("relax.exp", "exp.other_form", level=50, form="other")(fn)
    try:
        assert strategy.select(_call()).name == "exp.generic"  # LegalizeOps' plain form
        assert strategy.select(_call(), form="other").name == "exp.other_form"
        assert [i.name for i in strategy.implementations("relax.exp", form="other")] == \
            ["exp.other_form"]
        assert strategy.has_implementations("relax.exp", form="other")
        assert not strategy.has_implementations("relax.exp", form="nothing")
        assert strategy.select(_call(), form="nothing") is None
    finally:
        strategy.unregister("relax.exp", "exp.other_form")


def test_matmul_has_transposed_form_implementations():
    impls = strategy.implementations("relax.matmul", form="transposed_b")
    assert [(i.name, i.level, i.kind) for i in impls] == [
        ("matmul_nt", 20, "library"), ("matmul_nt.j_inner", 15, "te"),
        ("matmul_nt.generic", 10, "te")]
    assert [i.name for i in strategy.implementations("relax.matmul", form="")] == [
        "matmul", "matmul.tiled", "matmul.generic"]


def test_a_library_function_may_take_the_vms_arrays():
    from mlckit.ffi import get_global_func

    def copy(x, out):
        out[...] = x

    strategy.register_library("relax.exp", "not_exp_raw", copy, level=1, vm_arrays=True)
    try:
        assert get_global_func("mlckit.lib.not_exp_raw")._mlckit_vm_builtin
    finally:
        strategy.unregister("relax.exp", "not_exp_raw")


def test_implementations_lists_the_plain_form_unless_asked_for_every_form():
    names = [i.name for i in strategy.implementations("relax.matmul", form=None)]
    assert {"matmul", "matmul.tiled", "matmul.generic", "matmul_nt", "matmul_nt.j_inner",
            "matmul_nt.generic"} == set(names)
    assert [i.name for i in strategy.implementations("relax.matmul")] == [
        "matmul", "matmul.tiled", "matmul.generic"]
