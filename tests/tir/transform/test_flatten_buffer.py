"""FlattenBuffer: one row-major offset per access (checked against TVM 0.27's output for the
course's mm_relu; TVM 0.27 prints the parameters' flat views `A_1 = A.view(16384)`)."""

from __future__ import annotations

import pytest

import mlckit as tvm
from mlckit.error import TVMError
from mlckit.script import tir as T

from ._mm import check_numbers, plain


@T.prim_func
def expected(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32"),
             C: T.Buffer((128, 128), "float32")):
    T.func_attr({"global_symbol": "mm_relu", "tir.noalias": True})
    A_1 = T.decl_buffer((16384,), data=A.data)
    B_1 = T.decl_buffer((16384,), data=B.data)
    C_1 = T.decl_buffer((16384,), data=C.data)
    Y = T.decl_buffer((16384,))
    for i, j, k in T.grid(128, 128, 128):
        if k == 0:
            Y[i * 128 + j] = T.float32(0.0)
        Y[i * 128 + j] = Y[i * 128 + j] + A_1[i * 128 + k] * B_1[k * 128 + j]
    for i, j in T.grid(128, 128):
        C_1[i * 128 + j] = T.max(Y[i * 128 + j], T.float32(0.0))


def blockless():
    seq = tvm.transform.Sequential([tvm.tir.transform.LowerInitBlock(),
                                    tvm.tir.transform.ConvertBlocksToOpaque(),
                                    tvm.tir.transform.LowerOpaqueBlock()])
    return seq(plain())


def test_accesses_become_row_major_offsets_and_parameters_flat_views():
    after = tvm.tir.transform.FlattenBuffer()(blockless())
    tvm.ir.assert_structural_equal(after["mm_relu"], expected)


def test_flattened_function_still_computes_mm_relu():
    check_numbers(tvm.tir.transform.FlattenBuffer()(blockless())["mm_relu"])


def test_one_dimensional_buffers_are_left_alone():
    @T.prim_func
    def f(a: T.Buffer((8,), "float32"), b: T.Buffer((8,), "float32")):
        for i in range(8):
            b[i] = a[i]

    mod = tvm.IRModule({"f": f})
    assert tvm.tir.transform.FlattenBuffer()(mod)["f"] is f


def test_blocks_with_iterators_must_be_made_opaque_first():
    with pytest.raises(TVMError, match="ConvertBlocksToOpaque"):
        tvm.tir.transform.FlattenBuffer()(plain())


def test_an_opaque_block_gets_flat_allocations_and_regions():
    @T.prim_func
    def before(A: T.Buffer((4, 8), "float32")):
        T.func_attr({"global_symbol": "f"})
        for _ in range(1):
            with T.block("outer"):
                T.reads(A[0:4, 0:8])
                T.writes()
                B = T.alloc_buffer((4, 8))
                for i in range(4):
                    with T.block("row"):
                        T.reads(A[i, 0:8])
                        T.writes(B[i, 0:8])
                        for j in range(8):
                            B[i, j] = A[i, j]

    @T.prim_func
    def expected(A: T.Buffer((4, 8), "float32")):
        T.func_attr({"global_symbol": "f"})
        A_1 = T.decl_buffer((32,), data=A.data)
        for _ in range(1):
            with T.block("outer"):
                T.reads(A_1[0:32])
                T.writes()
                B = T.alloc_buffer((32,))
                for i in range(4):
                    with T.block("row"):
                        T.reads(A_1[i * 8:i * 8 + 8])
                        T.writes(B[i * 8:i * 8 + 8])
                        for j in range(8):
                            B[i * 8 + j] = A_1[i * 8 + j]

    after = tvm.tir.transform.FlattenBuffer()(tvm.IRModule({"f": before}))
    tvm.ir.assert_structural_equal(after["f"], expected)
