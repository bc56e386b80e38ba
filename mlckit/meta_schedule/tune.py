"""``tune_tir``: search a TIR workload's schedules and keep the measured ones in a database.

The loop, per task (one per PrimFunc): generate the design spaces, then in rounds of
``num_trials_per_iter`` ask the search strategy for candidates, build and measure them in
the runner's workers, commit the records to the database (one atomic write per round) and
teach the cost model, until ``max_trials_global`` candidates are measured or the space has
no new programs.  A tqdm bar counts the measured candidates and shows the best time so far.

Example::

    database = ms.tune_tir(mod=MyModule, target="llvm --num-cores=1",
                           max_trials_global=64, num_trials_per_iter=64,
                           space=ms.space_generator.ScheduleFn(stochastic_schedule_mm),
                           work_dir="./tune_tmp", seed=0)
    sch = ms.tir_integration.compile_tir(database, MyModule, "llvm --num-cores=1")
"""

from __future__ import annotations

import random
import sys

from mlckit.error import TVMTypeError, TVMValueError
from mlckit.ir.module import IRModule
from mlckit.tir.function import PrimFunc

from .cost_model import CostModel
from .database import Database, TuningRecord
from .database.database import MAX_RUN_SECS
from .runner import Runner, RunnerInput
from .tune_context import TuneContext
from .utils import as_target, normalize_mod


