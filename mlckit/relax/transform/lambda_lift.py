"""``LambdaLift``: local functions become functions of the module (as TVM's
``relax.transform.LambdaLift``).

A function bound inside another (``inner = R.function(...)`` in ``main``) moves to the
module as a private function named ``main_inner`` (its ``global_symbol`` when it has one;
the whole nesting path, then a counter, when names clash); its uses become uses of the new
GlobalVar, so ``inner(x)`` becomes ``cls.main_inner(x)``.  A local function that calls
itself is lifted the same way.

A local function that captures variables of the enclosing function (a closure) would need
``R.make_closure``, which mlckit's VM does not have: such functions are refused with a
``TVMNotImplementedError`` naming them and the captured variables.

Example::

    mod = relax.transform.LambdaLift()(mod)
"""

from __future__ import annotations

from mlckit.error import TVMNotImplementedError, TVMValueError
from mlckit.ir.module import GlobalVar, IRModule
from mlckit.ir.transform import ModulePass, PassInfo

from ..expr import Function, SeqExpr, VarBinding
from ..expr_functor import ExprMutator
from .canonicalize_bindings import free_vars


def _collect_names(mod: IRModule) -> dict[int, str]:
    """id(local function) -> the name it gets (TVM's LambdaNameCollector)."""
    taken = {gv.name_hint for gv in mod.functions}
    locations: list[tuple[Function, list[str]]] = []
    public: dict[int, str] = {}

    def visit(expr, path: list[str]) -> None:
        if isinstance(expr, Function):
            visit(expr.body, path)
        elif isinstance(expr, SeqExpr):
            for block in expr.blocks:
                for b in block.bindings:
                    if isinstance(b, VarBinding) and isinstance(b.value, Function):
                        symbol = b.value.attrs.get("global_symbol")
                        if symbol:
                            if symbol in taken or symbol in public.values():
                                raise TVMValueError(
                                    f"LambdaLift: function {path[0]} contains a local function "
                                    f"with global_symbol {symbol!r}, but the module already has "
                                    "a function of that name")
                            public[id(b.value)] = symbol
                        locations.append((b.value, [*path, b.var.name_hint]))
                        visit(b.value, [*path, b.var.name_hint])

    for gv, func in mod.functions.items():
        if isinstance(func, Function):
            visit(func, [gv.name_hint])

    names: dict[int, str] = {}
    remaining = list(locations)
    unavailable = set(taken)

    def attempt(propose) -> None:
        nonlocal remaining
        proposals: dict[str, list] = {}
        for func, path in remaining:
            name = propose(func, path)
            if name is not None and name not in unavailable:
                proposals.setdefault(name, []).append(func)
        for name, funcs in proposals.items():
            if len(funcs) == 1:
                names[id(funcs[0])] = name
                unavailable.add(name)
        remaining = [(f, p) for f, p in remaining if id(f) not in names]

    attempt(lambda f, p: public.get(id(f)))
    attempt(lambda f, p: f"{p[0]}_{p[-1]}")
    attempt(lambda f, p: "_".join(p) if len(p) > 2 else None)
    counts: dict[str, int] = {}

    def fallback(f, p):
        base = f"{p[0]}_{p[-1]}"
        counts[base] = counts.get(base, -1) + 1
        return f"{base}_{counts[base]}"

    while remaining:
        attempt(fallback)
    return names


class _LambdaLifter(ExprMutator):
    def __init__(self, mod: IRModule):
        super().__init__(mod)
        self.names = _collect_names(mod)
        self.lifted: list[tuple[GlobalVar, Function]] = []
        self.rebind: dict[int, GlobalVar] = {}
        self.current = None  # the variable the function being visited is bound to
        self.keep: list = []

    def visit_var_binding_(self, binding: VarBinding) -> None:
        if not isinstance(binding.value, Function):
            super().visit_var_binding_(binding)
            return
        saved, self.current = self.current, binding.var
        value = self.visit_expr(binding.value)
        self.current = saved
        if id(binding.var) in self.rebind:
            return  # the local function is now a module function: the binding goes
        self.emit_binding(binding if value is binding.value else VarBinding(binding.var, value))

    def visit_function_(self, func: Function):
        if self.current is None:
            return super().visit_function_(func)
        name = self.names[id(func)]
        captured = [v for v in free_vars(func) if v is not self.current]
        if captured:
            vars_ = ", ".join(v.name_hint for v in captured)
            raise TVMNotImplementedError(
                f"LambdaLift: the local function {name!r} captures {vars_} from the enclosing "
                "function (a closure); closures need R.make_closure, which mlckit's VM does not "
                "support: pass the values as parameters instead")
        gv = GlobalVar(name)
        gv.struct_info_ = func.struct_info
        self.rebind[id(self.current)] = gv  # before the body: recursive calls use it too
        self.keep.append(self.current)
        saved, self.current = self.current, None
        body = self.visit_with_new_scope(func.body)
        self.current = saved
        lifted = func if body is func.body else func.replace(body=body)
        self.lifted.append((gv, lifted))
        return gv

    def visit_var_(self, op):
        gv = self.rebind.get(id(op))
        return gv if gv is not None else super().visit_var_(op)


def lambda_lift(mod: IRModule) -> IRModule:
    """``mod`` with its local functions lifted (see the module doc).

    Example::

        mod = lambda_lift(mod)      # main's local `inner` is now mod["main_inner"]
    """
    lifter = _LambdaLifter(mod)
    out = mod.copy()
    for gv, func in mod.functions.items():
        if isinstance(func, Function):
            out.functions[gv] = lifter.visit_expr(func)
    for gv, func in lifter.lifted:
        out.functions[gv] = func
    return out


def LambdaLift() -> ModulePass:  # noqa: N802 - TVM's name
    """The pass lifting local functions (opt_level 1, as TVM).

    Example::

        mod = LambdaLift()(mod)
    """
    return ModulePass(lambda mod, ctx: lambda_lift(mod), PassInfo(1, "LambdaLift"))


__all__ = ["LambdaLift", "lambda_lift"]
