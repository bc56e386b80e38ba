"""``LocalRunner``: measure candidates in a pool of worker processes on this machine.

Why processes, and how they start:

- A Numba compile holds the GIL for most of its ~0.3–1 s, so threads would not overlap
  compiles; processes do (``concurrent.futures.ProcessPoolExecutor``, ``max_workers``
  defaulting to the cores this process may use).
- Workers are *spawned*, not forked: the parent may already have run Numba's parallel
  kernels, and forking a process whose OpenMP / workqueue threads exist is unsafe.  A spawned
  worker also starts from a clean ``__main__``: the parent's script is hidden while workers
  start, so a course script without ``if __name__ == "__main__":`` is not re-run in them.
- Each worker limits Numba / OpenMP / BLAS to ``threads_per_worker`` threads (the target's
  ``num-cores`` — 1 for ``"llvm --num-cores=1"`` — else cores / workers) *before* it imports
  Numba, so workers measuring side by side do not oversubscribe the cores.
- With one thread per worker a parallel loop runs serially anyway, so the worker compiles
  the candidate's serial twin (``worker.serial_twin``): Numba's parallel pipeline would
  triple the build time, which is what a trial costs.
- Numba's compile cache: each worker keeps its own in-memory cache (keyed by structural
  hash), and all processes share the on-disk cache under ``$MLCKIT_CACHE_DIR`` — so the
  tuned kernel compiled again in the parent loads from disk instead of recompiling.
- Pools are kept between ``tune_tir`` calls with the same settings (starting one costs a
  second or two of imports) and shut down at exit or by ``close()``.  ``tune_tir`` starts
  the pool (``warm_up``) before it samples the first candidates: the workers import Numba
  and set it up (``worker.start_worker``) while the search runs.

Example::

    runner = ms.runner.LocalRunner(max_workers=2, repeat=3)
    ms.tune_tir(mod, "llvm --num-cores=1", work_dir="t", max_trials_global=32, runner=runner)
"""

from __future__ import annotations

import atexit
import contextlib
import multiprocessing
import os
import sys
from concurrent.futures import ProcessPoolExecutor

from ..error import RunnerError
from ..utils import num_cores
from .runner import Runner, RunnerFuture, RunnerInput
from .worker import measure, start_worker

_POOLS: dict[tuple, ProcessPoolExecutor] = {}


def available_cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


@contextlib.contextmanager
def _hidden_main():
    """Hide the parent's ``__main__`` file while workers spawn: they need nothing from it."""
    main = sys.modules.get("__main__")
    saved = {}
    for attr in ("__file__", "__spec__"):
        if main is not None and attr in vars(main):
            saved[attr] = vars(main)[attr]
    try:
        if main is not None:
            main.__dict__.pop("__file__", None)
            if "__spec__" in saved:
                main.__spec__ = None
        yield
    finally:
        if main is not None:
            main.__dict__.update(saved)


def _noop() -> int:
    return os.getpid()


def _shutdown_pools() -> None:
    for pool in _POOLS.values():
        pool.shutdown(wait=False, cancel_futures=True)
    _POOLS.clear()


atexit.register(_shutdown_pools)


class LocalRunner(Runner):
    """Build and time candidates in ``max_workers`` spawned processes (TVM's
    ``LocalRunner``; ``number``/``repeat``/``min_repeat_ms`` as in ``time_evaluator``)."""

    def __init__(self, max_workers: int | None = None, number: int = 1, repeat: int = 3,
                 min_repeat_ms: float = 20.0, timeout_sec: float = 60.0,
                 threads_per_worker: int | None = None, start_method: str = "spawn"):
        self.max_workers = max_workers or available_cores()
        if self.max_workers < 1:
            raise RunnerError(f"LocalRunner needs at least one worker, got {max_workers}")
        self.number = number
        self.repeat = repeat
        self.min_repeat_ms = min_repeat_ms
        self.timeout_sec = timeout_sec
        self.threads_per_worker = threads_per_worker
        if start_method not in multiprocessing.get_all_start_methods():
            raise RunnerError(f"start method {start_method!r} is not available here (one of "
                              f"{multiprocessing.get_all_start_methods()})")
        self.start_method = start_method

    def _threads(self, target: str) -> int:
        if self.threads_per_worker:
            return self.threads_per_worker
        try:
            cores = num_cores(target)
        except Exception:
            cores = available_cores()
        explicit = "num-cores" in str(target)
        return max(1, cores if explicit else cores // self.max_workers)

    def _pool(self, threads: int, wait: bool = True) -> ProcessPoolExecutor:
        key = (self.max_workers, threads, self.start_method)
        pool = _POOLS.get(key)
        if pool is None:
            ctx = multiprocessing.get_context(self.start_method)
            pool = ProcessPoolExecutor(self.max_workers, mp_context=ctx,
                                       initializer=start_worker,
                                       initargs=(threads, self.start_method != "fork"))
            with _hidden_main():  # workers spawn on these first submissions
                started = [pool.submit(_noop) for _ in range(self.max_workers)]
            _POOLS[key] = pool
            if wait:
                for f in started:
                    f.result()
        return pool

    def warm_up(self, target: str) -> None:
        """Start the workers for ``target`` without waiting for them (their imports and
        Numba's set-up overlap the search's first sampling)."""
        self._pool(self._threads(target), wait=False)

    def _discard(self, key) -> None:
        pool = _POOLS.pop(key, None)
        if pool is not None:
            for proc in list(getattr(pool, "_processes", {}).values()):
                proc.terminate()  # a worker stuck past the timeout cannot be cancelled
            pool.shutdown(wait=False, cancel_futures=True)

    def run(self, inputs: list[RunnerInput]) -> list[RunnerFuture]:
        if not inputs:
            return []
        threads = self._threads(inputs[0].target)
        pool = self._pool(threads)
        key = (self.max_workers, threads, self.start_method)
        return [RunnerFuture(pool.submit(measure, inp, self.number, self.repeat,
                                         self.min_repeat_ms, 0, threads == 1),
                             self.timeout_sec, lambda: self._discard(key))
                for inp in inputs]

    def close(self) -> None:
        for key in [k for k in _POOLS if k[0] == self.max_workers
                    and k[2] == self.start_method]:
            self._discard(key)
