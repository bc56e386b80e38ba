"""``mlckit.meta_schedule``: automatic program optimization over schedule traces.

``from tvm import meta_schedule as ms`` becomes ``from mlckit import meta_schedule as ms``.
A *design space* is a schedule whose trace samples (``sample_perfect_tile``,
``sample_categorical``): a hand-written function (``space_generator.ScheduleFn``) or the
built-in rules (``PostOrderApply``: multi-level tiling, auto-inline, parallel / vectorize /
unroll).  ``tune_tir`` searches it — evolutionary search under a cost model, candidates
built and timed in a process pool (or on a Dask cluster) — and keeps every measurement in
a database (TVM's two JSON files in ``work_dir``); ``tir_integration.compile_tir`` replays
the best trace.

Example::

    from mlckit import meta_schedule as ms
    database = ms.tune_tir(mod=MyModule, target="llvm --num-cores=1", max_trials_global=64,
                           num_trials_per_iter=64, work_dir="./tune_tmp", seed=0)
    sch = ms.tir_integration.compile_tir(database, MyModule, "llvm --num-cores=1")
    sch.trace.show()
"""

import importlib

from . import (
    arg_info,
    cost_model,
    database,
    feature_extractor,
    mutator,
    plot,
    postproc,
    runner,
    schedule_rule,
    search_strategy,
    space_generator,
    tir_integration,
)
from .cost_model import CostModel
from .database import Database, JSONDatabase, MemoryDatabase, TuningRecord, Workload
from .error import DatabaseError, RunnerError, SpaceGeneratorError, TuningError
from .runner import Runner
from .search_strategy import MeasureCandidate, SearchStrategy
from .space_generator import SpaceGenerator
from .tir_integration import compile_tir
from .tune import tune_tir
from .tune_context import TuneContext


def __getattr__(name: str):
    # relax_integration imports Relax: loaded at its first use (``ms.relax_integration``),
    # so that a measuring worker, which imports this package for its runner, does not
    # (~0.3 s of each worker's start)
    if name == "relax_integration":
        return importlib.import_module(f"{__name__}.relax_integration")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "CostModel", "Database", "DatabaseError", "JSONDatabase", "MeasureCandidate",
    "MemoryDatabase", "Runner", "RunnerError", "SearchStrategy", "SpaceGenerator",
    "SpaceGeneratorError", "TuneContext", "TuningError", "TuningRecord", "Workload",
    "arg_info", "compile_tir", "cost_model", "database", "feature_extractor", "mutator",
    "plot", "postproc", "relax_integration", "runner", "schedule_rule", "search_strategy", "space_generator",
    "tir_integration", "tune_tir",
]
