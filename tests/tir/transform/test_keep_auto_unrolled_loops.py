"""KeepAutoUnrolledLoops: `pragma_unroll_explicit` becomes 0, so that UnrollLoop marks the
loops auto-unrolling picks `T.unroll` instead of writing their copies out; numba_cpu runs it
before TVM's pipeline, and a loop the schedule unrolls itself is still written out."""

import numpy as np

import mlckit as tvm
from mlckit.backend import numba_cpu
from mlckit.ir import assert_structural_equal
from mlckit.script import tir as T
from mlckit.tir.transform import KeepAutoUnrolledLoops, keep_auto_unrolled_loops


@T.prim_func(private=True)
def auto_unrolled(A: T.Buffer((64,), "float32")):
    for i in T.serial(4, annotations={"pragma_auto_unroll_max_step": 64,
                                      "pragma_unroll_explicit": 1}):
        for j in range(16):
            A[i * 16 + j] = A[i * 16 + j] + T.float32(1)


def test_the_explicit_pragma_becomes_zero():
    @T.prim_func(private=True)
    def expected(A: T.Buffer((64,), "float32")):
        for i in T.serial(4, annotations={"pragma_auto_unroll_max_step": 64,
                                          "pragma_unroll_explicit": 0}):
            for j in range(16):
                A[i * 16 + j] = A[i * 16 + j] + T.float32(1)

    after = KeepAutoUnrolledLoops()(tvm.IRModule({"main": auto_unrolled}))["main"]
    assert_structural_equal(after, expected)


def test_lowered_the_auto_unrolled_loops_stay_loops_marked_unroll():
    @T.prim_func(private=True)
    def expected(A: T.Buffer((64,), "float32")):
        for i in T.unroll(4):  # 4 x 16 statements: within the 64 steps
            for j in T.unroll(16):
                A[i * 16 + j] = A[i * 16 + j] + T.float32(1)

    lowered = tvm.lower(keep_auto_unrolled_loops(auto_unrolled))["main"]
    assert_structural_equal(lowered, expected)
    explicit = tvm.lower(auto_unrolled)["main"].script()  # TVM's own: 64 copies written out
    assert "for " not in explicit and explicit.count("T.float32(1.0)") == 64


def test_numba_cpu_prints_the_loop_and_computes_the_same():
    kernel = numba_cpu.build(auto_unrolled, cache=False)
    assert "for j in range(16):  # T.unroll" in kernel.source
    a = np.arange(64, dtype="float32")
    kernel(a)
    np.testing.assert_array_equal(a, np.arange(64, dtype="float32") + 1)


def test_a_function_without_the_pragma_is_the_same_object():
    @T.prim_func(private=True)
    def plain(A: T.Buffer((4,), "float32")):
        for i in T.unroll(4):
            A[i] = A[i] + T.float32(1)

    assert keep_auto_unrolled_loops(plain) is plain
