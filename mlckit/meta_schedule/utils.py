"""Small helpers shared by the tuner's pieces: the module a task tunes, the target's cores,
block and loop questions the rules ask."""

from __future__ import annotations

import os

from mlckit.arith.analyzer import uses_var
from mlckit.error import TVMTypeError
from mlckit.ir.module import IRModule
from mlckit.target import Target
from mlckit.tir import expr as E
from mlckit.tir.function import PrimFunc

__all__ = ["as_target", "block_iter_kinds", "func_name", "int_value", "loop_iter_type",
           "normalize_mod", "num_cores"]


def normalize_mod(mod) -> IRModule:
    """The workload a task tunes: an IRModule whose only PrimFunc is called ``main``
    (a lone PrimFunc, or a one-function module under another name, is renamed, and its
    ``global_symbol`` becomes ``"main"``, as TVM does)."""
    if isinstance(mod, PrimFunc):
        return IRModule({"main": _as_main(mod)})
    if not isinstance(mod, IRModule):
        raise TVMTypeError(f"meta_schedule tunes an IRModule or a PrimFunc, got {type(mod).__name__}")
    funcs = [(gv, f) for gv, f in mod.functions.items() if isinstance(f, PrimFunc)]
    if len(mod.functions) == 1 and funcs and funcs[0][0].name_hint != "main":
        return IRModule({"main": _as_main(funcs[0][1])})
    if len(mod.functions) == 1 and funcs:
        return IRModule({"main": _as_main(funcs[0][1])})
    return mod


def _as_main(func: PrimFunc) -> PrimFunc:
    """The function under the name a workload gives it (TVM sets ``global_symbol``)."""
    if (func.attrs or {}).get("global_symbol") not in (None, "main"):
        return func.with_attr("global_symbol", "main")
    return func


def as_target(target) -> Target:
    """A ``Target`` from a string, dict or Target."""
    return target if isinstance(target, Target) else Target(target)


def num_cores(target) -> int:
    """The target's ``num-cores`` (``"llvm --num-cores=1"``), else this machine's CPU count."""
    value = as_target(target).attrs.get("num-cores")
    if value:
        return int(value)
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def func_name(sch) -> str:
    """The name of the PrimFunc a schedule works on (a workload's is ``main``)."""
    gv = sch.func_working_on
    return "main" if gv is None else gv.name_hint


def int_value(expr) -> int | None:
    """The int a constant PrimExpr holds (None when it is not constant)."""
    if isinstance(expr, int):
        return expr
    if isinstance(expr, E.IntImm):
        return int(expr.value)
    return None


def block_iter_kinds(realize) -> list[tuple[object, str]]:
    """``(binding, "S" | "R" | "O")`` for each iterator of a BlockRealize's block."""
    kinds = {E.IterVarType.DataPar: "S", E.IterVarType.CommReduce: "R"}
    return [(value, kinds.get(iv.iter_type, "O"))
            for iv, value in zip(realize.block.iter_vars, realize.iter_values)]


def loop_iter_type(loop, realize) -> str:
    """How a block uses a loop: ``"S"`` (only in spatial bindings), ``"R"`` (only in
    reduction bindings), ``"O"`` (both, other kinds, or not at all)."""
    var = loop.loop_var
    used = {kind for value, kind in block_iter_kinds(realize)
            if uses_var(value, lambda v: v is var)}
    return used.pop() if len(used) == 1 and used != {"O"} else "O"
