"""relax.PyExprVisitor / relax.PyExprMutator: the course's graph-rewriting pattern.

The rewrite fuses ``call_tir(multiply)`` followed by ``call_tir(add)`` into one call of a
fused kernel added with ``self.builder_.add_func``; the result is compared with the expected
TVMScript and run against the original module.
"""

import numpy as np
import pytest

import mlckit
from mlckit import relax
from mlckit.ir import IRModule, assert_structural_equal
from mlckit.script import ir as I
from mlckit.script import relax as R
from mlckit.script import tir as T


@I.ir_module
class Before:
    @T.prim_func(private=True)
    def multiply(A: T.Buffer((3, 4), "float32"), B: T.Buffer((3, 4), "float32"),
                 C: T.Buffer((3, 4), "float32")):
        for i, j in T.grid(3, 4):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = A[vi, vj] * B[vi, vj]

    @T.prim_func(private=True)
    def add(A: T.Buffer((3, 4), "float32"), B: T.Buffer((3, 4), "float32"),
            C: T.Buffer((3, 4), "float32")):
        for i, j in T.grid(3, 4):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = A[vi, vj] + B[vi, vj]

    @R.function
    def main(x: R.Tensor((3, 4), "float32"), y: R.Tensor((3, 4), "float32")):
        cls = Before
        with R.dataflow():
            lv0 = R.call_tir(cls.multiply, (x, y), out_sinfo=R.Tensor((3, 4), "float32"))
            gv0 = R.call_tir(cls.add, (lv0, y), out_sinfo=R.Tensor((3, 4), "float32"))
            R.output(gv0)
        return gv0


@T.prim_func(private=True)
def fused_multiply_add(A: T.Buffer((3, 4), "float32"), B: T.Buffer((3, 4), "float32"),
                       C: T.Buffer((3, 4), "float32"), D: T.Buffer((3, 4), "float32")):
    for i, j in T.grid(3, 4):
        with T.block("D"):
            vi, vj = T.axis.remap("SS", [i, j])
            D[vi, vj] = A[vi, vj] * B[vi, vj] + C[vi, vj]


def _calls_kernel(expr, name: str) -> bool:
    return (isinstance(expr, relax.Call) and expr.op == mlckit.ir.Op.get("relax.call_tir")
            and expr.args[0].name_hint == name)


@relax.expr_functor.mutator
class FuseMultiplyAdd(relax.PyExprMutator):
    """The course's MatmulAddFusor, on call_tir kernels."""

    def __init__(self, mod: IRModule):
        super().__init__()
        self.mod_ = mod

    def transform(self, clean: bool = True) -> IRModule:
        for global_var, func in self.mod_.functions.items():
            if not isinstance(func, relax.Function):
                continue
            updated_func = self.visit_expr(func)
            if clean:
                updated_func = relax.analysis.remove_all_unused(updated_func)
            self.builder_.update_func(global_var, updated_func)
        return self.builder_.get()

    def visit_call_(self, call):
        call = self.visit_expr_post_order(call)
        if not _calls_kernel(call, "add"):
            return call
        lhs, rhs = call.args[1].fields
        value = self.lookup_binding(lhs)
        if value is None or not _calls_kernel(value, "multiply"):
            return call
        x, w = value.args[1].fields
        fused = self.builder_.add_func(fused_multiply_add, "fused_multiply_add")
        return relax.op.call_tir(fused, [x, w, rhs], call.struct_info)


@I.ir_module
class Expected:
    @T.prim_func(private=True)
    def fused_multiply_add(A: T.Buffer((3, 4), "float32"), B: T.Buffer((3, 4), "float32"),
                           C: T.Buffer((3, 4), "float32"), D: T.Buffer((3, 4), "float32")):
        for i, j in T.grid(3, 4):
            with T.block("D"):
                vi, vj = T.axis.remap("SS", [i, j])
                D[vi, vj] = A[vi, vj] * B[vi, vj] + C[vi, vj]

    @R.function
    def main(x: R.Tensor((3, 4), "float32"), y: R.Tensor((3, 4), "float32")):
        cls = Expected
        with R.dataflow():
            gv0 = R.call_tir(cls.fused_multiply_add, (x, y, y),
                             out_sinfo=R.Tensor((3, 4), "float32"))
            R.output(gv0)
        return gv0


