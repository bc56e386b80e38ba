"""storage_align and transform_layout."""

import pytest

from mlckit import tir
from mlckit.ir import structural_equal
from mlckit.script import tir as T

from .common import check, expect_error, verify_numeric, verify_trace_roundtrip
from .workloads import elementwise


@T.prim_func
def two_elementwise(A: T.Buffer((128, 128), "float32"), C: T.Buffer((128, 128), "float32")):
    B = T.alloc_buffer((128, 128), "float32")
    for i, j in T.grid(128, 128):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(128, 128):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] + T.float32(1)


# -- storage_align --------------------------------------------------------------------------------
@T.prim_func
def elementwise_aligned(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    B = T.alloc_buffer((16, 16), "float32")
    for i, j in T.grid(16, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.block_attr({"buffer_dim_align": [[0, 0, 16, 15]]})
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(16, 16):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] + T.float32(1)


@T.prim_func
def elementwise_bad_annotation(A: T.Buffer((16, 16), "float32"),
                               C: T.Buffer((16, 16), "float32")):
    B = T.alloc_buffer((16, 16), "float32")
    for i, j in T.grid(16, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.block_attr({"buffer_dim_align": [0]})
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(16, 16):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] + T.float32(1)


@pytest.mark.parametrize("by_name", [False, True])
def test_storage_align(by_name):
    sch = tir.Schedule(elementwise, debug_mask="all")
    block = "B" if by_name else sch.get_block("B")
    sch.storage_align(block, 0, axis=0, factor=16, offset=15)
    check(sch, elementwise_aligned)
    verify_numeric(elementwise, sch.mod)
    verify_trace_roundtrip(sch, elementwise)


def test_storage_align_update_replaces_entry():
    sch = tir.Schedule(elementwise, debug_mask="all")
    block = sch.get_block("B")
    sch.storage_align(block, 0, axis=0, factor=16, offset=0)
    sch.storage_align(block, 0, axis=-2, factor=16, offset=15)  # axis -2 is axis 0
    check(sch, elementwise_aligned)
    verify_trace_roundtrip(sch, elementwise)


def test_storage_align_errors():
    sch = tir.Schedule(elementwise)
    b, c = sch.get_block("B"), sch.get_block("C")
    expect_error(sch, lambda: sch.storage_align(b, 0, axis=0, factor=0, offset=1),
                 "storage_align", "factor must be a positive number, got 0")
    expect_error(sch, lambda: sch.storage_align(b, 0, axis=2, factor=16, offset=1),
                 "storage_align", "buffer `B` has 2 dimension(s), so axis must be in [-2, 2), got 2")
    expect_error(sch, lambda: sch.storage_align(b, 1, axis=0, factor=16, offset=1),
                 "storage_align", "block `B` writes 1 buffer region(s)")
    expect_error(sch, lambda: sch.storage_align(c, 0, axis=0, factor=16, offset=1),
                 "storage_align", "buffer `C` is not allocated by a block")
    sch2 = tir.Schedule(elementwise_bad_annotation)
    b2 = sch2.get_block("B")
    expect_error(sch2, lambda: sch2.storage_align(b2, 0, axis=0, factor=16, offset=1),
                 "storage_align", "the annotation 'buffer_dim_align' of block `B` is [0]")


# -- transform_layout ----------------------------------------------------------------------------
# TVM's docstring example / test_two_elementwise_transform_intermediate_buffer
@T.prim_func
def two_elementwise_transformed_intermediate(A: T.Buffer((128, 128), "float32"),
                                             C: T.Buffer((128, 128), "float32")):
    B = T.alloc_buffer((8, 8, 16, 16), "float32")
    for i, j in T.grid(128, 128):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi // 16, vj // 16, vi % 16, vj % 16] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(128, 128):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi // 16, vj // 16, vi % 16, vj % 16] + T.float32(1)


# test_two_elementwise_transform_input_buffer
@T.prim_func
def two_elementwise_transformed_input(A: T.Buffer((8, 8, 16, 16), "float32"),
                                      C: T.Buffer((128, 128), "float32")):
    B = T.alloc_buffer((128, 128), "float32")
    for i, j in T.grid(128, 128):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi // 16, vj // 16, vi % 16, vj % 16] * T.float32(2)
    for i, j in T.grid(128, 128):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] + T.float32(1)


@T.prim_func
def elementwise_transposed(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    B = T.alloc_buffer((16, 16), "float32")
    for i, j in T.grid(16, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vj, vi] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(16, 16):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vj, vi] + T.float32(1)


def packed(m, n):
    return m // 16, n // 16, m % 16, n % 16


@pytest.mark.parametrize("by_name", [False, True])
def test_transform_layout_intermediate_buffer(by_name):
    sch = tir.Schedule(two_elementwise, debug_mask="all")
    if by_name:
        sch.transform_layout("B", "B", packed)
    else:
        sch.transform_layout(sch.get_block("B"), ("write", 0), packed)
    check(sch, two_elementwise_transformed_intermediate)
    verify_numeric(two_elementwise, sch.mod)
    verify_trace_roundtrip(sch, two_elementwise)


