"""What a measuring worker runs: build one candidate with ``mlckit.build`` and time it.

Kept free of Numba at import time: a spawned worker first limits its threads, then imports
Numba (``start_worker``).

Example::

    result = measure(RunnerInput(sch.mod, "llvm --num-cores=1", args_info), repeat=3)
"""

from __future__ import annotations

import os
import signal
import sys
import time

THREAD_VARS = ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS",
               "MKL_NUM_THREADS")


def limit_threads(threads: int) -> None:
    """Make Numba (and any BLAS) use ``threads`` threads in this process: the pool's
    initializer, run before Numba is imported so its thread pool is sized right.  A forked
    worker whose parent already launched Numba's threads keeps their count (Numba refuses
    to compile after ``NUMBA_NUM_THREADS`` changes then) and uses ``threads`` of them."""
    parallel = sys.modules.get("numba.np.ufunc.parallel")
    launched = getattr(parallel, "_is_initialized", False)
    for var in THREAD_VARS:
        if not (launched and var == "NUMBA_NUM_THREADS"):
            os.environ[var] = str(threads)
    if launched:
        import numba

        numba.set_num_threads(max(1, min(threads, numba.config.NUMBA_NUM_THREADS)))
    # Ctrl-C (or a notebook kernel shutting down) is the parent's to handle; a worker
    # interrupted mid-task would only print a traceback, then be terminated anyway.
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def start_worker(threads: int, warm: bool = True) -> None:
    """A measuring worker's start (the pool's initializer): its threads limited, then, with
    ``warm``, Numba imported and its typing and target context set up by one tiny compile,
    so that the first candidate's build pays neither (the pool starts while the search
    samples).  A forked worker (``warm=False``) has the parent's Numba already, and may not
    compile before its first candidate: Numba refuses a new thread count once the parent's
    threads were launched."""
    limit_threads(threads)
    if not warm:
        return
    import numba

    import mlckit.driver.build  # noqa: F401 - imports the backends and Numba's extensions

    numba.njit(lambda x: x + 1)(1)


def serial_twin(mod):
    """``mod`` with its parallel loops made serial.

    A worker measuring with one thread runs a parallel loop serially anyway; compiling it
    without Numba's parallel (parfor) pipeline makes the build about three times faster, and
    the build, not the run, is what a tuning trial costs.
    """
    from mlckit.ir.module import IRModule
    from mlckit.tir import stmt as S
    from mlckit.tir.function import PrimFunc

    def go(x):
        if isinstance(x, list):
            new = [go(y) for y in x]
            return new if any(a is not b for a, b in zip(new, x)) else x
        if not isinstance(x, S.Stmt):
            return x
        changes = {}
        for name in x.field_names():
            value = getattr(x, name)
            if isinstance(value, (S.Stmt, list)):
                new = go(value)
                if new is not value:
                    changes[name] = new
        if isinstance(x, S.For) and x.kind == S.ForKind.PARALLEL:
            changes["kind"] = S.ForKind.SERIAL
        return x.replace(**changes) if changes else x

    return IRModule({gv.name_hint: f.replace(body=go(f.body)) if isinstance(f, PrimFunc) else f
                     for gv, f in mod.functions.items()})


def measure(inp, number: int = 1, repeat: int = 3, min_repeat_ms: float = 20.0,
            seed: int = 0, serial: bool = False):
    """Build ``inp.mod`` for ``inp.target``, run it on random inputs and time it: a
    ``RunnerResult`` with one seconds-per-run value per repeat, or the error.  ``serial``:
    build the serial twin (for a one-thread worker, see ``serial_twin``)."""
    import numpy as np

    from mlckit.driver.build import build
    from mlckit.runtime.module import time_evaluator

    from .runner import RunnerResult

    start = time.perf_counter()
    try:
        rt_mod = build(serial_twin(inp.mod) if serial else inp.mod, inp.target)
        func = rt_mod["main"]
        rng = np.random.default_rng(seed)
        args = [info.random(rng) for info in inp.args_info]
        func(*args)  # Numba compiles on the first call
    except Exception as err:
        return RunnerResult(None, f"build failed: {type(err).__name__}: {err}",
                            time.perf_counter() - start)
    build_secs = time.perf_counter() - start
    try:
        timer = time_evaluator(func, None, number=number, repeat=repeat,
                               min_repeat_ms=min_repeat_ms)
        secs = list(timer(*args).results)
    except Exception as err:
        return RunnerResult(None, f"run failed: {type(err).__name__}: {err}", build_secs)
    return RunnerResult(secs, None, build_secs)
