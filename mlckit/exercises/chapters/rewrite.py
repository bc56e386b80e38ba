"""Chapter "Graph rewriting with PyExprMutator": rewrite Relax programs, answer a function
``rewrite(mod) -> mod`` (a mutator inside, a module pass works too)."""

from __future__ import annotations

import numpy as np

from ..checks import calls_op, nodes, passes_change
from ..exercise import Exercise
from ..registry import register

F32 = "float32"

MUL_ADD = '''
@I.ir_module
class before:
    @R.function
    def main(x: R.Tensor(({n}, 4), "float32"), y: R.Tensor(({n}, 4), "float32"),
             z: R.Tensor(({n}, 4), "float32")):
        with R.dataflow():
            lv0 = R.multiply(x, y)
            gv0 = R.add(lv0, z)
            R.output(gv0)
        return gv0
'''

MLP = '''
@I.ir_module
class before:
    @R.function
    def main(x: R.Tensor(({n}, 4), "float32"), w0: R.Tensor((4, 3), "float32"),
             b0: R.Tensor((3,), "float32"), w1: R.Tensor((3, 2), "float32"),
             b1: R.Tensor((2,), "float32")):
        with R.dataflow():
            lv0 = R.matmul(x, w0)
            lv1 = R.add(lv0, b0)
            lv2 = R.nn.relu(lv1)
            lv3 = R.matmul(lv2, w1)
            gv = R.add(lv3, b1)
            R.output(gv)
        return gv
'''

DOUBLE_RELU = '''
@I.ir_module
class before:
    @R.function
    def main(x: R.Tensor(({n}, 4), "float32")):
        with R.dataflow():
            lv0 = R.nn.relu(x)
            lv1 = R.nn.relu(lv0)
            gv = R.add(lv1, x)
            R.output(gv)
        return gv
'''

TRIPLE = [("x", ("n", 4), F32), ("y", ("n", 4), F32), ("z", ("n", 4), F32)]


def mlp(x, w0, b0, w1, b1):
    return np.maximum(x @ w0 + b0, 0) @ w1 + b1


def relu_count(expected: int):
    """``main`` calls relax.nn.relu ``expected`` times."""

    def check(answer, reference) -> list[str]:
        calls = [n for n in nodes(answer["main"]) if type(n).__name__ == "Call"
                 and getattr(n.op, "name", None) == "relax.nn.relu"]
        if len(calls) == expected:
            return []
        return [f"`main` calls relax.nn.relu {len(calls)} times, expected {expected}"]

    return check


def primitive_functions(expected: int):
    """The module holds ``expected`` Relax functions marked Primitive (the fused ones)."""

    def check(answer, reference) -> list[str]:
        fused = [gv.name_hint for gv, f in answer.functions.items()
                 if type(f).__name__ == "Function" and f.attrs and f.attrs.get("Primitive")]
        if len(fused) == expected:
            return []
        return [f"the module has {len(fused)} functions marked Primitive "
                f"({', '.join(fused) or 'none'}), expected {expected}"]

    return check


register(Exercise(
    name="rewrite.ewise_fma",
    title="Multiply and add into one ewise_fma",
    statement="Write rewrite(mod): a relax.PyExprMutator that turns `add(multiply(a, b), c)` "
              "into `relax.op.ewise_fma(a, b, c)` in main, then drops the unused multiply "
              "(relax.analysis.remove_all_unused).",
    kind="rewrite",
    answer_name="rewrite",
    program=MUL_ADD,
    start='''
@relax.expr_functor.mutator
class EwiseFMARewriter(relax.PyExprMutator):
    def visit_call_(self, call):
        call = self.visit_expr_post_order(call)
        ...

def rewrite(mod):
    func = EwiseFMARewriter().visit_expr(mod["main"])
    func = relax.analysis.remove_all_unused(func)
    return IRModule({"main": func})
''',
    solution='''
@relax.expr_functor.mutator
class EwiseFMARewriter(relax.PyExprMutator):
    def visit_call_(self, call):
        call = self.visit_expr_post_order(call)
        if call.op != tvm.ir.Op.get("relax.add"):
            return call
        value = self.lookup_binding(call.args[0])
        if not isinstance(value, relax.Call) or value.op != tvm.ir.Op.get("relax.multiply"):
            return call
        return relax.op.ewise_fma(value.args[0], value.args[1], call.args[1])

def rewrite(mod):
    func = EwiseFMARewriter().visit_expr(mod["main"])
    func = relax.analysis.remove_all_unused(func)
    return IRModule({"main": func})
''',
    spec=lambda x, y, z: x * y + z,
    inputs=TRIPLE,
    outputs=[("gv0", ("n", 4), F32)],
    sizes=[{"n": 3}, {"n": 5}],
    structure=[calls_op("relax.ewise_fma"), calls_op("relax.multiply", present=False),
               calls_op("relax.add", present=False)],
    hints=["self.lookup_binding(call.args[0]) gives the call that computed the add's first "
           "argument.",
           "Compare ops with tvm.ir.Op.get(\"relax.add\") and \"relax.multiply\".",
           "relax.op.ewise_fma(a, b, c) builds the new call."],
))

