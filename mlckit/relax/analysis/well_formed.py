"""Relax well-formedness: the rules TVM's ``relax.analysis.well_formed`` checks.

``check_well_formed(mod_or_func)`` raises ``mlckit.DiagnosticError`` located at the binding
that breaks a rule; ``well_formed(...)`` returns a bool.  Rules checked:

- every variable is defined before use, and defined once; a DataflowVar is used only
  inside the dataflow block defining it;
- symbolic (TIR) variables in struct infos and shapes are defined by the parameters or by
  an earlier ``R.match_cast``;
- impure calls (``R.call_packed``, ``R.print``, ``R.assert_op``, impure functions) never
  appear in a dataflow block, nor in a function annotated pure;
- calls to ``cls.f`` refer to functions of the module; ``R.call_tir`` calls a PrimFunc
  whose signature fits the call: argument count, input dtypes and shapes (symbolic dims
  matched), and the out_sinfo its output buffers imply (``call_tir_signature.py``);
- ``if`` is not used inside a dataflow block.

Example::

    check_well_formed(mod)    # raises DiagnosticError("DataflowVar 'lv0' is used outside ...")
"""

from __future__ import annotations

from typing import Any

from mlckit.ir.diagnostics import DiagnosticError
from mlckit.ir.module import GlobalVar, IRModule
from mlckit.ir.node import Node
from mlckit.ir.op import Op
from mlckit.tir import expr as tx

from ..expr import (
    BindingBlock,
    Call,
    DataflowBlock,
    DataflowVar,
    Expr,
    ExternFunc,
    Function,
    If,
    MatchCast,
    PrimValue,
    SeqExpr,
    ShapeExpr,
    Var,
    VarBinding,
)
from ..struct_info import (
    FuncStructInfo,
    PrimStructInfo,
    ShapeStructInfo,
    StructInfo,
    TensorStructInfo,
    TupleStructInfo,
)
from .call_tir_signature import call_tir_mismatch


def free_relax_vars(expr: Any) -> list:
    """The relax Vars an expression uses (first use first; bound ones included)."""
    out: list = []

    def walk(x):
        if isinstance(x, Var):
            if not any(x is v for v in out):
                out.append(x)
            return
        if isinstance(x, (Function, StructInfo, tx.PrimExpr)):
            return
        if isinstance(x, Node):
            for name in type(x).field_names():
                walk(getattr(x, name))
        elif isinstance(x, (list, tuple)):
            for y in x:
                walk(y)

    walk(expr)
    return out


def definable_tir_vars(sinfo: Any) -> list:
    """TIR vars an annotation *defines*: those appearing alone as a dim or a prim value."""
    out: list = []

    def add(e):
        if isinstance(e, tx.Var) and not any(e is v for v in out):
            out.append(e)

    def go(s):
        if isinstance(s, TensorStructInfo) and s.dims is not None:
            for d in s.dims:
                add(d)
        elif isinstance(s, ShapeStructInfo) and s.values is not None:
            for d in s.values:
                add(d)
        elif isinstance(s, PrimStructInfo) and s.value is not None:
            add(s.value)
        elif isinstance(s, TupleStructInfo):
            for f in s.fields:
                go(f)
        elif isinstance(s, FuncStructInfo) and s.params is not None:
            pass  # vars of a callee's signature are local to that signature

    go(sinfo)
    return out


def _used_tir_vars(obj: Any) -> list:
    """TIR vars used in ``obj`` outside callee signatures (FuncStructInfo bodies)."""
    from .struct_info import collect_tir_vars

    if isinstance(obj, FuncStructInfo):
        return []
    if isinstance(obj, TupleStructInfo):
        return [v for f in obj.fields for v in _used_tir_vars(f)]
    return collect_tir_vars(obj)


