"""tvm.lower: a PrimFunc or IRModule through the TIR pipeline, as TVM lowers it."""

from __future__ import annotations

import pytest

import mlckit as tvm
from mlckit.error import TVMTypeError
from mlckit.script import tir as T
from tests.tir.transform._mm import check_numbers, mm_relu, plain, scheduled


@T.prim_func
def lowered_mm_relu(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32"),
                    C: T.Buffer((128, 128), "float32")):
    T.func_attr({"global_symbol": "mm_relu", "tir.noalias": True})
    A_1 = T.Buffer((16384,), data=A.data)
    B_1 = T.Buffer((16384,), data=B.data)
    C_1 = T.Buffer((16384,), data=C.data)
    Y = T.allocate([16384], "float32", "global")
    Y_1 = T.Buffer((16384,), data=Y)
    for i, j, k in T.grid(128, 128, 128):
        if k == 0:
            Y_1[i * 128 + j] = T.float32(0.0)
        Y_1[i * 128 + j] = Y_1[i * 128 + j] + A_1[i * 128 + k] * B_1[k * 128 + j]
    for i, j in T.grid(128, 128):
        C_1[i * 128 + j] = T.max(Y_1[i * 128 + j], T.float32(0.0))


@T.prim_func
def lowered_scheduled(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32"),
                      C: T.Buffer((128, 128), "float32")):
    # the same indices as TVM 0.27's; as TVM v0.23, PlanAndUpdateBufferAllocationLocation moves
    # Y into the loop, CompactBufferAllocation shrinks it there and StorageRewrite hoists the
    # small allocation to the top (TVM 0.27's PlanAndUpdate... moves nothing: Y stays whole)
    T.func_attr({"global_symbol": "mm_relu", "tir.noalias": True})
    A_1 = T.Buffer((16384,), data=A.data)
    B_1 = T.Buffer((16384,), data=B.data)
    C_1 = T.Buffer((16384,), data=C.data)
    Y = T.allocate([4], "float32", "global")
    Y_1 = T.Buffer((4,), data=Y)
    for i, j_0 in T.grid(128, 32):
        for j_1_init in range(4):
            Y_1[j_1_init] = T.float32(0.0)
        for k in range(128):
            Y_1[0] = Y_1[0] + A_1[i * 128 + k] * B_1[k * 128 + j_0 * 4]
            Y_1[1] = Y_1[1] + A_1[i * 128 + k] * B_1[k * 128 + j_0 * 4 + 1]
            Y_1[2] = Y_1[2] + A_1[i * 128 + k] * B_1[k * 128 + j_0 * 4 + 2]
            Y_1[3] = Y_1[3] + A_1[i * 128 + k] * B_1[k * 128 + j_0 * 4 + 3]
        # the vectorized ax0: one vector store, as TVM 0.27's VectorizeLoop writes it
        C_1[i * 128 + j_0 * 4:i * 128 + j_0 * 4 + 4] = T.max(
            Y_1[T.Ramp(0, 1, 4)], T.Broadcast(T.float32(0.0), 4))


def test_lower_of_a_prim_func_names_it_by_its_global_symbol():
    lowered = tvm.lower(mm_relu)
    tvm.ir.assert_structural_equal(lowered["mm_relu"], lowered_mm_relu)


def test_lower_of_a_module_lowers_each_prim_func():
    tvm.ir.assert_structural_equal(tvm.lower(plain())["mm_relu"], lowered_mm_relu)


def test_lower_of_the_scheduled_kernel_removes_blocks_compacts_flattens_vectorizes_and_unrolls():
    lowered = tvm.lower(scheduled())
    tvm.ir.assert_structural_equal(lowered["mm_relu"], lowered_scheduled)
    check_numbers(lowered["mm_relu"])  # lnumpy runs it in test_build and the differential tests


def test_lower_takes_a_pipeline():
    only_init = tvm.transform.Sequential([tvm.tir.transform.LowerInitBlock()])
    lowered = tvm.lower(mm_relu, tir_pipeline=only_init)
    assert "if vk == 0:" in lowered.script() and "T.block" in lowered.script()


def test_lower_rejects_what_is_not_tir():
    with pytest.raises(TVMTypeError, match="PrimFunc or an IRModule"):
        tvm.lower("mm_relu")


@T.prim_func
def lowered_cache_write(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32"),
                        C: T.Buffer((16, 16), "float32")):
    # what TVM 0.23's pipeline gives (TVM 0.27 declares the views and prints the allocation
    # `T.alloc_local((16,))`; its StorageRewrite hoists it to the top too)
    T.func_attr({"global_symbol": "matmul", "tir.noalias": True})
    A_1 = T.Buffer((256,), data=A.data)
    B_1 = T.Buffer((256,), data=B.data)
    C_1 = T.Buffer((256,), data=C.data)
    C_local = T.allocate([16], "float32", "local")
    C_local_1 = T.Buffer((16,), scope="local", data=C_local)
    for j_0, i_0 in T.grid(2, 8):
        for k, i_1, j_1 in T.grid(16, 2, 8):
            if k == 0:
                C_local_1[i_1 * 8 + j_1] = T.float32(0.0)
            C_local_1[i_1 * 8 + j_1] = (C_local_1[i_1 * 8 + j_1]
                                      + A_1[i_0 * 32 + i_1 * 16 + k] * B_1[k * 16 + j_0 * 8 + j_1])
        for ax0, ax1 in T.grid(2, 8):
            C_1[i_0 * 32 + ax0 * 16 + j_0 * 8 + ax1] = C_local_1[ax0 * 8 + ax1]


def test_lower_of_a_cache_write_kernel_is_what_tvm_lowers_it_to():
    import numpy as np

    from mlckit.backend import lnumpy, numba_cpu
    from tests.tir.transform.test_compact_buffer_allocation import blocked

    lowered = tvm.lower(blocked())
    tvm.ir.assert_structural_equal(lowered["matmul"], lowered_cache_write)
    # the allocation keeps its memory once the DeclBuffer is stripped
    assert 'C_local = T.allocate([16], "float32", "local")' in lowered.script()
    rng = np.random.default_rng(1)
    a, b = rng.random((16, 16), dtype="float32"), rng.random((16, 16), dtype="float32")
    for build in (lnumpy.build, lambda f: numba_cpu.build(f, cache=False)):
        c = np.zeros((16, 16), "float32")
        build(lowered["matmul"])(a, b, c)
        np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5)