register(Exercise(
    name="rewrite.fuse_matmul_add",
    title="Fuse matmul and add",
    statement="Write rewrite(mod): replace every `add(matmul(x, w), b)` in main by a call to "
              "a new Relax function (attribute Primitive = 1) that does the matmul and the "
              "add, as the course's fusion pass does. Both layers of the MLP get fused.",
    kind="rewrite",
    answer_name="rewrite",
    program=MLP,
    start='''
@relax.expr_functor.mutator
class MatmulAddFusor(relax.PyExprMutator):
    def __init__(self, mod):
        super().__init__()
        self.mod_ = mod
        self.counter = 0

    def visit_call_(self, call):
        call = self.visit_expr_post_order(call)
        ...

def rewrite(mod):
    fusor = MatmulAddFusor(mod)
    func = relax.analysis.remove_all_unused(fusor.visit_expr(mod["main"]))
    fusor.builder_.update_func(mod.get_global_var("main"), func)
    return fusor.builder_.get()
''',
    solution='''
@relax.expr_functor.mutator
class MatmulAddFusor(relax.PyExprMutator):
    def __init__(self, mod):
        super().__init__()
        self.mod_ = mod
        self.counter = 0

    def visit_call_(self, call):
        call = self.visit_expr_post_order(call)
        if call.op != tvm.ir.Op.get("relax.add"):
            return call
        value = self.lookup_binding(call.args[0])
        if not isinstance(value, relax.Call) or value.op != tvm.ir.Op.get("relax.matmul"):
            return call
        x, w, b = value.args[0], value.args[1], call.args[1]
        params = [relax.Var(n, relax.TensorStructInfo(v.struct_info.shape, v.struct_info.dtype))
                  for n, v in (("x", x), ("w", w), ("b", b))]
        bb = relax.BlockBuilder()
        name = f"fused_matmul_add{self.counter}"
        self.counter += 1
        with bb.function(name, params):
            with bb.dataflow():
                lv0 = bb.emit(relax.op.matmul(params[0], params[1]))
                gv = bb.emit_output(relax.op.add(lv0, params[2]))
            bb.emit_func_output(gv)
        fused = bb.get()[name].with_attr("Primitive", 1)
        gvar = self.builder_.add_func(fused, name)
        return relax.Call(gvar, [x, w, b], None, None)

def rewrite(mod):
    fusor = MatmulAddFusor(mod)
    func = relax.analysis.remove_all_unused(fusor.visit_expr(mod["main"]))
    fusor.builder_.update_func(mod.get_global_var("main"), func)
    return fusor.builder_.get()
''',
    spec=mlp,
    inputs=[("x", ("n", 4), F32), ("w0", (4, 3), F32), ("b0", (3,), F32),
            ("w1", (3, 2), F32), ("b1", (2,), F32)],
    outputs=[("gv", ("n", 2), F32)],
    sizes=[{"n": 1}, {"n": 3}],
    structure=[calls_op("relax.matmul", present=False), primitive_functions(2)],
    hints=["Match an add whose first argument's binding (self.lookup_binding) is a matmul.",
           "Build the fused function with a relax.BlockBuilder and mark it "
           "`.with_attr(\"Primitive\", 1)`.",
           "self.builder_.add_func(fused, name) gives the GlobalVar to call."],
))

register(Exercise(
    name="rewrite.double_relu",
    title="Drop a repeated ReLU",
    statement="relu(relu(x)) is relu(x). Write rewrite(mod) whose mutator replaces a relu "
              "applied to the result of a relu by that inner result, then removes what is "
              "unused.",
    kind="rewrite",
    answer_name="rewrite",
    program=DOUBLE_RELU,
    start='''
@relax.expr_functor.mutator
class DoubleReLU(relax.PyExprMutator):
    def visit_call_(self, call):
        call = self.visit_expr_post_order(call)
        ...

def rewrite(mod):
    func = relax.analysis.remove_all_unused(DoubleReLU().visit_expr(mod["main"]))
    return IRModule({"main": func})
''',
    solution='''
@relax.expr_functor.mutator
class DoubleReLU(relax.PyExprMutator):
    def visit_call_(self, call):
        call = self.visit_expr_post_order(call)
        relu = tvm.ir.Op.get("relax.nn.relu")
        if call.op != relu:
            return call
        inner = self.lookup_binding(call.args[0])
        if isinstance(inner, relax.Call) and inner.op == relu:
            return call.args[0]
        return call

def rewrite(mod):
    func = relax.analysis.remove_all_unused(DoubleReLU().visit_expr(mod["main"]))
    return IRModule({"main": func})
''',
    spec=lambda x: np.maximum(x, 0) + x,
    inputs=[("x", ("n", 4), F32)],
    outputs=[("gv", ("n", 4), F32)],
    sizes=[{"n": 2}, {"n": 5}],
    structure=[relu_count(1)],
    hints=["Return call.args[0] (the inner relu's variable) instead of the outer call.",
           "Check both: the call is a relu, and lookup_binding of its argument is a relu."],
))

