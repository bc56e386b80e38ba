"""``BindSymbolicVars``: replace symbolic (TIR) variables of a Relax function by values or
other variables (as TVM's ``relax.transform.BindSymbolicVars``).

The replacement reaches every place a TIR variable can appear: parameter and binding
annotations, ``match_cast`` targets, ``call_tir`` output struct infos, ``R.shape`` values,
``R.prim_value`` values and the return annotation.  Keys are ``tir.Var`` objects or their
names.

Example::

    mod = BindSymbolicVars({"n": 1})(mod)       # R.Tensor(("n", 784)) becomes (1, 784)
    func = bind_symbolic_vars(func, {n: m})     # rename: n becomes the variable m
"""

from __future__ import annotations

from mlckit.arith.analyzer import Analyzer
from mlckit.error import TVMKeyError, TVMTypeError, TVMValueError
from mlckit.ir.module import IRModule
from mlckit.ir.node import Node
from mlckit.ir.transform import ModulePass, PassInfo
from mlckit.tir import expr as tx

from ..analysis.struct_info import collect_tir_vars, substitute_tir_vars
from ..expr import Function, MatchCast, Var
from ..expr_functor import ExprMutator


class _SymbolicVarBinder(ExprMutator):
    """Rebuild a function with its TIR variables substituted (new Vars where the struct
    info changes, their uses remapped)."""

    def __init__(self, tir_map: dict):
        super().__init__()
        self.tir_map = tir_map
        self.analyzer = Analyzer()

    def _sub(self, obj):
        return _substitute(obj, self.tir_map, self.analyzer)

    def visit_var_def(self, var: Var) -> Var:
        new = super().visit_var_def(var)
        if new.struct_info_ is not None:
            sinfo = self._sub(new.struct_info_)
            if sinfo is not new.struct_info_:
                new = type(new)(new.name_hint, sinfo, span=new.span)
                self.var_remap[id(var)] = new
        return new

    def visit_call_(self, call):
        new = super().visit_call_(call)
        if new.sinfo_args:
            sinfo_args = self._sub(list(new.sinfo_args))
            if any(a is not b for a, b in zip(sinfo_args, new.sinfo_args)):
                new = new.replace(sinfo_args=sinfo_args)
        return new

    def visit_shape_expr_(self, op):
        return self._sub(op)

    def visit_prim_value_(self, op):
        return self._sub(op)

    def visit_match_cast_(self, binding: MatchCast) -> None:
        value = self.visit_expr(binding.value)
        var = self.visit_var_def(binding.var)
        sinfo = self._sub(binding.struct_info)
        if value is binding.value and var is binding.var and sinfo is binding.struct_info:
            self.emit_binding(binding)
        else:
            self.emit_binding(MatchCast(var, value, sinfo, span=binding.span))

    def visit_function_(self, op: Function):
        params = [self.visit_var_def(p) for p in op.params]
        body = self.visit_with_new_scope(op.body)
        ret = self._sub(op.ret_struct_info)
        if all(a is b for a, b in zip(params, op.params)) and body is op.body \
                and ret is op.ret_struct_info:
            return op
        return op.replace(params=params, body=body, ret_struct_info=ret)


def _substitute(obj, tir_map: dict, analyzer: Analyzer):
    """``obj`` (a struct info, shape, PrimExpr …) with the TIR variables of ``tir_map``
    replaced; every PrimExpr that changes is simplified (``n * 2`` with n = 16 is 32)."""

    def go(x):
        if isinstance(x, tx.PrimExpr):
            new = substitute_tir_vars(x, tir_map)
            return x if new is x else analyzer.simplify(new)
        if isinstance(x, Var):
            return x
        if isinstance(x, Node):
            changes = {}
            for name in type(x).field_names():
                old = getattr(x, name)
                new = go(old)
                if new is not old:
                    changes[name] = new
            return x.replace(**changes) if changes else x
        if isinstance(x, (list, tuple)):
            new = [go(y) for y in x]
            if all(a is b for a, b in zip(new, x)):
                return x
            return new if isinstance(x, list) else tuple(new)
        return x

    return go(obj)


def bind_symbolic_vars(func: Function, binding: dict) -> Function:
    """``func`` with the TIR variables of ``binding`` (``tir.Var`` or name -> value)
    replaced; a name must denote exactly one variable of the function.

    Example::

        f = bind_symbolic_vars(mod["main"], {"n": 16})
    """
    if not binding:
        return func
    by_name: dict[str, list] = {}
    for v in collect_tir_vars([p.struct_info_ for p in func.params]) + collect_tir_vars(func.body):
        same = by_name.setdefault(v.name_hint, [])
        if not any(v is u for u in same):
            same.append(v)
    tir_map: dict = {}
    for key, value in binding.items():
        if isinstance(key, str):
            found = by_name.get(key, [])
            if not found:
                names = ", ".join(sorted(by_name)) or "none"
                raise TVMKeyError(f"BindSymbolicVars: the function has no symbolic variable "
                                  f"{key!r} (it has: {names})")
            if len(found) > 1:
                raise TVMValueError(f"BindSymbolicVars: more than one symbolic variable is named "
                                    f"{key!r}; bind the tir.Var itself")
            key = found[0]
        if not isinstance(key, tx.Var):
            raise TVMTypeError(f"BindSymbolicVars: keys are tir.Var or their names, got "
                               f"{type(key).__name__}")
        tir_map[key] = tx.convert(value, key.dtype) if isinstance(value, int) else value
    return _SymbolicVarBinder(tir_map).visit_expr(func)


def BindSymbolicVars(binding: dict, func_name: str | None = None) -> ModulePass:  # noqa: N802
    """The pass binding symbolic variables in ``func_name`` (every Relax function when None).

    Example::

        mod = BindSymbolicVars({"n": 1}, "main")(mod)
    """

    def run(mod: IRModule, ctx) -> IRModule:
        out = mod.copy()
        if func_name is not None and func_name not in mod:
            raise TVMKeyError(f"BindSymbolicVars: the module has no function {func_name!r}")
        for gv, func in mod.functions.items():
            if isinstance(func, Function) and func_name in (None, gv.name_hint):
                out.functions[gv] = bind_symbolic_vars(func, binding)
        return out

    return ModulePass(run, PassInfo(0, "BindSymbolicVars"))


__all__ = ["BindSymbolicVars", "bind_symbolic_vars"]
