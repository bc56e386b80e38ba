"""ExprVisitor / ExprMutator: dispatch by node class."""

from mlckit.relax.expr import Call, DataflowVar, ExternFunc, Var
from mlckit.relax.expr_functor import ExprMutator, ExprVisitor
from mlckit.script import relax as R


@R.function
def main(x: R.Tensor((2,), "float32")):
    with R.dataflow():
        y = R.call_dps_packed("f", (x,), R.Tensor((2,), "float32"))
        z = R.call_dps_packed("g", (y,), R.Tensor((2,), "float32"))
        R.output(z)
    return z


def test_visitor_counts_calls_and_dataflow_vars():
    class Count(ExprVisitor):
        def __init__(self):
            self.calls, self.dfvars, self.externs = 0, 0, []

        def visit_call_(self, op):
            self.calls += 1
            super().visit_call_(op)

        def visit_dataflow_var_(self, op):
            self.dfvars += 1

        def visit_extern_func_(self, op):
            self.externs.append(op.global_symbol)

    c = Count()
    c.visit_expr(main)
    assert c.calls == 2 and c.externs == ["f", "g"] and c.dfvars == 1


def test_mutator_rewrites_and_emits_bindings():
    class Rename(ExprMutator):
        def visit_extern_func_(self, op):
            return ExternFunc(op.global_symbol.upper())

    new = Rename().visit_expr(main)
    assert '"F"' in new.script() and '"G"' in new.script()
    assert '"f"' in main.script()

    class Identity(ExprMutator):
        pass

    assert Identity().visit_expr(main) is main

    class LogBefore(ExprMutator):
        def visit_call_(self, op):
            op = super().visit_call_(op)
            if isinstance(op.op, ExternFunc):
                return op
            self.emit(Call(ExternFunc("log"), []), "_")
            return op

    out = LogBefore().visit_expr(main)
    bindings = out.body.blocks[0].bindings
    assert len(bindings) == 4
    assert isinstance(bindings[0].var, DataflowVar) and isinstance(bindings[3].var, Var)
