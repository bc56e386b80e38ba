"""ThreadBindingsToLoops: thread-bound loops become CPU loops (the outermost blockIdx loop of
each kernel parallel), and the kernel run as loops computes what NumPy does."""

import numpy as np

import mlckit as tvm
from mlckit.backend import numba_cpu
from mlckit.ir import assert_structural_equal
from mlckit.script import tir as T
from mlckit.tir.transform import ThreadBindingsToLoops, thread_bindings_to_loops


@T.prim_func(private=True)
def shared_sum(A: T.Buffer((256,), "float32"), B: T.Buffer((2,), "float32")):
    for bx in T.thread_binding(2, thread="blockIdx.x"):
        for tx in T.thread_binding(128, thread="threadIdx.x"):
            with T.block("B"):
                vb = T.axis.spatial(2, bx)
                vt = T.axis.reduce(128, tx)
                with T.init():
                    B[vb] = T.float32(0)
                B[vb] = B[vb] + A[vb * 128 + vt]


def test_bound_loops_become_parallel_and_serial_loops():
    @T.prim_func(private=True)
    def expected(A: T.Buffer((256,), "float32"), B: T.Buffer((2,), "float32")):
        for bx in T.parallel(2):
            for tx in range(128):
                with T.block("B"):
                    vb = T.axis.spatial(2, bx)
                    vt = T.axis.reduce(128, tx)
                    with T.init():
                        B[vb] = T.float32(0)
                    B[vb] = B[vb] + A[vb * 128 + vt]

    after = ThreadBindingsToLoops()(tvm.IRModule({"main": shared_sum}))["main"]
    assert_structural_equal(after, expected)


def test_without_parallel_every_loop_is_serial():
    after = thread_bindings_to_loops(shared_sum, parallel=False)
    kinds = []
    tvm.tir.stmt_functor.post_order_visit(
        after.body, lambda s: kinds.append(s.kind) if isinstance(s, tvm.tir.For) else None)
    assert kinds == [tvm.tir.ForKind.SERIAL, tvm.tir.ForKind.SERIAL]


def test_the_loops_compute_the_kernels_result():
    a = np.random.default_rng(0).uniform(-1, 1, 256).astype("float32")
    b = np.zeros(2, "float32")
    numba_cpu.build(thread_bindings_to_loops(shared_sum), cache=False)(a, b)
    np.testing.assert_allclose(b, a.reshape(2, 128).sum(axis=1), rtol=1e-5)


def test_a_function_without_thread_bindings_is_the_same_object():
    @T.prim_func(private=True)
    def serial(A: T.Buffer((4,), "float32")):
        for i in range(4):
            A[i] = A[i] + T.float32(1)

    assert thread_bindings_to_loops(serial) is serial