def test_transform_layout_input_buffer():
    sch = tir.Schedule(two_elementwise, debug_mask="all")
    sch.transform_layout(sch.get_block("B"), ("read", 0), packed)
    check(sch, two_elementwise_transformed_input)
    verify_trace_roundtrip(sch, two_elementwise)


def test_transform_layout_transpose_lambda():
    sch = tir.Schedule(elementwise, debug_mask="all")
    sch.transform_layout(sch.get_block("C"), ("read", 0), lambda i, j: (j, i))
    check(sch, elementwise_transposed)
    verify_numeric(elementwise, sch.mod)
    verify_trace_roundtrip(sch, elementwise)
    assert "index_map=lambda i, j: (j, i)" in str(sch.trace)


def test_transform_layout_index_map_object():
    sch = tir.Schedule(elementwise, debug_mask="all")
    index_map = tir.IndexMap.from_func(lambda i, j: (j, i))
    assert str(index_map) == "lambda i, j: (j, i)"
    sch.transform_layout(sch.get_block("B"), ("write", 0), index_map)
    check(sch, elementwise_transposed)


def test_transform_layout_errors():
    sch = tir.Schedule(elementwise)
    b = sch.get_block("B")
    expect_error(sch, lambda: sch.transform_layout(b, ("write", 0), lambda i, j: (i // 3, i % 3, j)),
                 "transform_layout", "the transformation would introduce padding",
                 "shape (6, 3, 16)")
    expect_error(sch, lambda: sch.transform_layout(b, ("write", 0), lambda i, j: (i + j,)),
                 "transform_layout", "is not injective on buffer `B`")
    expect_error(sch, lambda: sch.transform_layout(b, ("write", 0), lambda i: (i,)),
                 "transform_layout", "takes 1 index(es) but the buffer has 2 dimension(s)")
    expect_error(sch, lambda: sch.transform_layout(b, ("write", 1), lambda i, j: (j, i)),
                 "transform_layout", "block `B` has 1 write region(s)")
    expect_error(sch, lambda: sch.transform_layout(b, "Z", lambda i, j: (j, i)),
                 "transform_layout", "block `B` accesses no buffer named 'Z'")
    before = sch.mod
    sch.transform_layout(b, "B", lambda i, j: (j, i))
    assert not structural_equal(before, sch.mod)


def test_transform_layout_gives_a_modulo_its_divisor_as_extent():
    # as TVM: ``i % 32`` of an ``i`` in [0, 16) takes 32 places (``i`` split by 32, padded to
    # a multiple of it), so the map pads and is refused without a pad_value, as TVM refuses it
    sch = tir.Schedule(elementwise)
    b = sch.get_block("B")
    expect_error(sch, lambda: sch.transform_layout(b, "B", lambda i, j: (i // 32, j, i % 32)),
                 "transform_layout", "gives shape (1, 16, 32) (512 elements for 256)",
                 "would introduce padding")
    sch.transform_layout(b, "B", lambda i, j: (i // 8, j, i % 8))  # 8 divides 16: no padding
    [buffer] = sch.mod["main"].body.block.alloc_buffers
    assert [int(d.value) for d in buffer.shape] == [2, 16, 8]
    verify_numeric(elementwise, sch.mod)


# -- an iterator of one value (found by tools/difftest_tvm.py) ------------------------------
@T.prim_func
def scale_add_unit_batch(A: T.Buffer((2, 4), "float32"), C: T.Buffer((2, 4), "float32")):
    B = T.alloc_buffer((1, 2, 4), "float32")
    for n, i, j in T.grid(1, 2, 4):
        with T.block("B"):
            vn, vi, vj = T.axis.remap("SSS", [n, i, j])
            B[vn, vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(2, 4):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[0, vi, vj] + T.float32(1)


@T.prim_func
def scale_add_unit_batch_fused(A: T.Buffer((2, 4), "float32"), C: T.Buffer((2, 4), "float32")):
    B = T.alloc_buffer((1, 2, 4))
    for n, i, j in T.grid(1, 2, 4):
        with T.block("B"):
            vn, vi, vj = T.axis.remap("SSS", [n, i, j])
            T.reads(A[vi, vj])
            T.writes(B[vn, vi, vj])
            B[vn, vi, vj] = A[vi, vj] * T.float32(2.0)
    for i, j in T.grid(2, 4):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(B[0, vi, vj])
            T.writes(C[vi, vj])
            C[vi, vj] = B[0, vi, vj] + T.float32(1.0)


def test_transform_layout_drops_a_unit_iterator_from_a_mapped_sum():
    # as TVM: vn * 2 + vi of vn in [0, 1) is vi, while the index vn alone stays vn
    sch = tir.Schedule(scale_add_unit_batch, debug_mask="all")
    sch.transform_layout(sch.get_block("B"), ("write", 0), lambda n, i, j: (n, n * 2 + i, j))
    check(sch, scale_add_unit_batch_fused)
    verify_numeric(scale_add_unit_batch, sch.mod)
    verify_trace_roundtrip(sch, scale_add_unit_batch)
