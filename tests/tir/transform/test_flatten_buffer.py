"""FlattenBuffer: one row-major offset per access, in TVM 0.23's form: the parameters' flat
views undeclared, `DeclBuffer` stripped (TVM 0.27 declares the views, `A_1 = A.view(16384)`)."""

from __future__ import annotations

import numpy as np
import pytest

import mlckit as tvm
from mlckit.error import TVMError
from mlckit.script import tir as T

from ._mm import check_numbers, plain


@T.prim_func
def expected(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32"),
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


def test_a_strided_view_of_an_allocation_is_indexed_with_its_strides():
    @T.prim_func
    def before(A: T.Buffer((4, 16), "float32"), C: T.Buffer((4, 16), "float32")):
        T.func_attr({"global_symbol": "f"})
        B = T.decl_buffer([4, 17], "float32")
        B_1 = T.Buffer([4, 16], dtype="float32", data=B.data, strides=[17, 1])
        for i, j in T.grid(4, 16):
            B_1[i, j] = A[i, j] + T.float32(1)
        for i, j in T.grid(4, 16):
            C[i, j] = B_1[i, j] * T.float32(2)

    @T.prim_func
    def expected(A: T.Buffer((4, 16), "float32"), C: T.Buffer((4, 16), "float32")):
        T.func_attr({"global_symbol": "f"})
        A_1 = T.Buffer((64,), data=A.data)
        C_1 = T.Buffer((64,), data=C.data)
        B = T.allocate([68], "float32", "global")
        B_1 = T.Buffer((68,), data=B)
        for i, j in T.grid(4, 16):
            B_1[i * 17 + j] = A_1[i * 16 + j] + T.float32(1)
        for i, j in T.grid(4, 16):
            C_1[i * 16 + j] = B_1[i * 17 + j] * T.float32(2)

    after = tvm.tir.transform.FlattenBuffer()(tvm.IRModule({"f": before}))["f"]
    tvm.ir.assert_structural_equal(after, expected)
    from mlckit.backend import lnumpy

    a = np.arange(64, dtype="float32").reshape(4, 16)
    c = np.zeros((4, 16), "float32")
    lnumpy.build(after)(a, c)  # (the backends index strided buffers only once flattened)
    np.testing.assert_allclose(c, (a + 1) * 2)


def test_a_bool_buffer_is_backed_by_int8():
    @T.prim_func
    def before(A: T.Buffer((2, 5), "bool"), B: T.Buffer((2, 5), "bool")):
        T.func_attr({"global_symbol": "f"})
        for i, j in T.grid(2, 5):
            B[i, j] = A[i, j]

    @T.prim_func
    def expected(A: T.Buffer((2, 5), "bool"), B: T.Buffer((2, 5), "bool")):
        T.func_attr({"global_symbol": "f"})
        A_1 = T.Buffer((10,), "int8", data=A.data)
        B_1 = T.Buffer((10,), "int8", data=B.data)
        for i, j in T.grid(2, 5):
            B_1[i * 5 + j] = T.Cast("int8", T.Cast("bool", A_1[i * 5 + j]))

    after = tvm.tir.transform.FlattenBuffer()(tvm.IRModule({"f": before}))["f"]
    tvm.ir.assert_structural_equal(after, expected)


def test_axis_separators_keep_one_flat_axis_per_group():
    @T.prim_func
    def before():
        T.func_attr({"global_symbol": "main"})
        A = T.alloc_buffer([2, 3, 5, 7], axis_separators=[2])
        for i0, i1, i2, i3 in T.grid(2, 3, 5, 7):
            T.evaluate(A[i0, i1, i2, i3])

    @T.prim_func
    def expected():
        T.func_attr({"global_symbol": "main"})
        A = T.alloc_buffer([6, 35], axis_separators=[1])
        for i0, i1, i2, i3 in T.grid(2, 3, 5, 7):
            T.evaluate(A[i0 * 3 + i1, i2 * 7 + i3])

    after = tvm.tir.transform.FlattenBuffer()(tvm.IRModule({"main": before}))["main"]
    tvm.ir.assert_structural_equal(after, expected)


def test_misplaced_axis_separators_are_rejected():
    @T.prim_func
    def before():
        A = T.alloc_buffer([2, 3], axis_separators=[2])
        for i0, i1 in T.grid(2, 3):
            T.evaluate(A[i0, i1])

    with pytest.raises(TVMError, match="axis_separators"):
        tvm.tir.transform.FlattenBuffer()(tvm.IRModule({"main": before}))


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
        A_1 = T.Buffer((32,), data=A.data)
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