def _run(mod, *args):
    vm = relax.VirtualMachine(relax.build(mod, target="llvm"), mlckit.cpu())
    return vm["main"](*args).numpy()


def test_fusion_rewrite_equals_script_is_well_formed_and_computes_the_same():
    after = FuseMultiplyAdd(Before).transform()
    assert_structural_equal(after, Expected)
    assert relax.analysis.well_formed(after)
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal((3, 4)).astype("float32") for _ in range(2))
    before = _run(Before, a, b)
    np.testing.assert_allclose(before, a * b + b, rtol=1e-6)
    np.testing.assert_allclose(_run(after, a, b), before, rtol=1e-6)


def test_the_mutator_inside_a_module_pass_as_the_course_wraps_it():
    @mlckit.ir.transform.module_pass(opt_level=2, name="FuseMultiplyAdd")
    class FuseMultiplyAddPass:
        def transform_module(self, mod, ctx):
            return FuseMultiplyAdd(mod).transform()

    assert_structural_equal(FuseMultiplyAddPass()(Before), Expected)


def test_rewrite_leaves_the_producer_until_remove_all_unused():
    main = FuseMultiplyAdd(Before).transform(clean=False)["main"]

    @R.function
    def expected(x: R.Tensor((3, 4), "float32"), y: R.Tensor((3, 4), "float32")):
        with R.dataflow():
            lv0 = R.call_tir(Before.get_global_var("multiply"), (x, y),
                             out_sinfo=R.Tensor((3, 4), "float32"))
            gv0 = R.call_tir(Expected.get_global_var("fused_multiply_add"), (x, y, y),
                             out_sinfo=R.Tensor((3, 4), "float32"))
            R.output(gv0)
        return gv0

    assert_structural_equal(main.without_attr("global_symbol"),
                            expected.without_attr("global_symbol"))
    cleaned = relax.analysis.remove_all_unused(main)
    assert_structural_equal(cleaned, Expected["main"])


def test_identity_mutator_returns_the_function_itself():
    @relax.expr_functor.mutator
    class Identity(relax.PyExprMutator):
        pass

    assert Identity().visit_expr(Before["main"]) is Before["main"]


def test_emitting_from_a_mutator_binds_before_the_visited_binding():
    """Split the add of ``gv0`` into ``lv = add(lv0, y)`` then ``gv0 = add(lv, y)``."""

    @relax.expr_functor.mutator
    class AddTwice(relax.PyExprMutator):
        def visit_call_(self, call):
            call = self.visit_expr_post_order(call)
            if not _calls_kernel(call, "add"):
                return call
            first = self.builder_.emit(call)
            return relax.op.call_tir(call.args[0], [first, call.args[1].fields[1]],
                                     call.struct_info)

    main = AddTwice(Before).visit_expr(Before["main"])

    @I.ir_module
    class Twice:
        multiply = Before["multiply"]

        add = Before["add"]

        @R.function
        def main(x: R.Tensor((3, 4), "float32"), y: R.Tensor((3, 4), "float32")):
            cls = Twice
            with R.dataflow():
                lv0 = R.call_tir(cls.multiply, (x, y), out_sinfo=R.Tensor((3, 4), "float32"))
                lv = R.call_tir(cls.add, (lv0, y), out_sinfo=R.Tensor((3, 4), "float32"))
                gv0 = R.call_tir(cls.add, (lv, y), out_sinfo=R.Tensor((3, 4), "float32"))
                R.output(gv0)
            return gv0

    assert_structural_equal(main, Twice["main"])
    assert [b.var.name_hint for b in main.body.blocks[0].bindings] == ["lv0", "lv", "gv0"]
    mod = Before.copy()
    mod["main"] = main
    a = np.full((3, 4), 2.0, "float32")
    b = np.full((3, 4), 3.0, "float32")
    np.testing.assert_allclose(_run(mod, a, b), a * b + b + b)


