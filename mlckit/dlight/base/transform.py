"""The pass that applies schedule rules to a module (TVM's ``dlight.ApplyDefaultSchedule``).

Example::

    with Target("cuda"):
        mod = ApplyDefaultSchedule(gpu.Fallback())(mod)
"""

from __future__ import annotations

from mlckit.error import TVMValueError
from mlckit.ir.module import IRModule
from mlckit.ir.transform import module_pass
from mlckit.target import Target
from mlckit.tir.function import PrimFunc

from .schedule_rule import ScheduleRule

__all__ = ["ApplyDefaultSchedule", "is_scheduled"]


def is_scheduled(func: PrimFunc) -> bool:
    """Whether ``func`` is marked scheduled, as TVM's dlight skips: ``tir.is_scheduled``
    (TVM v0.23's key, which mlckit writes) or ``tirx.is_scheduled`` (TVM >= 0.24's)."""
    attrs = func.attrs or {}
    return bool(attrs.get("tir.is_scheduled", False) or attrs.get("tirx.is_scheduled", False))


@module_pass(opt_level=0, name="ApplyDefaultSchedule")
class ApplyDefaultSchedule:
    """Schedule every PrimFunc that is not marked ``tir.is_scheduled`` with the first of
    ``rules`` that applies; the result is marked ``tir.is_scheduled``.  Needs a target in
    scope (``with Target("cuda"):``), as in TVM.

    Schedule every kernel of a module for a GPU::

        from mlckit import dlight as dl
        with tvm.target.Target("cuda"):
            mod = dl.ApplyDefaultSchedule(dl.gpu.Matmul(), dl.gpu.GEMV(), dl.gpu.Fallback())(mod)
    """

    def __init__(self, *rules: ScheduleRule):
        for rule in rules:
            if not isinstance(rule, ScheduleRule):
                raise TVMValueError(f"ApplyDefaultSchedule expects schedule rules (such as "
                                    f"dlight.gpu.Fallback()), got {type(rule).__name__}")
        self.rules = rules

    def transform_module(self, mod: IRModule, ctx) -> IRModule:
        target = Target.current(allow_none=True)
        if target is None:
            raise TVMValueError("ApplyDefaultSchedule needs a target: run it inside "
                                "`with mlckit.target.Target('cuda'):`")
        functions = dict(mod.functions)
        for gv, func in mod.functions.items():
            if not isinstance(func, PrimFunc) or is_scheduled(func):
                continue
            for rule in self.rules:
                if not rule.is_target_available(target):
                    continue
                sch = rule.apply(func, target, False)
                if sch is not None:
                    scheduled = sch.mod["main"]
                    functions[gv] = scheduled.with_attr("tir.is_scheduled", True)
                    break
        return IRModule(functions, attrs=mod.attrs)