register(Exercise(
    name="rewrite.lower_relu",
    title="Map relu to a TIR kernel",
    statement="Write rewrite(mod) whose mutator replaces every relax.nn.relu call in main by "
              "a call_tir to a TIR kernel made from topi.nn.relu (self.builder_.call_te), as "
              "the course's LowerToTensorIR does.",
    kind="rewrite",
    answer_name="rewrite",
    program=DOUBLE_RELU,
    start='''
@relax.expr_functor.mutator
class LowerReLU(relax.PyExprMutator):
    def __init__(self, mod):
        super().__init__()
        self.mod_ = mod

    def visit_call_(self, call):
        call = self.visit_expr_post_order(call)
        ...

def rewrite(mod):
    lower = LowerReLU(mod)
    lower.builder_.update_func(mod.get_global_var("main"), lower.visit_expr(mod["main"]))
    return lower.builder_.get()
''',
    solution='''
@relax.expr_functor.mutator
class LowerReLU(relax.PyExprMutator):
    def __init__(self, mod):
        super().__init__()
        self.mod_ = mod

    def visit_call_(self, call):
        call = self.visit_expr_post_order(call)
        if call.op == tvm.ir.Op.get("relax.nn.relu"):
            return self.builder_.call_te(topi.nn.relu, call.args[0])
        return call

def rewrite(mod):
    lower = LowerReLU(mod)
    lower.builder_.update_func(mod.get_global_var("main"), lower.visit_expr(mod["main"]))
    return lower.builder_.get()
''',
    spec=lambda x: np.maximum(x, 0) + x,
    inputs=[("x", ("n", 4), F32)],
    outputs=[("gv", ("n", 4), F32)],
    sizes=[{"n": 2}, {"n": 5}],
    structure=[calls_op("relax.nn.relu", present=False), calls_op("relax.call_tir"),
               calls_op("relax.add")],
    hints=["self.builder_.call_te(topi.nn.relu, call.args[0]) adds a TIR kernel to the "
           "module and returns its call_tir.",
           "Replace only calls whose op is tvm.ir.Op.get(\"relax.nn.relu\")."],
))


MLP_RELU = '''
@I.ir_module
class before:
    @R.function
    def main(x: R.Tensor(({n}, 4), "float32"), w: R.Tensor((4, 3), "float32"),
             b: R.Tensor((3,), "float32")):
        with R.dataflow():
            lv0 = R.matmul(x, w)
            lv1 = R.add(lv0, b)
            gv = R.nn.relu(lv1)
            R.output(gv)
        return gv
'''

register(Exercise(
    name="rewrite.fusion_pipeline",
    title="A pipeline that fuses, watched with the PassStepper",
    statement="Give the list of passes that turns main into one call_tir of one fused TIR "
              "kernel (matmul, add and relu together): legalize the operators to TIR, "
              "annotate the TIR kernels' patterns, group the operators, merge each group's TIR. "
              "Watch each step with `PassStepper(start_program(), passes)` "
              "(mlckit.notebook); the check runs your list through the PassStepper too.",
    kind="pipeline",
    answer_name="passes",
    program=MLP_RELU,
    start='''
passes = [
    relax.transform.LegalizeOps(),
    ...
]
''',
    solution='''
passes = [
    relax.transform.LegalizeOps(),
    relax.transform.AnnotateTIROpPattern(),
    relax.transform.FuseOps(),
    relax.transform.FuseTIR(),
]
''',
    spec=lambda x, w, b: np.maximum(x @ w + b, 0),
    inputs=[("x", ("n", 4), F32), ("w", (4, 3), F32), ("b", (3,), F32)],
    outputs=[("gv", ("n", 3), F32)],
    sizes=[{"n": 2}, {"n": 1}],
    structure=[calls_op("relax.call_tir", count=1),
               passes_change("LegalizeOps", "AnnotateTIROpPattern", "FuseOps", "FuseTIRInner")],
    structure_uses_reference=False,
    hints=["Four passes of relax.transform, all written with ().",
           "FuseOps groups only operators whose TIR kernels carry a pattern "
           "(AnnotateTIROpPattern), and only once they are TIR (LegalizeOps).",
           "FuseTIR comes last: it merges each group into one PrimFunc."],
))