def test_set_var_remap_replaces_uses():
    @relax.expr_functor.mutator
    class UseXForY(relax.PyExprMutator):
        def __init__(self, x, y):
            super().__init__()
            self.set_var_remap(y.vid, x)

    main = Before["main"]
    x, y = main.params
    mutator = UseXForY(x, y)
    assert mutator.get_var_remap(y.vid) is x and mutator.get_var_remap(x) is None
    new = mutator.visit_expr(main)

    @R.function
    def expected(x: R.Tensor((3, 4), "float32"), y: R.Tensor((3, 4), "float32")):
        with R.dataflow():
            lv0 = R.call_tir(Before.get_global_var("multiply"), (x, x),
                             out_sinfo=R.Tensor((3, 4), "float32"))
            gv0 = R.call_tir(Before.get_global_var("add"), (lv0, x),
                             out_sinfo=R.Tensor((3, 4), "float32"))
            R.output(gv0)
        return gv0

    assert_structural_equal(new.without_attr("global_symbol"),
                            expected.without_attr("global_symbol"))


def test_lookup_binding_and_with_struct_info():
    seen = {}

    @relax.expr_functor.mutator
    class Look(relax.PyExprMutator):
        def visit_call_(self, call):
            call = self.visit_expr_post_order(call)
            for arg in call.args[1].fields:
                seen[arg.name_hint] = self.lookup_binding(arg)
            return call

    mutator = Look()
    mutator.visit_expr(Before["main"])
    assert seen["x"] is None and seen["y"] is None  # parameters have no binding
    assert _calls_kernel(seen["lv0"], "multiply")
    x = Before["main"].params[0]
    assert mutator.with_struct_info(x, x.struct_info) is x
    wider = mutator.with_struct_info(x, relax.TensorStructInfo(ndim=2, dtype="float32"))
    assert wider is not x and wider.name_hint == "x" and wider.struct_info.ndim == 2


def test_visitor_dispatches_definitions_by_kind():
    @relax.expr_functor.visitor
    class Collect(relax.PyExprVisitor):
        def __init__(self):
            self.defs, self.calls = [], []

        def visit_var_def_(self, var):
            self.defs.append(("var", var.name_hint))

        def visit_dataflow_var_def_(self, var):
            self.defs.append(("dataflow", var.name_hint))

        def visit_call_(self, op):
            if op.op == mlckit.ir.Op.get("relax.call_tir"):
                self.calls.append(op.args[0].name_hint)
            super().visit_call_(op)

    c = Collect()
    c.visit_expr(Before["main"])
    assert c.defs == [("var", "x"), ("var", "y"), ("dataflow", "lv0"), ("var", "gv0")]
    assert c.calls == ["multiply", "add"]


def test_decorators_check_their_class():
    with pytest.raises(mlckit.TVMError, match=r"decorates a subclass of relax.PyExprMutator"):
        relax.expr_functor.mutator(relax.PyExprVisitor)
    with pytest.raises(mlckit.TVMError, match=r"decorates a subclass of relax.PyExprVisitor"):
        relax.expr_functor.visitor(int)


def test_a_visit_method_returning_none_is_named_not_the_next_operator():
    # Without the check, relax.multiply would complain that its argument is not a tensor.
    @relax.expr_functor.mutator
    class ForgetsToReturn(relax.PyExprMutator):
        def visit_call_(self, call):
            if call.op.name == "relax.call_tir":
                return None
            return super().visit_call_(call)

    with pytest.raises(mlckit.TVMError,
                       match=r"ForgetsToReturn\.visit_call_ returned None for `R\.call_tir"):
        ForgetsToReturn(Before).visit_expr(Before["main"])
