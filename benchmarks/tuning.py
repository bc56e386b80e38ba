"""meta_schedule throughput: candidates built and measured per second with 1 and 2
workers, and how the tuned course matmul compares with the course's hand schedule.

Each candidate is a Numba compile (the serial twin, see ``runner.worker.serial_twin``) plus a
few timed runs; the compile dominates.  Every measurement uses a fresh ``MLCKIT_CACHE_DIR``,
so nothing is loaded from an earlier run's cache, and the worker pool is started (and
warmed) before the clock starts.  The numbers are ratios within this one run: on a shared
machine absolute rates move with the load.

    python benchmarks/tuning.py [--trials 16] [--course]

``--course`` also tunes the course's 128x128x128 matmul with the built-in space, 64 trials,
and prints the best candidate's time against ``schedule_mm`` (the chapter's hand schedule,
``j`` split by 4), both measured the same way (one thread, median of 3 repeats).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from mlckit import meta_schedule as ms  # noqa: E402
from mlckit.script import from_source  # noqa: E402
from mlckit.tir import Schedule  # noqa: E402

COURSE_MM = '''
@I.ir_module
class MyModule:
    @T.prim_func
    def main(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32"),
             C: T.Buffer((128, 128), "float32")):
        T.func_attr({"global_symbol": "main", "tir.noalias": True})
        for i, j, k in T.grid(128, 128, 128):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    C[vi, vj] = 0.0
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
'''
TARGET = "llvm --num-cores=1"


def candidates(mod, n: int) -> list:
    """``n`` distinct random candidates of the built-in space (seeded)."""
    ctx = ms.TuneContext(mod, TARGET, space_generator="post-order-apply",
                         search_strategy="replay-trace", rand_state=0)
    strategy = ctx.search_strategy
    strategy.pre_tuning(n, n, ctx.generate_design_space())
    return strategy.generate_measure_candidates()


def throughput(cands, workers: int) -> tuple[float, float]:
    """(candidates per second, median build seconds) with ``workers`` processes."""
    os.environ["MLCKIT_CACHE_DIR"] = tempfile.mkdtemp(prefix="mlckit-tuning-bench-")
    runner = ms.runner.LocalRunner(max_workers=workers)
    warm = runner.run([ms.runner.RunnerInput(cands[0].sch.mod, TARGET, cands[0].args_info)])
    warm[0].result()  # the pool is up and has compiled once
    start = time.perf_counter()
    futures = runner.run([ms.runner.RunnerInput(c.sch.mod, TARGET, c.args_info)
                          for c in cands[1:]])
    results = [f.result() for f in futures]
    elapsed = time.perf_counter() - start
    runner.close()
    errors = [r.error_msg for r in results if r.error_msg]
    if errors:
        raise SystemExit(f"measurement failed: {errors[0]}")
    return len(results) / elapsed, statistics.median(r.build_secs for r in results)


def course_comparison(mod) -> None:
    from mlckit.meta_schedule.runner.worker import measure

    with tempfile.TemporaryDirectory() as work_dir:
        db = ms.tune_tir(mod, TARGET, work_dir=work_dir, max_trials_global=64,
                         num_trials_per_iter=64, seed=0)
        tuned = ms.tir_integration.compile_tir(db, mod, TARGET)
    hand = Schedule(mod)
    block = hand.get_block("C", "main")
    i, j, k = hand.get_loops(block)
    j0, j1 = hand.split(j, factors=[None, 4])
    hand.reorder(i, j0, k, j1)
    hand.decompose_reduction(block, k)
    args = ms.arg_info.ArgInfo.from_prim_func(mod["main"])
    times = {}
    for name, sch in [("hand schedule_mm", hand), ("tuned (64 trials)", tuned)]:
        res = measure(ms.runner.RunnerInput(sch.mod, TARGET, args), repeat=5,
                      min_repeat_ms=50, serial=True)
        times[name] = statistics.median(res.run_secs)
        print(f"  {name:20s} {times[name] * 1e3:8.3f} ms")
    print(f"  tuned is {times['hand schedule_mm'] / times['tuned (64 trials)']:.1f}x faster "
          "than the hand schedule")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=16)
    parser.add_argument("--course", action="store_true")
    args = parser.parse_args()
    os.environ["NUMBA_NUM_THREADS"] = "1"  # the parent measures the course comparison
    mod = from_source(COURSE_MM)
    cands = candidates(mod, args.trials + 1)
    print(f"course matmul 128^3, {len(cands) - 1} candidates of the built-in space")
    rates = {}
    for workers in (1, 2):
        rate, build = throughput(cands, workers)
        rates[workers] = rate
        print(f"  {workers} worker(s): {rate:5.2f} candidates/s (median build {build:.2f} s)")
    print(f"  2 workers / 1 worker: {rates[2] / rates[1]:.2f}x")
    if args.course:
        course_comparison(mod)


if __name__ == "__main__":
    main()
