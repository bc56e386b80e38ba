"""TIR integration (TVM's ``meta_schedule.tir_integration``): ``tune_tir`` and
``compile_tir``.

Example::

    database = ms.tune_tir(mod, "llvm --num-cores=1", work_dir="./tune_tmp",
                           max_trials_global=64)
    sch = ms.tir_integration.compile_tir(database, mod, "llvm --num-cores=1")
    sch.trace.show(); sch.mod.show()
"""

from __future__ import annotations

from .error import TuningError
from .tune import tune_tir
from .utils import as_target, normalize_mod

__all__ = ["compile_tir", "tune_tir"]


def compile_tir(database, mod, target):
    """The best schedule the database holds for ``mod``: its trace replayed on ``mod``
    (a ``tir.Schedule`` whose ``.mod`` is the tuned program).

    Example::

        sch = ms.tir_integration.compile_tir(database, MyModule, "llvm --num-cores=1")
    """
    mod = normalize_mod(mod)
    sch = database.query_schedule(mod, as_target(target), workload_name="main")
    if sch is None:
        raise TuningError("compile_tir: the database has no successful measurement of this "
                          "module; tune it with ms.tune_tir first (with the same module)")
    return sch