class _Checker:
    def __init__(self, mod: IRModule | None, source: str | None):
        self.mod = mod
        self.source = source
        self.defined: set[int] = set()  # relax vars ever defined (for "defined twice")
        self.scope: list[set[int]] = []  # visible relax vars
        self.tir_scope: list[set[int]] = []
        self.dataflow_vars: set[int] | None = None  # vars of the dataflow block being checked
        self.in_dataflow = False
        self.func: Function | None = None
        self.func_name = "<function>"

    # -- reporting ----------------------------------------------------------------------------
    def fail(self, message: str, span) -> None:
        raise DiagnosticError(message, span, self.source)

    # -- scopes -------------------------------------------------------------------------------
    def visible(self, var) -> bool:
        return any(id(var) in s for s in self.scope)

    def tir_visible(self, var) -> bool:
        return any(id(var) in s for s in self.tir_scope)

    def define(self, var: Var, span) -> None:
        if id(var) in self.defined:
            kind = "DataflowVar" if isinstance(var, DataflowVar) else "Var"
            self.fail(f"{kind} {var.name_hint!r} is defined more than once", span)
        if isinstance(var, DataflowVar) and not self.in_dataflow:
            self.fail(f"DataflowVar {var.name_hint!r} is defined outside a dataflow block", span)
        self.defined.add(id(var))
        self.scope[-1].add(id(var))
        if isinstance(var, DataflowVar) and self.dataflow_vars is not None:
            self.dataflow_vars.add(id(var))

    def define_tir(self, sinfo, span) -> None:
        for v in definable_tir_vars(sinfo):
            self.tir_scope[-1].add(id(v))

    def check_tir_uses(self, obj, span, where: str) -> None:
        for v in _used_tir_vars(obj):
            if not self.tir_visible(v):
                self.fail(f"symbolic variable {v.name_hint!r} used in {where} is not defined: "
                          f"define it in a parameter annotation (e.g. R.Tensor((\"{v.name_hint}\","
                          f" ...))) or with R.match_cast before using it", span)

    # -- functions ----------------------------------------------------------------------------
    def function(self, func: Function, name: str) -> None:
        outer = (self.func, self.func_name)
        self.func, self.func_name = func, name
        self.scope.append(set())
        self.tir_scope.append(set())
        for p in func.params:
            if not isinstance(p, Var) or isinstance(p, DataflowVar):
                self.fail(f"parameter {getattr(p, 'name_hint', p)!r} of {name} must be a Var", func.span)
            if id(p) in self.scope[-1]:
                self.fail(f"variable {p.name_hint!r} is used more than once as a parameter of "
                          f"{name}", p.span or func.span)
            self.scope[-1].add(id(p))
            self.defined.add(id(p))
            self.define_tir(p.struct_info, p.span)
        for p in func.params:
            self.check_tir_uses(p.struct_info, p.span or func.span,
                                f"the annotation of parameter {p.name_hint!r}")
        self.body(func.body, func)
        self.scope.pop()
        self.tir_scope.pop()
        self.func, self.func_name = outer

    def body(self, body: Expr, func: Function) -> None:
        if not isinstance(body, SeqExpr):
            self.expr(body, body.span or func.span)
            return
        self.seq(body, func.span)

    def seq(self, seq: SeqExpr, span) -> None:
        for block in seq.blocks:
            self.block(block)
        result = seq.body
        self.expr(result, seq.span or span, what="returned")

    def block(self, block: BindingBlock) -> None:
        is_df = isinstance(block, DataflowBlock)
        outer = (self.in_dataflow, self.dataflow_vars)
        self.in_dataflow = is_df
        self.dataflow_vars = set() if is_df else None
        if is_df:
            self.scope.append(set())
        for binding in block.bindings:
            self.binding(binding)
        if is_df:
            exposed = {i for i in self.scope.pop() if i not in self.dataflow_vars}
            self.scope[-1] |= exposed
        self.in_dataflow, self.dataflow_vars = outer

    def binding(self, binding) -> None:
        span = binding.span or binding.var.span
        value = binding.value
        if isinstance(value, If) and self.in_dataflow:
            self.fail("`if` is not allowed inside a dataflow block: move it after the block", span)
        if isinstance(value, Function):
            self.function(value, binding.var.name_hint)
        else:
            self.expr(value, span)
        if isinstance(binding, MatchCast):
            self.tir_scope[-1].update(id(v) for v in definable_tir_vars(binding.struct_info))
            self.check_tir_uses(binding.struct_info, span, "R.match_cast")
        elif isinstance(binding, VarBinding):
            self.check_tir_uses(binding.var.struct_info, span,
                                f"the struct info of {binding.var.name_hint!r}")
        self.define(binding.var, span)

    # -- expressions --------------------------------------------------------------------------
    def expr(self, expr: Any, span, what: str = "used") -> None:
        if isinstance(expr, Var):
            self.var_use(expr, span, what)
            return
        if isinstance(expr, GlobalVar):
            self.global_use(expr, span)
            return
        if isinstance(expr, If):
            self.expr(expr.cond, span)
            for branch in (expr.true_branch, expr.false_branch):
                self.scope.append(set())
                self.tir_scope.append(set())
                if isinstance(branch, SeqExpr):
                    self.seq(branch, span)
                else:
                    self.expr(branch, span)
                self.scope.pop()
                self.tir_scope.pop()
            return
        if isinstance(expr, SeqExpr):
            self.scope.append(set())
            self.seq(expr, span)
            self.scope.pop()
            return
        if isinstance(expr, Function):
            self.function(expr, "a local function")
            return
        if isinstance(expr, Call):
            self.call(expr, span)
            return
        if isinstance(expr, ShapeExpr):
            self.check_tir_uses(expr.values, span, "R.shape")
            return
        if isinstance(expr, PrimValue):
            self.check_tir_uses(expr.value, span, "R.prim_value")
            return
        if isinstance(expr, Node) and not isinstance(expr, (Op, ExternFunc)):
            for name in type(expr).field_names():
                self.sub(getattr(expr, name), span)

    def sub(self, x, span) -> None:
        if isinstance(x, (Expr, GlobalVar)):
            self.expr(x, span)
        elif isinstance(x, (list, tuple)):
            for y in x:
                self.sub(y, span)

    def var_use(self, var: Var, span, what: str) -> None:
        if not self.visible(var):
            if isinstance(var, DataflowVar) and id(var) in self.defined:
                self.fail(f"DataflowVar {var.name_hint!r} is {what} outside the dataflow block "
                          "that defines it: list it in R.output(...) to use it after the block",
                          span)
            self.fail(f"variable {var.name_hint!r} is {what} but not defined", span)
        if isinstance(var, DataflowVar) and not self.in_dataflow:
            self.fail(f"DataflowVar {var.name_hint!r} is {what} outside the dataflow block "
                      "that defines it: list it in R.output(...) to use it after the block", span)

    def global_use(self, gv: GlobalVar, span) -> None:
        if self.mod is None:
            return
        if gv not in self.mod.functions:
            names = ", ".join(sorted(g.name_hint for g in self.mod.functions)) or "none"
            if gv.name_hint in self.mod:
                self.fail(f"the GlobalVar {gv.name_hint!r} is not the one of this module's function "
                          "of that name", span)
            self.fail(f"function {gv.name_hint!r} is not in the IRModule (it has: {names})", span)

    def call(self, call: Call, span) -> None:
        op = call.op
        if isinstance(op, (Var, GlobalVar)):
            self.expr(op, span)
        for a in call.args:
            self.sub(a, span)
        for s in call.sinfo_args:
            self.check_tir_uses(s, span, "the output struct info of a call")
        impure = self.impure_callee(call)
        if impure is not None:
            if self.in_dataflow:
                self.fail(f"non-pure call in dataflow block: {impure} has side effects and may "
                          "not appear in a dataflow block; call it outside `with R.dataflow()` "
                          "(in a function with @R.function(pure=False))", span)
            if self.func is not None and self.func.is_pure and not self.func.attrs.get(
                    "relax.force_pure"):
                self.fail(f"{self.func_name} is annotated as pure but contains an impure call "
                          f"({impure}): declare it with @R.function(pure=False), or use a pure "
                          "variant such as R.call_pure_packed", span)
        if isinstance(op, Op) and op.name == "relax.call_tir" and call.args:
            callee = call.args[0]
            if not isinstance(callee, GlobalVar):
                self.fail("R.call_tir expects the GlobalVar of a PrimFunc as its first argument "
                          f"(e.g. cls.my_kernel), got a {type(callee).__name__}", span)
            elif self.mod is not None and callee in self.mod.functions:
                from mlckit.tir.function import PrimFunc

                target = self.mod.functions[callee]
                if not isinstance(target, PrimFunc):
                    self.fail(f"R.call_tir calls {callee.name_hint!r}, which is a "
                              f"{type(target).__name__}, not a PrimFunc (@T.prim_func); call a "
                              f"Relax function directly: cls.{callee.name_hint}(...)", span)
                why = call_tir_mismatch(call, target, callee.name_hint)
                if why is not None:
                    self.fail(why, span)

    def impure_callee(self, call: Call) -> str | None:
        op = call.op
        if isinstance(op, Op):
            if op.get_attr("FPurity", True) is False:
                return {"relax.print": "R.print", "relax.assert_op": "R.assert_op"}.get(
                    op.name, op.name)
            return None
        if isinstance(op, ExternFunc):
            return f"R.call_packed(\"{op.global_symbol}\", ...)"
        sinfo = getattr(op, "struct_info_", None)
        if isinstance(sinfo, FuncStructInfo) and not sinfo.purity:
            return f"the impure function {getattr(op, 'name_hint', '?')!r}"
        return None


