"""The GPU hot path: launches configured once per accepted argument shapes, grids from the
symbolic sizes, and every new shape checked in full."""

from __future__ import annotations

import numpy as np
import pytest

from mlckit.backend import numba_cuda
from mlckit.backend.numba_cuda.launch import LaunchPlans, launches_only, native_arrays
from mlckit.backend.signature import ArgumentError, Signature
from mlckit.script import tir as T

from .schedules import bind_vector_add, shared_window_sum


@T.prim_func
def add_n(a: T.handle, b: T.handle, c: T.handle):
    n = T.int32()
    A = T.match_buffer(a, (n,), "float32")
    B = T.match_buffer(b, (n,), "float32")
    C = T.match_buffer(c, (n,), "float32")
    for i0 in T.thread_binding((n + 63) // 64, thread="blockIdx.x"):
        for i1 in T.thread_binding(64, thread="threadIdx.x"):
            with T.block("C"):
                vi = T.axis.spatial(n, i0 * 64 + i1)
                T.where(i0 * 64 + i1 < n)
                C[vi] = A[vi] + B[vi]


class FakeKernel:
    """Stands for a ``numba.cuda`` kernel: records each configuration and launch."""

    def __init__(self):
        self.configured, self.launched = [], []

    def __getitem__(self, config):
        self.configured.append(config)
        return lambda *args: self.launched.append((config, args))


def plans_for(func):
    lowered = numba_cuda.lower(func)
    kernels = numba_cuda.find_kernels(lowered, "main")
    fakes = {k.name: FakeKernel() for k in kernels}
    return LaunchPlans(fakes, kernels), fakes, lowered, kernels


def test_a_host_part_that_only_launches_gets_plans():
    for sch in (bind_vector_add(), shared_window_sum()):
        lowered = numba_cuda.lower(sch.mod["main"])
        kernels = numba_cuda.find_kernels(lowered, "main")
        assert launches_only(lowered, kernels, [])
        assert not launches_only(lowered, kernels, ["a host buffer"])


def test_launches_are_configured_once_per_accepted_shapes():
    plans, fakes, _, _ = plans_for(bind_vector_add().mod["main"])
    (fake,) = fakes.values()
    arrays = [np.zeros(256, "float32") for _ in range(3)]
    assert plans.get(arrays) is None
    launches = plans.accept(arrays, {})
    assert fake.configured == [(4, 64)]
    for _ in range(3):
        assert plans.get([a.copy() for a in arrays]) is launches
    assert fake.configured == [(4, 64)]


def test_the_grid_follows_the_symbolic_size():
    func = add_n
    plans, fakes, _, _ = plans_for(func)
    (fake,) = fakes.values()
    sig = Signature(func)
    for n, grid in ((100, 2), (128, 2), (129, 3), (100, 2)):
        arrays = [np.zeros(n, "float32") for _ in range(3)]
        launches = plans.get(arrays)
        if launches is None:
            launches = plans.accept(arrays, sig.check(arrays)[1])
        launches[0](*arrays)
        assert fake.launched[-1][0] == (grid, 64)
    assert fake.configured == [(2, 64), (2, 64), (3, 64)]  # n = 100 planned once


def test_other_dtypes_or_read_only_outputs_are_not_taken_for_accepted_ones():
    plans, _, _, _ = plans_for(bind_vector_add().mod["main"])
    arrays = [np.zeros(256, "float32") for _ in range(3)]
    plans.accept(arrays, {})
    assert plans.get([np.zeros(256, "float64")] + arrays[1:]) is None
    read_only = arrays[2].copy()
    read_only.flags.writeable = False
    assert plans.get(arrays[:2] + [read_only]) is None
    with pytest.raises(ArgumentError, match="read-only"):
        Signature(bind_vector_add().mod["main"]).check(arrays[:2] + [read_only])


class FakeDispatcher:
    """``numba.cuda``'s kernel as the plans use it: ``kernel[grid, block]`` is a launch
    configuration; calling it types the arguments, compiles once per types (``overloads``)
    and launches that compiled kernel."""

    def __init__(self):
        self.overloads, self.dispatched, self.launched = {}, 0, []

    def typeof_pyval(self, a):
        return ("array", a.dtype.str, a.ndim)

    def __getitem__(self, config):
        grid, block = config
        return FakeConfiguration(self, (grid, 1, 1), (block, 1, 1))

    def launch(self, args, griddim, blockdim, stream, sharedmem):
        self.launched.append((griddim, blockdim, len(args)))


class FakeConfiguration:
    def __init__(self, dispatcher, griddim, blockdim):
        self.dispatcher, self.griddim, self.blockdim = dispatcher, griddim, blockdim
        self.stream = self.sharedmem = 0

    def __call__(self, *args):
        d = self.dispatcher
        d.dispatched += 1
        compiled = d.overloads.setdefault(tuple(d.typeof_pyval(a) for a in args), d)
        compiled.launch(args, self.griddim, self.blockdim, 0, 0)


def test_later_launches_go_straight_to_the_compiled_kernel():
    lowered = numba_cuda.lower(bind_vector_add().mod["main"])
    kernels = numba_cuda.find_kernels(lowered, "main")
    dispatcher = FakeDispatcher()
    plans = LaunchPlans({kernels[0].name: dispatcher}, kernels)
    arrays = [np.zeros(256, "float32") for _ in range(3)]
    (launch,) = plans.accept(arrays, {})
    for _ in range(3):
        launch(*arrays)
    assert dispatcher.dispatched == 1  # typed and compiled once, through the configuration
    assert dispatcher.launched == [((4, 1, 1), (64, 1, 1), 3)] * 3


def test_native_arrays_are_the_arrays_of_the_kernels_memory():
    import mlckit

    a = np.zeros(4, "float32")
    assert native_arrays([a, mlckit.nd.array(a)], "sim")[0] is a
    assert native_arrays([a, 1.0], "sim") is None
    assert native_arrays([a], "gpu") is None  # a host array is copied to the GPU, not planned


def test_a_symbolic_kernel_runs_at_each_size_on_the_simulator(simulator):
    rng = np.random.default_rng(0)
    for n in (100, 129, 100):
        a, b = rng.uniform(-1, 1, (2, n)).astype("float32")
        out = simulator.run(add_n, a, b, np.full(n, np.nan, "float32"))[2]
        np.testing.assert_allclose(out, a + b)


def test_a_wrong_shape_after_an_accepted_call_is_refused_on_the_simulator(simulator):
    a = np.ones(100, "float32")
    simulator.run(add_n, a, a, np.empty(100, "float32"))
    with pytest.raises(AssertionError, match=r"ArgumentError: .*argument 2 \(B\) does not match .*its shape is \(99,\)"):
        simulator.run(add_n, a, np.ones(99, "float32"), np.empty(100, "float32"))


@pytest.mark.gpu
def test_device_arrays_take_the_planned_launches_on_the_gpu():
    import mlckit

    dev = mlckit.cuda(0)
    f = numba_cuda.build(add_n, mode="gpu")
    rng = np.random.default_rng(1)
    for n in (100, 129, 100):
        a, b = rng.uniform(-1, 1, (2, n)).astype("float32")
        args = [mlckit.nd.array(a, dev), mlckit.nd.array(b, dev),
                mlckit.nd.empty((n,), "float32", dev)]
        f(*args)
        np.testing.assert_allclose(args[2].numpy(), a + b)
    assert len(f._plans.plans) == 2
    with pytest.raises(ArgumentError, match=r"argument 2 \(B\) does not match .*its shape is \(99,\)"):
        f(args[0], mlckit.nd.empty((99,), "float32", dev), args[2])


def test_a_device_array_passes_the_check_of_a_written_argument():
    """Device memory is writable: the argument check sees device arrays as writable views."""

    class FakeDeviceArray:
        shape, dtype, __cuda_array_interface__ = (256,), np.dtype("float32"), {}

    views = [numba_cuda._check_view(FakeDeviceArray()) for _ in range(3)]
    Signature(bind_vector_add().mod["main"]).check(views)
