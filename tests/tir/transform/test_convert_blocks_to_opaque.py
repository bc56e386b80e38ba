"""ConvertBlocksToOpaque: block iterators replaced by their bindings (checked against TVM
0.27's output for the course's scheduled mm_relu)."""

from __future__ import annotations

import pytest

import mlckit as tvm
from mlckit.error import TVMError
from mlckit.script import tir as T

from ._mm import check_numbers, plain, scheduled


@T.prim_func
def expected(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32"),
             C: T.Buffer((128, 128), "float32")):
    T.func_attr({"global_symbol": "mm_relu", "tir.noalias": True})
    Y = T.alloc_buffer((128, 128))
    for i, j_0 in T.grid(128, 32):
        for j_1_init in range(4):
            with T.block("Y_init"):
                T.reads()
                T.writes(Y[i, j_0 * 4 + j_1_init])
                Y[i, j_0 * 4 + j_1_init] = T.float32(0.0)
        for k in range(128):
            for j_1 in T.unroll(4):
                with T.block("Y_update"):
                    T.reads(Y[i, j_0 * 4 + j_1], A[i, k], B[k, j_0 * 4 + j_1])
                    T.writes(Y[i, j_0 * 4 + j_1])
                    Y[i, j_0 * 4 + j_1] = Y[i, j_0 * 4 + j_1] + A[i, k] * B[k, j_0 * 4 + j_1]
        for ax0 in T.vectorized(4):
            with T.block("C"):
                T.reads(Y[i, j_0 * 4 + ax0])
                T.writes(C[i, j_0 * 4 + ax0])
                C[i, j_0 * 4 + ax0] = T.max(Y[i, j_0 * 4 + ax0], T.float32(0.0))


def test_iterators_are_replaced_by_their_bindings():
    after = tvm.tir.transform.ConvertBlocksToOpaque()(scheduled())
    tvm.ir.assert_structural_equal(after["mm_relu"], expected)


def test_opaque_function_still_computes_mm_relu():
    check_numbers(tvm.tir.transform.ConvertBlocksToOpaque()(scheduled())["mm_relu"])


def test_a_block_with_init_is_rejected_with_the_pass_to_run_first():
    with pytest.raises(TVMError, match="LowerInitBlock"):
        tvm.tir.transform.ConvertBlocksToOpaque()(plain())


def test_a_predicate_written_with_the_blocks_own_iterators_is_rejected():
    @T.prim_func(check_well_formed=False)
    def before(A: T.Buffer((8,), "int32")):
        for i in range(8):
            with T.block("B"):
                vi = T.axis.remap("S", [i])
                T.where(vi < 6)
                A[vi] = 0

    with pytest.raises(TVMError, match=r"predicate of block 'B' uses the block iterator\(s\) "
                                       r"\['vi'\]"):
        tvm.tir.transform.ConvertBlocksToOpaque()(tvm.IRModule({"main": before}))


def test_the_region_a_match_buffer_views_is_written_with_the_loop_variables():
    # TVM 0.27 prints row = T.match_buffer(A[i, 0:16], ...) after the pass
    @T.prim_func
    def before(A: T.Buffer((8, 16), "float32")):
        for i in range(8):
            with T.block("row"):
                vi = T.axis.spatial(8, i)
                row = T.match_buffer(A[vi, 0:16], (16,), offset_factor=1)
                for j in range(16):
                    row[j] = T.float32(1)

    @T.prim_func
    def expected(A: T.Buffer((8, 16), "float32")):
        T.func_attr({"global_symbol": "before"})
        for i in range(8):
            with T.block("row"):
                row = T.match_buffer(A[i, 0:16], (16,), offset_factor=1)
                for j in range(16):
                    row[j] = T.float32(1)

    after = tvm.tir.transform.ConvertBlocksToOpaque()(tvm.IRModule({"main": before}))
    tvm.ir.assert_structural_equal(after["main"], expected)
