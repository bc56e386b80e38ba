"""``MetaScheduleApplyDatabase(work_dir=None, enable_warning=False)``: replace each PrimFunc
of a module by its tuned version from a ``meta_schedule`` database (TVM's pass).

The database is the one of the innermost ``with database:`` or, given ``work_dir``, the
JSON database there.  Each PrimFunc is looked up as a tuning workload (the function alone,
named ``main``); when the database holds a measured record, the function is replaced by the
record's trace replayed on it, keeping its name and ``global_symbol``; the others stay as
they are (``enable_warning=True`` lists them).

``relax`` sits below ``meta_schedule``: the pass reaches the database through the global
function registry (``meta_schedule.database.*``, filled when ``mlckit.meta_schedule`` is
imported, which the pass does on first use if nobody has).

Example::

    database = ms.tune_tir(mod_linear, "llvm --num-cores=1", work_dir="./tune_tmp",
                           max_trials_global=64)
    with database:
        tuned = relax.transform.MetaScheduleApplyDatabase()(MyModuleWithParams)
"""

from __future__ import annotations

import importlib
import warnings

from mlckit.error import TVMValueError
from mlckit.ffi import get_global_func
from mlckit.ir.module import IRModule
from mlckit.ir.transform import ModulePass, PassInfo
from mlckit.tir.function import PrimFunc


def _registered(name: str):
    func = get_global_func(name, allow_missing=True)
    if func is None:  # meta_schedule not imported yet: importing it registers the functions
        importlib.import_module("mlckit.meta_schedule")
        func = get_global_func(name)
    return func


def MetaScheduleApplyDatabase(work_dir: str | None = None,  # noqa: N802 - TVM's name
                              enable_warning: bool = False) -> ModulePass:
    """The pass putting tuned kernels from a tuning database into a module.

    Example::

        with database:
            mod = relax.transform.MetaScheduleApplyDatabase()(mod)
    """

    def run(mod: IRModule, ctx) -> IRModule:
        if work_dir is not None:
            database = _registered("meta_schedule.database.JSONDatabase")(work_dir=work_dir)
        else:
            database = _registered("meta_schedule.database.current")()
        if database is None:
            raise TVMValueError(
                "MetaScheduleApplyDatabase: no tuning database — run the pass inside "
                "`with database:` or pass work_dir= (the tune_tir work_dir)")
        out = mod.copy()
        untuned = []
        for gv, func in mod.functions.items():
            if not isinstance(func, PrimFunc):
                continue
            symbol = (func.attrs or {}).get("global_symbol", gv.name_hint)
            workload = IRModule({"main": func.with_attr("global_symbol", "main")})
            sch = database.query_schedule(workload, None, workload_name="main")
            if sch is None:
                untuned.append(gv.name_hint)
                continue
            tuned = sch.mod["main"].with_attr("global_symbol", symbol)
            out.update_func(gv, tuned.with_attr("tir.is_scheduled", True))
        if enable_warning and untuned:
            warnings.warn(f"MetaScheduleApplyDatabase: no tuning record for "
                          f"{', '.join(untuned)}; kept as written", stacklevel=2)
        return out

    return ModulePass(run, PassInfo(0, "MetaScheduleApplyDatabase"))
