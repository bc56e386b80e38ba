"""``ExpandTupleArguments``: private functions take tuple parameters field by field (as
TVM's ``relax.transform.ExpandTupleArguments``).

A private Relax function (no ``global_symbol``) with a parameter ``t: R.Tuple(A, B)`` gets
parameters ``t_0: A, t_1: B`` instead (nested tuples recursively) and rebuilds ``t`` as its
first binding; every call passes ``t[0], t[1]``.  ``CanonicalizeBindings`` and
``DeadCodeElimination`` then fold the rebuilt tuple away.  ``FuseTIR`` runs this first,
since a PrimFunc has no tuple parameters.

Example::

    mod = relax.transform.ExpandTupleArguments()(mod)
"""

from __future__ import annotations

from mlckit.ir.module import GlobalVar, IRModule
from mlckit.ir.transform import ModulePass, PassInfo, Sequential

from ..block_builder import BlockBuilder
from ..expr import BindingBlock, Call, Function, SeqExpr, Tuple, TupleGetItem, Var, VarBinding
from ..expr_functor import ExprMutator
from ..struct_info import TupleStructInfo
from .canonicalize_bindings import CanonicalizeBindings
from .dead_code_elimination import DeadCodeElimination


def _expand_params(func: Function) -> Function | None:
    if func.attrs.get("global_symbol"):
        return None
    if not any(isinstance(p.struct_info, TupleStructInfo) for p in func.params):
        return None
    params: list[Var] = []
    bindings: list = []

    def expand(param: Var) -> None:
        sinfo = param.struct_info
        if not isinstance(sinfo, TupleStructInfo):
            params.append(param)
            return
        fields = []
        for i, field in enumerate(sinfo.fields):
            new = Var(f"{param.name_hint}_{i}", field)
            fields.append(new)
            expand(new)
        bindings.append(VarBinding(param, Tuple(fields)))

    for p in func.params:
        expand(p)
    return func.replace(params=params, body=SeqExpr([BindingBlock(bindings)], func.body))


class _TupleExpander(ExprMutator):
    def __init__(self, replacements: dict[str, GlobalVar]):
        super().__init__()
        self.replacements = replacements

    def visit_call_(self, call: Call):
        call = super().visit_call_(call)
        if isinstance(call.op, GlobalVar) and call.op.name_hint in self.replacements:
            args: list = []

            def expand(arg) -> None:
                sinfo = arg.struct_info
                if isinstance(sinfo, TupleStructInfo):
                    for i in range(len(sinfo.fields)):
                        expand(TupleGetItem(arg, i))
                else:
                    args.append(arg)

            for a in call.args:
                expand(a)
            call = Call(self.replacements[call.op.name_hint], args, call.attrs,
                        list(call.sinfo_args), span=call.span)
        return call


def expand_tuple_arguments_inner(mod: IRModule) -> IRModule:
    """The rewrite alone (without the clean-up passes).

    Example::

        mod = expand_tuple_arguments_inner(mod)
    """
    new_funcs: dict[str, tuple[GlobalVar, Function]] = {}
    for gv, func in mod.functions.items():
        if isinstance(func, Function):
            new = _expand_params(func)
            if new is not None:
                new_gv = GlobalVar(gv.name_hint)
                new_gv.struct_info_ = new.struct_info
                new_funcs[gv.name_hint] = (new_gv, new)
    if not new_funcs:
        return mod
    out = IRModule({}, dict(mod.attrs), dict(mod.global_infos))
    for gv, func in mod.functions.items():
        if gv.name_hint in new_funcs:
            gv, func = new_funcs[gv.name_hint]
        out.functions[gv] = func
    expander = _TupleExpander({name: gv for name, (gv, _) in new_funcs.items()})
    for gv, func in list(out.functions.items()):
        if isinstance(func, Function):
            out.functions[gv] = _normalize(expander.visit_expr(func))
    return out


def _normalize(func: Function) -> Function:
    """Re-normalize: call arguments built here (``t[0]``) get bindings of their own."""
    return BlockBuilder().normalize(func)


def ExpandTupleArguments() -> Sequential:  # noqa: N802 - TVM's name
    """The pass (followed by ``CanonicalizeBindings`` and ``DeadCodeElimination``, as TVM).

    Example::

        mod = ExpandTupleArguments()(mod)
    """
    inner = ModulePass(lambda mod, ctx: expand_tuple_arguments_inner(mod),
                       PassInfo(0, "ExpandTupleArgumentsInner"))
    return Sequential([inner, CanonicalizeBindings(), DeadCodeElimination()],
                      name="ExpandTupleArguments")


__all__ = ["ExpandTupleArguments", "expand_tuple_arguments_inner"]
