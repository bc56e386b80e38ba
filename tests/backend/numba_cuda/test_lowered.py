"""numba_cuda printing TVM's lowered TIR: the TIR pipeline then ``ThreadSync`` change the
IR, the kernel generator only prints it.  Numbers on
the simulator against NumPy, the printed kernel written out."""

from __future__ import annotations

import numpy as np
import pytest

from mlckit.backend import numba_cuda
from mlckit.script import tir as T
from mlckit.tir import stmt as S
from mlckit.tir.traversal import post_order_visit

from .schedules import CASES, inputs, reference, shared_blocking, shared_window_sum

WINDOW_SUM_LOWERED = '''\
@cuda.jit  # launched as grid 4, block 64; 264 bytes of shared memory
def main_kernel(A, B):
    A_shared = cuda.shared.array((66,), np.float32)
    i_0 = cuda.blockIdx.x
    i_1 = cuda.threadIdx.x
    for ax0_0 in range(2):
        ax0_1 = cuda.threadIdx.x
        if ax0_0 * 64 + ax0_1 < 66:
            A_shared[ax0_0 * 64 + ax0_1] = A[i_0 * 64 + ax0_0 * 64 + ax0_1]
    cuda.syncthreads()
    B[i_0 * 64 + i_1] = A_shared[i_1] + A_shared[i_1 + 1] + A_shared[i_1 + 2]


def main(A, B):
    """Host part: launches the kernels on arrays in device memory."""
    main_kernel[4, 64](A, B)
'''


def test_the_kernel_is_the_lowered_tir_printed():
    """``T.launch_thread`` is a thread index, ``T.allocate`` in shared memory a shared array,
    the flat indices are FlattenBuffer's, the barrier ThreadSync's."""
    source = numba_cuda.to_source(shared_window_sum().mod["main"])
    assert source[source.index("@cuda.jit"):] == WINDOW_SUM_LOWERED


def test_the_lowered_tir_has_no_blocks_and_launches_threads():
    func = numba_cuda.lower(shared_blocking().mod["main"])
    kinds: list = []
    post_order_visit(func.body, lambda n: kinds.append(type(n).__name__))
    assert "BlockRealize" not in kinds
    launches = []
    post_order_visit(func.body, lambda n: isinstance(n, S.AttrStmt)
                     and n.attr_key == "thread_extent" and launches.append(n.node.thread_tag))
    # the fetches' threadIdx.x launches stay nested, as TVM's LowerOpaqueBlock leaves them
    assert sorted(launches) == ["blockIdx.x", "blockIdx.y", "threadIdx.x", "threadIdx.x",
                                "threadIdx.x"]
    assert func.script().count('T.tvm_storage_sync("shared")') == 2


def test_barriers_surround_the_cooperative_fetch():
    source = numba_cuda.to_source(shared_blocking().mod["main"])
    lines = [ln.strip() for ln in source.splitlines()]
    first, second = [n for n, ln in enumerate(lines) if ln == "cuda.syncthreads()"]
    fetch = [n for n, ln in enumerate(lines) if ln.startswith("A_shared[")]
    compute = [n for n, ln in enumerate(lines) if ln.startswith("C_local[") and "A_shared" in ln]
    assert first < fetch[0] < second < compute[0]


@pytest.mark.parametrize("case", sorted(CASES))
def test_simulator_runs_the_lowered_kernels_equal_to_numpy(simulator, case):
    kernel, schedule = CASES[case]
    func = schedule().mod["main"]
    args = inputs(func, seed=2)
    args[-1][:] = np.nan
    out = simulator.run(func, *args)
    np.testing.assert_allclose(out[-1], reference(kernel, args), rtol=1e-5, atol=1e-5)


def test_without_barriers_the_lowered_kernel_goes_wrong_on_the_simulator(simulator):
    func = shared_window_sum().mod["main"]
    args = inputs(func, seed=3)
    out = simulator.run(func, *args, sync=False)
    assert not np.allclose(out[-1], reference("window_sum", args), rtol=1e-5, atol=1e-5)


def assert_doubles_on_the_simulator(func, shape):
    """``func(A, B)`` leaves ``B = 2 * A`` when its kernel runs on the simulator."""
    a = np.arange(np.prod(shape), dtype="float32").reshape(shape)
    b = np.zeros_like(a)
    numba_cuda.build(func, mode="sim")(a, b)
    np.testing.assert_array_equal(b, a * 2)


@T.prim_func
def fused_scale(A: T.Buffer((4, 64), "float32"), B: T.Buffer((4, 64), "float32")):
    for f in T.thread_binding(256, thread="threadIdx.x"):
        with T.block("B"):
            vi = T.axis.spatial(4, f // 64)
            vj = T.axis.spatial(64, f % 64)
            B[vi, vj] = A[vi, vj] * T.float32(2)


def test_a_kernel_indexes_the_parameters_in_their_own_shape():
    """FlattenBuffer's flat views of the parameters are printed in the parameter's shape:
    a reshape in a kernel is a call and a stack frame per thread on a GPU.  An index that
    splits exactly is split (``A[i_0 * 64 + ..., k_0 * 4]``); a fused loop's flat index goes
    by floor division and remainder, as the un-lowered block bound it."""
    source = numba_cuda.to_source(fused_scale)
    assert ".reshape(" not in source
    assert "B[f // 64, f % 64] = A[f // 64, f % 64] * np.float32(2.0)" in source
    source = numba_cuda.to_source(shared_blocking().mod["main"])
    assert ".reshape(" not in source
    assert_doubles_on_the_simulator(fused_scale, (4, 64))


@T.prim_func
def guarded_scale(A: T.Buffer((4, 300), "float32"), B: T.Buffer((4, 300), "float32")):
    for b in T.thread_binding(4, thread="blockIdx.x"):
        for t in T.thread_binding(512, thread="threadIdx.x"):
            with T.block("B"):
                T.where(t < 300)
                vi = T.axis.spatial(4, b)
                vj = T.axis.spatial(300, t)
                B[vi, vj] = A[vi, vj] * T.float32(2)


def test_a_guard_bounds_the_indices_under_it():
    """Under ``if t < 300:`` the flat index ``b * 300 + t`` splits exactly."""
    source = numba_cuda.to_source(guarded_scale)
    assert "    if t < 300:\n        B[b, t] = A[b, t] * np.float32(2.0)\n" in source
    assert_doubles_on_the_simulator(guarded_scale, (4, 300))


@T.prim_func
def kept_unrolled(A: T.Buffer((64, 4), "float32"), B: T.Buffer((64, 4), "float32")):
    for i in T.thread_binding(64, thread="threadIdx.x"):
        for j0 in T.serial(1, annotations={"pragma_auto_unroll_max_step": 16,  # noqa: B007
                                           "pragma_unroll_explicit": 0}):
            for j in range(4):
                with T.block("B"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    B[vi, vj] = A[vi, vj] * T.float32(2)


def test_a_loop_unroll_loop_leaves_stays_a_loop():
    """``pragma_unroll_explicit=0``: UnrollLoop marks the loops ``T.unroll`` and leaves them
    (LLVM, here NVVM, unrolls them); the printer writes what the TIR says, a loop."""
    assert "for j in T.unroll(4):" in numba_cuda.lower(kept_unrolled).script()
    source = numba_cuda.to_source(kept_unrolled)
    assert "        for j in range(4):  # T.unroll\n            B[i, j] = A[i, j]" in source
    assert_doubles_on_the_simulator(kept_unrolled, (64, 4))
