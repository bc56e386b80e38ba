"""The course's GPU schedules equal NumPy on the fast CPU path, on the simulator and (``-m
gpu``) on a real GPU."""

from __future__ import annotations

import numpy as np
import pytest

from mlckit.backend import numba_cuda

from .schedules import CASES, inputs, reference


@pytest.mark.parametrize("case", sorted(CASES))
def test_fast_path_equals_numpy(case):
    kernel, schedule = CASES[case]
    func = schedule().mod["main"]
    args = inputs(func)
    args[-1][:] = np.nan
    f = numba_cuda.build(func, mode="cpu")
    assert f.mode == "cpu"
    f(*args)
    np.testing.assert_allclose(args[-1], reference(kernel, args), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("case", sorted(CASES))
def test_simulator_equals_numpy(simulator, case):
    kernel, schedule = CASES[case]
    func = schedule().mod["main"]
    args = inputs(func, seed=1)
    args[-1][:] = np.nan
    out = simulator.run(func, *args)
    np.testing.assert_allclose(out[-1], reference(kernel, args), rtol=1e-5, atol=1e-5)


@pytest.mark.gpu
@pytest.mark.parametrize("case", sorted(CASES))
def test_gpu_equals_numpy(case):
    kernel, schedule = CASES[case]
    func = schedule().mod["main"]
    args = inputs(func, seed=2)
    args[-1][:] = np.nan
    f = numba_cuda.build(func, mode="gpu")
    f(*args)
    np.testing.assert_allclose(args[-1], reference(kernel, args), rtol=1e-5, atol=1e-5)


@pytest.mark.gpu
def test_gpu_device_arrays_stay_on_the_device():
    import mlckit

    kernel, schedule = CASES["matmul_shared"]
    func = schedule().mod["main"]
    a, b, c = inputs(func, seed=3)
    dev = mlckit.cuda(0)
    a_nd, b_nd = mlckit.nd.array(a, dev), mlckit.nd.array(b, dev)
    c_nd = mlckit.nd.empty(c.shape, "float32", dev)
    mlckit.build(func, target="cuda")["main"](a_nd, b_nd, c_nd)
    assert c_nd._mlckit_device_array() is not None
    np.testing.assert_allclose(c_nd.numpy(), a @ b, rtol=1e-5, atol=1e-5)


def test_missing_barrier_goes_wrong_on_the_simulator(simulator):
    """Without its barrier, the window sum reads shared memory other threads have not
    written yet: the simulator runs the threads as a GPU would and gets it wrong."""
    kernel, schedule = CASES["window_sum_shared"]
    func = schedule().mod["main"]
    args = inputs(func, seed=4)
    args[-1][:] = 0
    out = simulator.run(func, *args, sync=False)
    assert not np.allclose(out[-1], reference(kernel, args))
