"""``LegalizeOps``: lower every high-level operator call to ``R.call_tir`` of a TIR PrimFunc
(or a library call), as TVM's ``relax.transform.LegalizeOps``.

For each call of an operator, the lowering is, in TVM's order of preference:

1. ``customize_legalize_map[op_name]`` when given (a function ``(bb, call) -> Expr``);
2. the operator's strategy (``mlckit.relax.strategy.select``): the highest-level
   implementation whose condition holds for the current target (``with target:``; default
   ``llvm``) — the choice is logged on the logger ``mlckit.strategy``.

A call is left as it is when the operator has no implementation (``R.call_tir``,
``R.shape_of`` … are lowered by the VM), when it is in ``skip_ops``, or when the shapes of its
arguments or result are not known (TVM's rule: a PrimFunc needs them); ``enable_warning``
logs those cases.  When an operator has implementations but none applies, the pass raises
``NoApplicableImplementation`` naming the operator and the target.

What a lowering emits is legalized again (an implementation may be written with other
high-level operators).

Example::

    @I.ir_module
    class Module:
        @R.function
        def main(x: R.Tensor((2, 3), "float32"), y: R.Tensor((2, 3), "float32")):
            z = R.add(x, y)
            return z

    mod = relax.transform.LegalizeOps()(Module)
    # main: z = R.call_tir(cls.add, (x, y), out_sinfo=R.Tensor((2, 3), dtype="float32"))
    # add:  a private PrimFunc made by topi.add
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from mlckit.error import TVMTypeError
from mlckit.ir.module import GlobalVar, IRModule
from mlckit.ir.op import Op
from mlckit.ir.transform import ModulePass, PassContext, PassInfo
from mlckit.tir.function import PrimFunc

from .. import strategy
from ..expr import Call, Expr, ExternFunc, Function
from ..expr_functor import PyExprMutator
from ..struct_info import (
    FuncStructInfo,
    PrimStructInfo,
    ShapeStructInfo,
    TensorStructInfo,
    TupleStructInfo,
)

logger = logging.getLogger("mlckit.strategy")

# Lowered by the VM itself: never warned about (as TVM).
_VM_OPS = ("relax.call_tir", "relax.call_dps_packed", "relax.call_pure_packed")


def know_all_shape_values(sinfo) -> bool:
    """True when every tensor / shape in ``sinfo`` has known dims (TVM's
    ``KnowAllShapeValues``)."""
    if isinstance(sinfo, TensorStructInfo):
        return sinfo.dims is not None
    if isinstance(sinfo, ShapeStructInfo):
        return sinfo.values is not None
    if isinstance(sinfo, TupleStructInfo):
        return all(know_all_shape_values(f) for f in sinfo.fields)
    return isinstance(sinfo, PrimStructInfo)


class _Legalizer(PyExprMutator):
    def __init__(self, mod: IRModule, cmap: dict, skip_ops: set, enable_warning: bool):
        super().__init__(mod)
        self.cmap = cmap
        self.skip_ops = skip_ops
        self.enable_warning = enable_warning
        self.target = strategy.current_target()

    def transform(self) -> IRModule:
        for gv, func in list(self.mod.functions.items()):
            if isinstance(func, Function):
                self.builder_.update_func(gv, self.visit_expr(func))
        return self.builder_.get()

    def visit_call_(self, call: Call):
        call = self.visit_expr_post_order(call)
        op = call.op
        if not isinstance(op, Op) or op.name in self.skip_ops:
            return call
        lower, impl = self._choose(call)
        if lower is None:
            return call
        return self.lower_call(call, lower, impl)

    def lower_call(self, call: Call, lower: Callable, impl: strategy.Implementation | None):
        """``lower(bb, call)`` (then ``impl``'s schedule), its own bindings emitted first, the
        result legalized again."""
        op = call.op
        bb = self.builder_
        if bb.current_block_is_dataflow():
            bb._begin_dataflow_block()
        else:
            bb._begin_binding_block()
        try:
            before = set(bb._mod.functions)
            legalized = lower(bb, call)
            if not isinstance(legalized, Expr):
                source = (f"implementation {impl.name!r}" if impl is not None
                          else "the function in customize_legalize_map")
                raise TVMTypeError(
                    f"LegalizeOps: {source} for {op.name} returned "
                    f"{type(legalized).__name__ if legalized is not None else 'None'}; it must "
                    "return a Relax expression, e.g. bb.call_te(topi_function, *call.args)")
            if impl is not None and impl.schedule is not None:
                legalized = apply_schedule(bb, legalized, impl, before)
            legalized = bb.normalize(legalized)
        finally:
            prologue = bb._end_block()
        for binding in prologue.bindings:
            self.visit_binding(binding)
        if _needs_pure_wrap(op, legalized):
            legalized = Call(Op.get("relax.call_pure_packed"), [legalized.op, *legalized.args],
                             legalized.attrs, legalized.sinfo_args)
        if legalized is not call:
            legalized = self.visit_expr(legalized)
        return legalized

    def _choose(self, call: Call) -> tuple[Callable | None, strategy.Implementation | None]:
        op = call.op
        custom = self.cmap.get(op.name)
        has_impls = strategy.has_implementations(op.name)
        if custom is None and not has_impls:
            if self.enable_warning and op.name not in _VM_OPS:
                logger.warning("No legalization func for %s is found.", op.name)
            return None, None
        known = (all(know_all_shape_values(a.struct_info) for a in call.args)
                 and know_all_shape_values(call.struct_info))
        if not known:
            if self.enable_warning:
                logger.warning("Cannot legalize %s: the shapes of its arguments and result "
                               "must be known", op.name)
            return None, None
        if custom is not None:
            logger.info("%s -> customize_legalize_map for target %s", op.name,
                        self.target.kind.name)
            return custom, None
        impl = strategy.select(call, self.target)
        return impl.lower, impl


def apply_schedule(bb, legalized, impl: strategy.Implementation, before: set):
    """Run ``impl.schedule`` on the PrimFunc the lowered call_tir ``legalized`` calls (``bb``
    holds the module; ``before``: its functions before the lowering).  A PrimFunc this
    lowering created is replaced in place, a shared one is copied first."""
    from mlckit.tir.schedule import Schedule

    if not (isinstance(legalized, Call) and isinstance(legalized.op, Op)
            and legalized.op.name == "relax.call_tir"
            and isinstance(legalized.args[0], GlobalVar)):
        raise TVMTypeError(f"{impl.op_name}: implementation {impl.name!r} has a schedule, so "
                           "it must return an R.call_tir of a PrimFunc")
    gv = legalized.args[0]
    func = bb._mod.functions[gv]
    if not isinstance(func, PrimFunc):
        raise TVMTypeError(f"{impl.op_name}: {impl.name!r} calls {gv.name_hint!r}, which is "
                           "not a PrimFunc")
    sch = Schedule(func)
    impl.schedule(sch)
    scheduled = sch.mod["main"]
    if gv not in before:
        bb.update_func(gv, scheduled)
        return legalized
    new_gv = bb.add_func(scheduled, gv.name_hint)
    return legalized.replace(args=[new_gv, *legalized.args[1:]])


def _needs_pure_wrap(op: Op, legalized) -> bool:
    """A pure operator lowered to an impure call (a packed function) is wrapped in
    ``R.call_pure_packed`` so that it may stay in a dataflow block (as TVM)."""
    if not isinstance(legalized, Call) or not op.get_attr("FPurity", False):
        return False
    callee = legalized.op
    if isinstance(callee, Op):
        return not callee.get_attr("FPurity", False)
    if isinstance(callee, ExternFunc):
        return True
    sinfo = getattr(callee, "struct_info_", None)
    return not (isinstance(sinfo, FuncStructInfo) and sinfo.purity)


def LegalizeOps(customize_legalize_map: dict | None = None,  # noqa: N802 - TVM's name
                skip_ops: list | None = None, enable_warning: bool = False) -> ModulePass:
    """The pass lowering high-level operator calls (see the module doc).

    ``customize_legalize_map``: op name -> ``(bb, call) -> Expr``, overriding the strategy;
    ``skip_ops``: op names left as they are; ``enable_warning``: log calls left un-lowered.
    The ``PassContext`` option ``relax.transform.apply_legalize_ops=False`` turns it off.

    Example::

        def my_add(bb, call):
            return bb.call_te(topi.add, call.args[0], call.args[1], primfunc_name_hint="my_add")

        mod = relax.transform.LegalizeOps({"relax.add": my_add})(mod)
    """
    cmap = dict(customize_legalize_map or {})
    for name, fn in cmap.items():
        if not isinstance(name, str) or not callable(fn):
            raise TVMTypeError("LegalizeOps: customize_legalize_map maps operator names "
                               "(\"relax.add\") to functions (bb, call) -> Expr, got "
                               f"{name!r}: {type(fn).__name__}")
    skip = set(skip_ops or [])

    def run(mod: IRModule, ctx: PassContext) -> IRModule:
        if not ctx.config.get("relax.transform.apply_legalize_ops", True):
            return mod
        return _Legalizer(mod, cmap, skip, enable_warning).transform()

    return ModulePass(run, PassInfo(0, "LegalizeOps"))


__all__ = ["LegalizeOps", "apply_schedule", "know_all_shape_values"]