def check_well_formed(obj: Any, source: str | None = None) -> None:
    """Raise ``DiagnosticError`` at the first rule ``obj`` (IRModule or Function) breaks.

    >>> from mlckit.relax import analysis
    >>> from mlckit.script import ir as I, relax as R
    >>> @I.ir_module
    ... class Logged:
    ...     @R.function(pure=False)
    ...     def main(x: R.Tensor((2,), "float32")):
    ...         R.print(x, format="{}")
    ...         return x
    >>> analysis.check_well_formed(Logged)  # raises a DiagnosticError when a rule is broken
    """
    if isinstance(obj, IRModule):
        for gv, func in obj.functions.items():
            if isinstance(func, Function):
                _Checker(obj, source).function(func, f"function {gv.name_hint!r}")
    elif isinstance(obj, Function):
        _Checker(None, source).function(obj, "the function")


def well_formed(obj: Any) -> bool:
    """True when ``obj`` (IRModule or relax Function) is well formed (see module doc).

    >>> from mlckit.relax import analysis
    >>> from mlckit.script import ir as I, relax as R
    >>> @I.ir_module
    ... class Logged:
    ...     @R.function(pure=False)
    ...     def main(x: R.Tensor((2,), "float32")):
    ...         R.print(x, format="{}")
    ...         return x
    >>> analysis.well_formed(Logged)
    True
    """
    try:
        check_well_formed(obj)
    except DiagnosticError:
        return False
    return True
