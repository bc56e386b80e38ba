"""LowerMatchBuffer: a T.match_buffer view replaced by the buffer it views."""

from __future__ import annotations

import numpy as np
import pytest

import mlckit as tvm
from mlckit.error import TVMError
from mlckit.script import tir as T


@T.prim_func
def tiles(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32")):
    T.func_attr({"global_symbol": "tiles"})
    for i, j in T.grid(4, 2):
        with T.block("tile"):
            T.reads(A[i * 2:i * 2 + 2, j * 4:j * 4 + 4])
            T.writes(B[i * 2:i * 2 + 2, j * 4:j * 4 + 4])
            a = T.match_buffer(A[i * 2:i * 2 + 2, j * 4:j * 4 + 4], (2, 4), offset_factor=1)
            b = T.match_buffer(B[i * 2:i * 2 + 2, j * 4:j * 4 + 4], (2, 4), offset_factor=1)
            for ii, jj in T.grid(2, 4):
                b[ii, jj] = a[ii, jj] * T.float32(2)


def test_accesses_through_the_view_become_accesses_of_the_source():
    @T.prim_func
    def expected(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32")):
        T.func_attr({"global_symbol": "tiles"})
        for i, j in T.grid(4, 2):
            with T.block("tile"):
                T.reads(A[i * 2:i * 2 + 2, j * 4:j * 4 + 4])
                T.writes(B[i * 2:i * 2 + 2, j * 4:j * 4 + 4])
                for ii, jj in T.grid(2, 4):
                    B[i * 2 + ii, j * 4 + jj] = A[i * 2 + ii, j * 4 + jj] * T.float32(2)

    after = tvm.tir.transform.LowerMatchBuffer()(tvm.IRModule({"tiles": tiles}))
    tvm.ir.assert_structural_equal(after["tiles"], expected)


def test_a_row_view_of_lower_rank_keeps_the_leading_index():
    @T.prim_func
    def before(A: T.Buffer((4, 8), "float32")):
        T.func_attr({"global_symbol": "f"})
        for i in range(4):
            with T.block("row"):
                row = T.match_buffer(A[i, 0:8], (8,), offset_factor=1)
                for j in range(8):
                    row[j] = T.float32(0)

    @T.prim_func
    def expected(A: T.Buffer((4, 8), "float32")):
        T.func_attr({"global_symbol": "f"})
        for i in range(4):
            with T.block("row"):
                T.reads()
                T.writes(A[i, 0:8])
                for j in range(8):
                    A[i, j] = T.float32(0)

    after = tvm.tir.transform.LowerMatchBuffer()(tvm.IRModule({"f": before}))
    tvm.ir.assert_structural_equal(after["f"], expected)


def test_the_whole_pipeline_runs_a_kernel_with_views():
    from mlckit.backend import lnumpy

    lowered = tvm.lower(tiles)["tiles"]
    assert "match_buffer" not in lowered.script() and "T.block" not in lowered.script()
    a = np.arange(64, dtype="float32").reshape(8, 8)
    b = np.zeros((8, 8), "float32")
    lnumpy.build(lowered)(a, b)
    np.testing.assert_allclose(b, a * 2)


def test_a_shape_that_is_not_the_region_is_rejected():
    @T.prim_func
    def bad(A: T.Buffer((8, 8), "float32")):
        for i in range(4):
            with T.block("tile"):
                a = T.match_buffer(A[i * 2:i * 2 + 2, 0:8], (2, 4), offset_factor=1)
                for jj in range(4):
                    a[0, jj] = T.float32(0)

    with pytest.raises(TVMError, match=r"shape \[2, 4\] but views a region"):
        tvm.tir.transform.LowerMatchBuffer()(tvm.IRModule({"bad": bad}))


def test_a_constant_offset_that_disagrees_is_rejected():
    # as TVM: "the buffer match constraint for a.elem_offset unmet"; without offset_factor a
    # view's elem_offset is the constant 0
    @T.prim_func
    def bad(A: T.Buffer((8, 8), "float32")):
        for i, j in T.grid(8, 8):
            with T.block("one"):
                a = T.match_buffer(A[i, j], (), elem_offset=0)
                a[()] = T.float32(1)

    with pytest.raises(TVMError, match="elem_offset is 0"):
        tvm.tir.transform.LowerMatchBuffer()(tvm.IRModule({"bad": bad}))