def tune_tir(mod, target, work_dir: str | None = None, max_trials_global: int = 64, *,
             max_trials_per_task: int | None = None, num_trials_per_iter: int = 64,
             builder="local", runner="local", database="json", cost_model="xgb",
             measure_callbacks="default", task_scheduler="gradient",
             space="post-order-apply", strategy="evolutionary",
             num_tuning_cores="physical", seed: int | None = None,
             module_equality: str = "structural", special_space=None,
             post_optimization: bool = False, task_name: str = "main",
             progress: bool = True) -> Database:
    """Tune every PrimFunc of ``mod`` for ``target``; returns the database (TVM's
    ``meta_schedule.tune_tir``).

    ``space``: ``"post-order-apply"`` (the built-in rules), a ``ScheduleFn`` or a function
    of a ``tir.Schedule``; ``strategy``: ``"evolutionary"`` or ``"replay-trace"``;
    ``runner``: ``"local"`` (``num_tuning_cores`` processes), ``"dask"`` or a Runner;
    ``database``: ``"json"`` (files in ``work_dir``), ``"memory"`` or a Database; ``seed``
    makes the search repeatable.  ``progress=False`` hides the progress bar.

    Example::

        db = ms.tune_tir(mod, "llvm --num-cores=1", work_dir="./tune_tmp",
                         max_trials_global=32, seed=0)
    """
    target = as_target(target)
    if builder != "local":
        raise TVMValueError("mlckit builds candidates inside the runner's workers; "
                            f"builder must be 'local', got {builder!r}")
    if max_trials_global < 1 or num_trials_per_iter < 1:
        raise TVMValueError(f"max_trials_global and num_trials_per_iter must be positive, got "
                            f"{max_trials_global} and {num_trials_per_iter}")
    tasks = _tasks(mod, task_name)
    if isinstance(runner, str) and runner == "local":
        from .runner.local_runner import LocalRunner, available_cores

        workers = available_cores() if num_tuning_cores in ("physical", "logical") \
            else int(num_tuning_cores)
        runner = LocalRunner(max_workers=workers)
    runner = Runner.create(runner)
    runner.check_target(target)
    if isinstance(database, str):
        if database == "json" and work_dir is None:
            raise TVMValueError("tune_tir: work_dir=... is needed for the JSON database")
        database = Database.create(database, work_dir=work_dir) if database == "json" \
            else Database.create(database)
    per_task = max_trials_per_task or max(1, max_trials_global // len(tasks))
    master = random.Random(seed)
    for name, task_mod in tasks:
        task_seed = master.randrange(1, 2**31) if seed is not None else None
        ctx = TuneContext(task_mod, target, space_generator=space, search_strategy=strategy,
                          task_name=name, rand_state=-1 if task_seed is None else task_seed)
        model = CostModel.create(cost_model) if isinstance(cost_model, str) else cost_model
        if hasattr(model, "rng") and task_seed is not None:
            import numpy as np

            model.rng = np.random.default_rng(task_seed)
        _tune_task(ctx, min(per_task, max_trials_global), num_trials_per_iter, runner,
                   database, model, progress)
    return database


def _tasks(mod, task_name: str) -> list[tuple[str, IRModule]]:
    if isinstance(mod, PrimFunc):
        return [(task_name, normalize_mod(mod))]
    if not isinstance(mod, IRModule):
        raise TVMTypeError(
            f"tune_tir tunes TensorIR: give it a PrimFunc or an IRModule of PrimFuncs, not a "
            f"{type(mod).__name__}" + (" (a Relax function: tune the PrimFuncs of its "
                                       "module after relax.transform.LegalizeOps())"
                                       if type(mod).__module__.startswith("mlckit.relax") else ""))
    funcs = [(gv.name_hint, f) for gv, f in mod.functions.items() if isinstance(f, PrimFunc)]
    if not funcs:
        raise TVMValueError("tune_tir: the module has no PrimFunc to tune")
    if len(funcs) == 1:
        return [(task_name, normalize_mod(mod))]
    return [(name, IRModule({"main": f})) for name, f in funcs]


def _tune_task(ctx: TuneContext, max_trials: int, per_iter: int, runner, database,
               cost_model, progress: bool) -> None:
    from tqdm import tqdm

    spaces = ctx.generate_design_space()  # a failing space function stops before any write
    if hasattr(runner, "warm_up"):  # the workers start while the search samples
        runner.warm_up(str(ctx.target))
    strategy = ctx.search_strategy
    strategy.pre_tuning(max_trials, per_iter, spaces, database, cost_model)
    early: dict = {}  # id(candidate) -> its measurement, started as the search picked it

    def measure(candidates: list) -> list:
        return runner.run([RunnerInput(c.sch.mod, str(ctx.target), c.args_info)
                           for c in candidates])

    def start_early(candidate) -> None:
        early[id(candidate)] = measure([candidate])[0]

    strategy.candidate_sink = start_early
    workload = strategy.workload
    best = min((r.median_secs for r in database.get_top_k(workload, 1)), default=float("inf"))
    # stdout, not stderr: a notebook shows stderr as an error (a pink box)
    bar = tqdm(total=max_trials, desc=f"tune_tir {ctx.task_name}", disable=not progress,
               unit="trial", leave=True, file=sys.stdout)
    try:
        while True:
            candidates = strategy.generate_measure_candidates()
            if not candidates:
                break
            missing = [c for c in candidates if id(c) not in early]
            late = iter(measure(missing) if missing else [])
            futures = [early.pop(id(c)) if id(c) in early else next(late) for c in candidates]
            early.clear()
            results = []
            for fut in futures:
                res = fut.result()
                results.append(res)
                if res.run_secs and not res.error_msg:
                    best = min(best, sorted(res.run_secs)[len(res.run_secs) // 2])
                bar.update(1)
                if best < float("inf"):
                    bar.set_postfix_str(f"best {best * 1e3:.3f} ms")
            database.commit_tuning_records([
                TuningRecord(c.sch.trace, workload,
                             list(r.run_secs) if r.run_secs and not r.error_msg
                             else [MAX_RUN_SECS], ctx.target, c.args_info)
                for c, r in zip(candidates, results)])
            cost_model.update(candidates, results)
            strategy.notify_runner_results(candidates, results)
        if bar.n < max_trials:  # the search space ran out first: the bar ends full anyway
            bar.total = bar.n
            bar.set_description_str(f"tune_tir {ctx.task_name} (all {bar.n} candidates)")
    finally:
        strategy.candidate_sink = None
        bar.close()
    strategy.post_tuning()
