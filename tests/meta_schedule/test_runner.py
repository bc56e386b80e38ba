"""The local runner: workers build and time candidates; failures come back as results."""

import numpy as np
import pytest

from mlckit import meta_schedule as ms
from mlckit.ir import assert_structural_equal
from mlckit.meta_schedule.runner.worker import measure, serial_twin
from mlckit.tir import Schedule
from mlckit.tir import stmt as S

from .workloads import Matmul, run_matmul

ARGS = ms.arg_info.ArgInfo.from_prim_func(Matmul["main"])


def _parallel_matmul():
    sch = Schedule(Matmul)
    i, j, k = sch.get_loops(sch.get_block("C"))
    sch.parallel(i)
    return sch.mod


def test_serial_twin_differs_only_in_the_loop_kind():
    mod = _parallel_matmul()
    twin = serial_twin(mod)
    assert twin["main"].body.block.body.kind == S.ForKind.SERIAL
    sch = Schedule(Matmul)
    assert_structural_equal(twin, sch.mod)
    got, want = run_matmul(twin)
    np.testing.assert_allclose(got, want, rtol=1e-5)


def test_local_runner_measures_in_worker_processes():
    runner = ms.runner.LocalRunner(max_workers=2, repeat=2)
    futures = runner.run([ms.runner.RunnerInput(m, "llvm --num-cores=1", ARGS)
                          for m in (Matmul, _parallel_matmul())])
    for fut in futures:
        res = fut.result()
        assert res.error_msg is None and len(res.run_secs) == 2 and res.build_secs > 0


def test_a_candidate_that_fails_is_a_result_not_a_crash():
    res = measure(ms.runner.RunnerInput(Matmul, "llvm", ARGS[:2]))  # one argument short
    assert res.run_secs is None
    assert res.error_msg.startswith("build failed: ArgumentError")


def test_bad_runner_settings_are_refused():
    with pytest.raises(ms.RunnerError, match="at least one worker"):
        ms.runner.LocalRunner(max_workers=-1)
    with pytest.raises(ms.RunnerError, match="start method 'teleport'"):
        ms.runner.LocalRunner(start_method="teleport")
    with pytest.raises(ms.RunnerError, match="unknown runner 'rpc'"):
        ms.Runner.create("rpc")


def test_a_measurement_past_the_timeout_is_an_error_and_the_pool_restarts():
    runner = ms.runner.LocalRunner(max_workers=1, timeout_sec=0.001)
    (fut,) = runner.run([ms.runner.RunnerInput(Matmul, "llvm --num-cores=1", ARGS)])
    res = fut.result()
    assert res.run_secs is None and res.error_msg == "timed out after 0.001 s"
    runner.timeout_sec = 120
    (fut,) = runner.run([ms.runner.RunnerInput(Matmul, "llvm --num-cores=1", ARGS)])
    assert fut.result().error_msg is None
    runner.close()


def test_a_forked_worker_measures_after_the_parent_launched_numbas_threads():
    # Numba refuses to compile once NUMBA_NUM_THREADS differs from the count of threads it
    # launched: a worker forked from a parent that ran a parallel kernel keeps that count
    # and uses one of them (every candidate's build failed before)
    import numba

    @numba.njit(parallel=True)
    def total(a):
        s = 0.0
        for i in numba.prange(a.shape[0]):
            s += a[i]
        return s

    assert total(np.ones(64)) == 64.0  # the parent's threads are launched
    runner = ms.runner.LocalRunner(max_workers=1, start_method="fork", threads_per_worker=1,
                                   min_repeat_ms=1)
    try:
        (fut,) = runner.run([ms.runner.RunnerInput(Matmul, "llvm", ARGS)])
        res = fut.result()
    finally:
        runner.close()
    assert res.error_msg is None and len(res.run_secs) == 3
