"""``RemoveUnusedParameters``: private functions lose the parameters they never read (as
TVM's ``relax.transform.RemoveUnusedParameters``).

A private Relax function (no ``global_symbol``) drops each parameter its body does not use,
and every call stops passing it.  A dropped parameter may have been the only one defining a
symbolic variable the body needs (``x: R.Tensor((n,))`` unused, ``n`` used): such a variable
becomes a new ``R.Prim("int64")`` parameter ``param_n``, and callers pass the value ``n``
had at the call.

Example::

    mod = relax.transform.RemoveUnusedParameters()(mod)
"""

from __future__ import annotations

from mlckit.error import InternalError
from mlckit.ir.module import GlobalVar, IRModule
from mlckit.ir.transform import ModulePass, PassInfo

from ..analysis.remove_all_unused import remove_all_unused
from ..analysis.struct_info import collect_tir_vars
from ..analysis.well_formed import definable_tir_vars
from ..expr import Call, Function, PrimValue, Var
from ..expr_functor import ExprMutator
from ..struct_info import PrimStructInfo
from .canonicalize_bindings import free_vars, infer_symbolic_var_map


def _analyze(func: Function):
    """(the function without its unused parameters, the call-site argument updater), or
    None when it keeps them all."""
    if func.attrs.get("global_symbol"):
        return None
    used = {id(v) for v in free_vars(Function([], func.body))}
    mask = [id(p) in used for p in func.params]
    if all(mask):
        return None
    params = [p for p, keep in zip(func.params, mask) if keep]
    defined = {id(v) for p in params for v in definable_tir_vars(p.struct_info)}
    free_tir = [v for v in collect_tir_vars(func.body) if id(v) not in defined]
    free_tir += [v for v in collect_tir_vars(func.ret_struct_info)
                 if id(v) not in defined and not any(v is u for u in free_tir)]
    params += [Var(f"param_{v.name_hint}", PrimStructInfo(v.dtype, v)) for v in free_tir]
    old_params = list(func.params)

    def update_args(args: list) -> list:
        if len(args) != len(mask):
            raise InternalError(f"RemoveUnusedParameters: the call passes {len(args)} arguments, "
                                f"the callee takes {len(mask)}")
        new = [a for a, keep in zip(args, mask) if keep]
        if free_tir:
            found: dict = {}
            for p, a in zip(old_params, args):
                infer_symbolic_var_map(p.struct_info, a.struct_info, found)
            for v in free_tir:
                if v not in found:
                    raise InternalError(f"RemoveUnusedParameters: no argument gives the value of "
                                        f"{v.name_hint}")
                new.append(PrimValue(found[v][0]))
        return new

    return func.replace(params=params), update_args


class _CallSiteMutator(ExprMutator):
    def __init__(self, updaters: dict[str, tuple[GlobalVar, object]]):
        super().__init__()
        self.updaters = updaters

    def visit_call_(self, call: Call):
        call = super().visit_call_(call)
        if isinstance(call.op, GlobalVar) and call.op.name_hint in self.updaters:
            gv, update = self.updaters[call.op.name_hint]
            call = Call(gv, update(call.args), call.attrs, list(call.sinfo_args), span=call.span)
        return call


def remove_unused_parameters(mod: IRModule) -> IRModule:
    """``mod`` with the unused parameters of its private functions removed.

    Example::

        mod = remove_unused_parameters(mod)
    """
    updaters: dict[str, tuple[GlobalVar, object]] = {}
    new_funcs: dict[str, Function] = {}
    for gv, func in mod.functions.items():
        if isinstance(func, Function):
            result = _analyze(func)
            if result is not None:
                new_func, update = result
                new_gv = GlobalVar(gv.name_hint)
                new_gv.struct_info_ = new_func.struct_info
                updaters[gv.name_hint] = (new_gv, update)
                new_funcs[gv.name_hint] = new_func
    if not updaters:
        return mod
    out = IRModule({}, dict(mod.attrs), dict(mod.global_infos))
    for gv, func in mod.functions.items():
        if gv.name_hint in updaters:
            out.functions[updaters[gv.name_hint][0]] = new_funcs[gv.name_hint]
        else:
            out.functions[gv] = func
    mutator = _CallSiteMutator(updaters)
    for gv, func in list(out.functions.items()):
        if isinstance(func, Function):
            new = mutator.visit_expr(func)
            if new is not func:
                # arguments that were computed only for a dropped parameter are dead now
                out.functions[gv] = remove_all_unused(new)
    return out


def RemoveUnusedParameters() -> ModulePass:  # noqa: N802 - TVM's name
    """The pass removing unused parameters of private functions.

    Example::

        mod = RemoveUnusedParameters()(mod)
    """
    return ModulePass(lambda mod, ctx: remove_unused_parameters(mod),
                      PassInfo(0, "RemoveUnusedParameters"))


__all__ = ["RemoveUnusedParameters", "remove_unused_parameters"]
