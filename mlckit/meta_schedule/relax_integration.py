"""Relax integration (TVM's ``meta_schedule.relax_integration``): ``extract_tasks``, the
tuning tasks of a Relax program, one per distinct PrimFunc that ``R.call_tir`` calls.

Example::

    from mlckit.meta_schedule.relax_integration import extract_tasks
    with target:
        legalized = relax.get_pipeline("zero")(mod)
    for task in extract_tasks(legalized, target):
        print(task.task_name, task.weight)        # fused_matmul_add_relu 1 ...
"""

from __future__ import annotations

from dataclasses import dataclass

from mlckit.error import TVMTypeError
from mlckit.ir.module import GlobalVar, IRModule
from mlckit.ir.op import Op
from mlckit.ir.structural import structural_equal
from mlckit.relax.expr import Call
from mlckit.relax.expr import Function as RelaxFunction
from mlckit.relax.expr_functor import PyExprVisitor
from mlckit.target import Target
from mlckit.tir.function import PrimFunc

from .utils import as_target, normalize_mod

__all__ = ["ExtractedTask", "extract_tasks"]


@dataclass
class ExtractedTask:
    """A tuning task: ``mod`` is the workload (its PrimFunc as ``main``), ``dispatched`` the
    modules it may become, ``weight`` how many ``call_tir`` sites call it."""

    task_name: str
    mod: IRModule
    target: Target
    dispatched: list
    weight: int


class _CallTIRSites(PyExprVisitor):
    """The GlobalVars called through ``R.call_tir``, in program order, once per site."""

    def __init__(self):
        self.callees: list[GlobalVar] = []

    def visit_call_(self, call: Call) -> None:
        if (isinstance(call.op, Op) and call.op.name in ("relax.call_tir", "relax.call_tir_inplace")
                and isinstance(call.args[0], GlobalVar)):
            self.callees.append(call.args[0])
        super().visit_call_(call)


def extract_tasks(mod, target, params=None, module_equality: str = "structural") -> list:
    """The tasks of ``mod`` (a Relax IRModule whose operators are legalized into PrimFuncs,
    or a ``relax.Function``) for ``target``: PrimFuncs that are structurally equal make one
    task whose ``weight`` counts all their call sites; tasks come in order of first call.

    Example::

        tasks = extract_tasks(relax.get_pipeline("zero")(mod), "llvm")
        [(t.task_name, t.weight) for t in tasks]
    """
    if isinstance(mod, RelaxFunction):
        mod = IRModule({"main": mod})
    if not isinstance(mod, IRModule):
        raise TVMTypeError(f"extract_tasks expects an IRModule or a relax.Function, got "
                           f"{type(mod).__name__}")
    if params:
        from mlckit.relax.transform import BindParams

        mod = BindParams("main", params)(mod)
    target = as_target(target)
    sites = _CallTIRSites()
    for func in mod.functions.values():
        if isinstance(func, RelaxFunction):
            sites.visit_expr(func)
    tasks: list[ExtractedTask] = []
    for gv in sites.callees:
        func = mod[gv] if gv in mod else None  # a lone relax.Function has no callees
        if not isinstance(func, PrimFunc):
            continue
        workload = normalize_mod(func)
        same = next((t for t in tasks if structural_equal(t.mod, workload)), None)
        if same is not None:
            same.weight += 1
        else:
            tasks.append(ExtractedTask(gv.name_hint, workload, target, [workload], 1))
    return tasks
