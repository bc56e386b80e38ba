"""LowerOpaqueBlock: blocks replaced by their bodies, allocations and predicates (checked
against TVM 0.27's output for the course's mm_relu; TVM 0.27 prints the allocation
`T.alloc_buffer`, v0.23 and mlckit `T.decl_buffer`)."""

from __future__ import annotations

import pytest

import mlckit as tvm
from mlckit import tir
from mlckit.error import TVMError
from mlckit.script import tir as T

from ._mm import check_numbers, plain


@T.prim_func
def expected(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32"),
             C: T.Buffer((128, 128), "float32")):
    T.func_attr({"global_symbol": "mm_relu", "tir.noalias": True})
    Y = T.decl_buffer((128, 128))
    for i, j, k in T.grid(128, 128, 128):
        if k == 0:
            Y[i, j] = T.float32(0.0)
        Y[i, j] = Y[i, j] + A[i, k] * B[k, j]
    for i, j in T.grid(128, 128):
        C[i, j] = T.max(Y[i, j], T.float32(0.0))


def lowered(mod):
    seq = tvm.transform.Sequential([tir.transform.LowerInitBlock(),
                                    tir.transform.ConvertBlocksToOpaque(),
                                    tir.transform.LowerOpaqueBlock()])
    return seq(mod)


def test_blocks_disappear_and_allocations_become_declarations():
    tvm.ir.assert_structural_equal(lowered(plain())["mm_relu"], expected)


def test_a_predicate_becomes_an_if():
    @T.prim_func
    def f(a: T.Buffer((10,), "float32"), b: T.Buffer((10,), "float32")):
        T.func_attr({"global_symbol": "f"})
        for i0, i1 in T.grid(3, 4):
            with T.block("B"):
                T.where(i0 * 4 + i1 < 10)
                b[i0 * 4 + i1] = a[i0 * 4 + i1]

    @T.prim_func
    def want(a: T.Buffer((10,), "float32"), b: T.Buffer((10,), "float32")):
        T.func_attr({"global_symbol": "f"})
        for i0, i1 in T.grid(3, 4):
            if i0 * 4 + i1 < 10:
                b[i0 * 4 + i1] = a[i0 * 4 + i1]

    after = tir.transform.LowerOpaqueBlock()(tvm.IRModule({"f": f}))
    tvm.ir.assert_structural_equal(after["f"], want)


def test_lowered_function_still_computes_mm_relu():
    check_numbers(lowered(plain())["mm_relu"])


def test_a_block_with_iterators_is_rejected_with_the_passes_to_run_first():
    with pytest.raises(TVMError, match="ConvertBlocksToOpaque"):
        tir.transform.LowerOpaqueBlock()(plain())


def test_a_unit_loop_is_dropped_and_its_variable_becomes_its_start():
    @T.prim_func
    def f(a: T.Buffer((8,), "float32")):
        T.func_attr({"global_symbol": "f"})
        for i in range(4):
            for j in range(2, 3):
                with T.block("A"):
                    a[i + j] = T.float32(1)

    @T.prim_func
    def want(a: T.Buffer((8,), "float32")):
        T.func_attr({"global_symbol": "f"})
        for i in range(4):
            a[i + 2] = T.float32(1)

    after = tir.transform.LowerOpaqueBlock()(tvm.IRModule({"f": f}))
    tvm.ir.assert_structural_equal(after["f"], want)


def test_thread_bound_loops_become_thread_launches():
    @T.prim_func
    def f(a: T.Buffer((64,), "float32")):
        T.func_attr({"global_symbol": "f"})
        for bx in T.thread_binding(2, thread="blockIdx.x"):
            for tx in T.thread_binding(32, thread="threadIdx.x"):
                with T.block("A"):
                    a[bx * 32 + tx] = T.float32(1)

    @T.prim_func
    def want(a: T.Buffer((64,), "float32")):
        T.func_attr({"global_symbol": "f"})
        bx = T.launch_thread("blockIdx.x", 2)
        tx = T.launch_thread("threadIdx.x", 32)
        a[bx * 32 + tx] = T.float32(1)

    after = tir.transform.LowerOpaqueBlock()(tvm.IRModule({"f": f}))
    tvm.ir.assert_structural_equal(after["f"], want)


def test_a_padded_buffer_allocates_its_strides():
    @T.prim_func
    def f(a: T.Buffer((8, 16), "float32")):
        T.func_attr({"global_symbol": "f"})
        with T.block("root"):
            b = T.alloc_buffer((8, 16), strides=(17, 1))
            for i, j in T.grid(8, 16):
                b[i, j] = a[i, j]
            for i, j in T.grid(8, 16):
                a[i, j] = b[i, j]

    after = tir.transform.LowerOpaqueBlock()(tvm.IRModule({"f": f}))["f"]
    assert [int(e) for e in after.body.extents] == [8, 17]


def test_pragma_annotations_become_attr_stmts_and_other_loop_annotations_stay():
    @T.prim_func
    def before(A: T.Buffer((8,), "float32")):
        T.func_attr({"global_symbol": "f"})
        for i in T.serial(8, annotations={"pragma_unroll_explicit": 1, "keep_me": 2}):
            with T.block("b"):
                T.block_attr({"pragma_auto_unroll_max_step": 16, "dropped": 1})
                A[i] = T.float32(0)

    after = tvm.tir.transform.LowerOpaqueBlock()(tvm.IRModule({"f": before}))["f"]
    assert after.body.attr_key == "pragma_unroll_explicit"
    assert after.body.node is after.body.body.loop_var
    assert after.body.body.annotations == {"keep_me": 2}
    inner = after.body.body.body
    assert inner.attr_key == "pragma_auto_unroll_max_step" and inner.value.value == 16
    assert isinstance(inner.body, tvm.tir.BufferStore)


def test_a_padded_row_allocates_the_stride_ratio_even_for_symbolic_sizes():
    @T.prim_func
    def before(a: T.handle):
        m = T.int32()
        A = T.match_buffer(a, (1, m, 64))
        for _ in range(2):
            with T.block(""):
                P = T.alloc_buffer((1, m, 64), strides=(72 * m, 72, 1))
                for x, y in T.grid(m, 64):
                    P[0, x, y] = A[0, x, y]

    after = tvm.tir.transform.LowerOpaqueBlock()(tvm.IRModule({"main": before}))["main"]
    alloc = after.body.body
    m = after.buffer_map[after.params[0]].shape[1]
    assert isinstance(alloc, tvm.tir.Allocate)
    tvm.ir.assert_structural_equal(alloc.extents, [tvm.tir.IntImm("int32", 1), m,
                                                   tvm.tir.IntImm("int32", 72)])
