"""cache_read, cache_write, set_scope."""

import pytest

from mlckit import tir
from mlckit.script import from_source
from mlckit.script import tir as T

from .common import check, expect_error, verify_numeric, verify_trace_roundtrip
from .workloads import elementwise, matmul


@T.prim_func
def elementwise_cached(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    B = T.alloc_buffer((16, 16), "float32")
    A_shared = T.alloc_buffer((16, 16), scope="shared")
    C_local = T.alloc_buffer((16, 16), scope="local")
    for ax0, ax1 in T.grid(16, 16):
        with T.block("A_shared"):
            v0, v1 = T.axis.remap("SS", [ax0, ax1])
            A_shared[v0, v1] = A[v0, v1]
    for i, j in T.grid(16, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A_shared[vi, vj] * T.float32(2)
    for i, j in T.grid(16, 16):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C_local[vi, vj] = B[vi, vj] + T.float32(1)
    for ax0, ax1 in T.grid(16, 16):
        with T.block("C_local"):
            v0, v1 = T.axis.remap("SS", [ax0, ax1])
            C[v0, v1] = C_local[v0, v1]


@T.prim_func
def matmul_cache_write_local(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32"),
                             C: T.Buffer((16, 16), "float32")):
    C_local = T.alloc_buffer((16, 16), scope="local")
    for i_0, j_0 in T.grid(2, 2):
        for i_1, j_1, k in T.grid(8, 8, 16):
            with T.block("C"):
                vi = T.axis.spatial(16, i_0 * 8 + i_1)
                vj = T.axis.spatial(16, j_0 * 8 + j_1)
                vk = T.axis.reduce(16, k)
                with T.init():
                    C_local[vi, vj] = T.float32(0)
                C_local[vi, vj] = C_local[vi, vj] + A[vi, vk] * B[vk, vj]
        for ax0, ax1 in T.grid(8, 8):
            with T.block("C_local"):
                v0 = T.axis.spatial(16, i_0 * 8 + ax0)
                v1 = T.axis.spatial(16, j_0 * 8 + ax1)
                C[v0, v1] = C_local[v0, v1]


@T.prim_func
def elementwise_set_scope(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    B_shared = T.alloc_buffer((16, 16), "float32", scope="shared")
    for i, j in T.grid(16, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B_shared[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(16, 16):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B_shared[vi, vj] + T.float32(1)


def test_cache_read_and_write():
    sch = tir.Schedule(elementwise, debug_mask="all")
    a_shared = sch.cache_read(sch.get_block("B"), 0, "shared")
    c_local = sch.cache_write(sch.get_block("C"), 0, "local")
    assert sch.get(a_shared).name_hint == "A_shared"
    assert sch.get(c_local).name_hint == "C_local"
    check(sch, elementwise_cached)
    verify_numeric(elementwise, sch.mod)
    verify_trace_roundtrip(sch, elementwise)


def test_cache_write_local_tiled():
    sch = tir.Schedule(matmul, debug_mask="all")
    block = sch.get_block("C")
    c_local = sch.cache_write(block, 0, "local")
    i, j, k = sch.get_loops(block)
    i0, i1 = sch.split(i, factors=[None, 8])
    j0, j1 = sch.split(j, factors=[None, 8])
    sch.reorder(i0, j0, i1, j1, k)
    sch.reverse_compute_at(c_local, j0)
    check(sch, matmul_cache_write_local)
    verify_numeric(matmul, sch.mod)
    verify_trace_roundtrip(sch, matmul)


def test_cache_read_compute_at():
    sch = tir.Schedule(matmul, debug_mask="all")
    block = sch.get_block("C")
    i, j, k = sch.get_loops(block)
    a_local = sch.cache_read(block, 0, "local")
    sch.compute_at(a_local, j)
    assert [sch.get(lp).extent.value for lp in sch.get_loops(a_local)] == [16, 16, 16]
    verify_numeric(matmul, sch.mod)
    verify_trace_roundtrip(sch, matmul)


def test_set_scope():
    sch = tir.Schedule(elementwise, debug_mask="all")
    sch.set_scope(sch.get_block("B"), 0, "shared")
    check(sch, elementwise_set_scope)
    verify_numeric(elementwise, sch.mod)
    verify_trace_roundtrip(sch, elementwise)


def test_set_scope_renames_the_buffer_after_its_scope():
    # as TVM: B becomes B_shared (structural equality alone would not see the name)
    sch = tir.Schedule(elementwise)
    sch.set_scope(sch.get_block("B"), 0, "shared")
    written = sch.get(sch.get_block("B")).writes[0].buffer
    assert (written.name, written.scope) == ("B_shared", "shared")
    assert [b.name for b in sch.get(sch.get_block("root")).alloc_buffers] == ["B_shared"]


def test_set_scope_to_the_scope_a_buffer_has_changes_nothing():
    # TVM returns before any check, so even a parameter may be "set" to global
    sch = tir.Schedule(elementwise)
    before = sch.mod
    sch.set_scope(sch.get_block("B"), 0, "global")
    sch.set_scope(sch.get_block("C"), 0, "global")
    assert sch.mod is before


def test_cache_read_takes_a_buffer_name_or_a_buffer():
    sch = tir.Schedule(matmul, debug_mask="all")
    block = sch.get_block("C")
    b_buffer = sch.get(block).reads[1].buffer
    assert sch.get(sch.cache_read(block, "A", "shared")).name_hint == "A_shared"
    assert sch.get(sch.cache_read(block, b_buffer, "local")).name_hint == "B_local"
    # the trace records the index, as TVM's does
    assert 'read_buffer_index=1, storage_scope="local"' in str(sch.trace)
    verify_numeric(matmul, sch.mod)
    verify_trace_roundtrip(sch, matmul)


def test_cache_write_and_set_scope_take_a_buffer_name():
    sch = tir.Schedule(elementwise)
    sch.set_scope("B", "B", "shared")
    assert sch.get(sch.cache_write("C", "C", "local")).name_hint == "C_local"
    verify_numeric(elementwise, sch.mod)


def test_cache_read_of_a_buffer_the_block_does_not_read():
    sch = tir.Schedule(elementwise)
    c = sch.get_block("C")
    expect_error(sch, lambda: sch.cache_read(c, "C", "shared"), "cache_read",
                 "block `C` writes buffer `C` but does not read it")
    expect_error(sch, lambda: sch.cache_read(c, "A", "shared"), "cache_read",
                 "block `C` accesses no buffer named 'A' (it accesses: B, C)")
    expect_error(sch, lambda: sch.cache_write(c, "B", "shared"), "cache_write",
                 "block `C` reads buffer `B` but does not write it")
    expect_error(sch, lambda: sch.cache_read(c, 0.5, "shared"), "cache_read",
                 "the buffer must be an index, a buffer name or a Buffer, got 0.5")


def test_a_tagged_scope_names_its_rank_and_a_tag():
    # TVM's StorageScope: "global.A_reg" is global memory tagged A_reg (the course uses it to
    # mark buffers a tensor intrinsic will read)
    sch = tir.Schedule(elementwise)
    cached = sch.cache_read(sch.get_block("C"), 0, "global.B_reg")
    block = sch.get(cached)
    assert block.name_hint == "B_global.B_reg"
    assert block.writes[0].buffer.scope == "global.B_reg"
    verify_numeric(elementwise, sch.mod)
    expect_error(sch, lambda: sch.cache_read(sch.get_block("C"), 0, "texture.B"), "cache_read",
                 "unknown storage scope 'texture.B'")


def test_cache_errors():
    sch = tir.Schedule(elementwise)
    b = sch.get_block("B")
    c = sch.get_block("C")
    expect_error(sch, lambda: sch.cache_read(b, 3, "shared"), "cache_read",
                 "block `B` reads 1 buffer(s); read_buffer_index 3 is out of range")
    expect_error(sch, lambda: sch.cache_write(b, 0, "texture"), "cache_write",
                 "unknown storage scope 'texture'")
    expect_error(sch, lambda: sch.set_scope(c, 0, "shared"), "set_scope",
                 "buffer `C` is a parameter of the function")


@T.prim_func
def elementwise_blockized_cache_write(A: T.Buffer((16, 16), "float32"),
                                      C: T.Buffer((16, 16), "float32")):
    B = T.alloc_buffer((16, 16), "float32")
    for i in range(16):
        with T.block("B_o"):
            vi_o = T.axis.spatial(16, i)
            vj_o = T.axis.spatial(1, 0)
            T.reads(A[vi_o, 0:16])
            T.writes(B[vi_o, 0:16])
            B_local = T.alloc_buffer((1, 16), scope="local")
            for j in range(16):
                with T.block("B"):
                    vj_i = T.axis.spatial(16, j)
                    T.reads(A[vi_o, vj_i])
                    T.writes(B_local[0, vj_i])
                    B_local[0, vj_i] = A[vi_o, vj_i] * T.float32(2)
            for ax0, ax1 in T.grid(1, 16):
                with T.block("B_local"):
                    v0, v1 = T.axis.remap("SS", [ax0, ax1])
                    T.reads(B_local[v0, v1])
                    T.writes(B[vi_o + v0, v1])
                    B[vi_o + v0, v1] = B_local[v0, v1]
    for i, j in T.grid(16, 16):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] + T.float32(1)


def test_cache_write_inside_a_block_copies_back_only_that_block_s_region():
    # as TVM 0.27: the cache holds only the block's row, (1, 16), indexed from 0, and the
    # copy-back writes row vi_o of B (it once copied all 16 rows, overwriting B with garbage)
    sch = tir.Schedule(elementwise, debug_mask="all")
    sch.blockize(sch.get_loops(sch.get_block("B"))[1])
    sch.cache_write(sch.get_block("B"), 0, "local")
    check(sch, elementwise_blockized_cache_write)
    verify_numeric(elementwise, sch.mod)
    verify_trace_roundtrip(sch, elementwise)


@T.prim_func
def elementwise_blockized_cache_read(A: T.Buffer((16, 16), "float32"),
                                     C: T.Buffer((16, 16), "float32")):
    B = T.alloc_buffer((16, 16), "float32")
    for i, j in T.grid(16, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i in range(16):
        with T.block("C_o"):
            vi_o = T.axis.spatial(16, i)
            vj_o = T.axis.spatial(1, 0)
            T.reads(B[vi_o, 0:16])
            T.writes(C[vi_o, 0:16])
            B_local = T.alloc_buffer((1, 16), scope="local")
            for ax0, ax1 in T.grid(1, 16):
                with T.block("B_local"):
                    v0, v1 = T.axis.remap("SS", [ax0, ax1])
                    T.reads(B[vi_o + v0, v1])
                    T.writes(B_local[v0, v1])
                    B_local[v0, v1] = B[vi_o + v0, v1]
            for j in range(16):
                with T.block("C"):
                    vj_i = T.axis.spatial(16, j)
                    T.reads(B_local[0, vj_i])
                    T.writes(C[vi_o, vj_i])
                    C[vi_o, vj_i] = B_local[0, vj_i] + T.float32(1)


def test_cache_read_inside_a_block_caches_only_that_block_s_region():
    # as TVM 0.27: a cache allocated in a block holds the region one instance of the block
    # reads, (1, 16), and the reader indexes it from 0
    sch = tir.Schedule(elementwise, debug_mask="all")
    sch.blockize(sch.get_loops(sch.get_block("C"))[1])
    sch.cache_read(sch.get_block("C"), 0, "local")
    check(sch, elementwise_blockized_cache_read)
    verify_numeric(elementwise, sch.mod)
    verify_trace_roundtrip(sch, elementwise)


def test_cache_read_of_a_parameter_copies_it_first():
    # as TVM: W has no writer in the function, so its copy opens the scope (before `pad`),
    # not just before its reader `conv`
    from .workloads import conv2d_nchw

    sch = tir.Schedule(conv2d_nchw, debug_mask="all")
    conv = sch.get_block("conv")
    w_index = [r.buffer.name for r in sch.get(conv).reads].index("W")
    sch.cache_read(conv, w_index, "local")
    root = sch.get_block("root")
    assert [sch.get(b).name_hint for b in sch.get_child_blocks(root)] == [
        "W_local", "pad", "conv"]
    verify_numeric(conv2d_nchw, sch.mod)
    verify_trace_roundtrip(sch, conv2d_nchw)


@T.prim_func
def scale(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    for i in range(16):
        with T.block("B"):
            vi = T.axis.remap("S", [i])
            B[vi] = A[vi] * T.float32(2)


# as TVM 0.27 prints it: both copy blocks are `B_local` (named after the buffer they write
# back to), while the buffers stay distinct
@T.prim_func
def scale_cache_written_twice(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    B_local = T.alloc_buffer((16,), scope="local")
    B_local_1 = T.alloc_buffer((16,), scope="local")
    for i in range(16):
        with T.block("B"):
            vi = T.axis.spatial(16, i)
            T.reads(A[vi])
            T.writes(B_local[vi])
            B_local[vi] = A[vi] * T.float32(2)
    for ax0 in range(16):
        with T.block("B_local"):
            v0 = T.axis.spatial(16, ax0)
            T.reads(B_local[v0])
            T.writes(B_local_1[v0])
            B_local_1[v0] = B_local[v0]
    for ax0 in range(16):
        with T.block("B_local"):
            v0 = T.axis.spatial(16, ax0)
            T.reads(B_local_1[v0])
            T.writes(B[v0])
            B[v0] = B_local_1[v0]


def test_a_copy_block_is_named_after_its_buffer_even_when_the_name_is_taken():
    sch = tir.Schedule(scale, debug_mask="all")
    copy = sch.cache_write(sch.get_block("B"), 0, "local")
    second = sch.cache_write(copy, 0, "local")
    check(sch, scale_cache_written_twice)
    assert [b.name for b in sch.mod["main"].body.block.alloc_buffers] == ["B_local", "B_local_1"]
    assert sch.get(second).name_hint == "B_local"
    verify_numeric(scale, sch.mod)
    verify_trace_roundtrip(sch, scale)
    # as TVM, the ambiguous name cannot be looked up; the returned handles still work
    expect_error(sch, lambda: sch.get_block("B_local"), "get_block",
                 "2 blocks are named 'B_local'")
    sch.vectorize(sch.get_loops(second)[0])


@T.prim_func
def elementwise_cache_read_in_loop(A: T.Buffer((16, 16), "float32"),
                                   C: T.Buffer((16, 16), "float32")):
    B = T.alloc_buffer((16, 16))
    B_local = T.alloc_buffer((16, 16), scope="local")
    for i in range(16):
        for ax0 in range(16):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, ax0])
                B[vi, vj] = A[vi, vj] * T.float32(2)
        for ax0, ax1 in T.grid(1, 16):
            with T.block("B_local"):
                v0 = T.axis.spatial(16, i + ax0)
                v1 = T.axis.spatial(16, ax1)
                B_local[v0, v1] = B[v0, v1]
        for j in range(16):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = B_local[vi, vj] + T.float32(1)


def test_cache_read_goes_between_writer_and_reader_in_their_loop():
    # as TVM: after compute_at the writer and the reader share loop i, so the copy goes inside
    # that loop, just before the reader, and covers what one iteration writes (a row)
    sch = tir.Schedule(elementwise, debug_mask="all")
    sch.compute_at(sch.get_block("B"), sch.get_loops(sch.get_block("C"))[0])
    sch.cache_read(sch.get_block("C"), 0, "local")
    check(sch, elementwise_cache_read_in_loop)
    verify_numeric(elementwise, sch.mod)
    verify_trace_roundtrip(sch, elementwise)


def test_cache_read_of_a_buffer_only_its_writer_reads_copies_it_last():
    # as TVM: a block that accumulates into C keeps reading C itself; the copy of C goes at the
    # end of the scope, read by nobody (TVM 0.27 does the same)
    sch = tir.Schedule(matmul, debug_mask="all")
    sch.blockize(sch.get_loops(sch.get_block("C"))[1])
    cache = sch.cache_read(sch.get_block("C"), 0, "local")
    body = sch.get(sch.get_block("C_o")).body
    assert body.seq[-1].body.body.block is sch.get(cache)
    assert "C_local" not in sch.get(sch.get_block("C")).script()
    verify_numeric(matmul, sch.mod)


def test_cache_read_refuses_a_buffer_with_two_writers():
    sch = tir.Schedule(matmul, debug_mask="all")
    block = sch.get_block("C")
    sch.decompose_reduction(block, sch.get_loops(block)[0])
    expect_error(sch, lambda: sch.cache_read(block, 0, "local"), "written by block",
                 "a read cache needs a single writer")


@T.prim_func
def elementwise_cache_write_in_loop(A: T.Buffer((16, 16), "float32"),
                                    C: T.Buffer((16, 16), "float32")):
    B = T.alloc_buffer((16, 16))
    B_local = T.alloc_buffer((16, 16), scope="local")
    for i in range(16):
        for ax0 in range(16):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, ax0])
                B_local[vi, vj] = A[vi, vj] * T.float32(2)
        for ax0, ax1 in T.grid(1, 16):
            with T.block("B_local"):
                v0 = T.axis.spatial(16, i + ax0)
                v1 = T.axis.spatial(16, ax1)
                B[v0, v1] = B_local[v0, v1]
        for j in range(16):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = B[vi, vj] + T.float32(1)


def test_cache_write_copies_back_before_the_reader_in_their_loop():
    # as TVM: the reader C shares loop i with B (after compute_at), so the copy-back goes
    # inside that loop, between them
    sch = tir.Schedule(elementwise, debug_mask="all")
    sch.compute_at(sch.get_block("B"), sch.get_loops(sch.get_block("C"))[0])
    sch.cache_write(sch.get_block("B"), 0, "local")
    check(sch, elementwise_cache_write_in_loop)
    verify_numeric(elementwise, sch.mod)
    verify_trace_roundtrip(sch, elementwise)


# -- a copy under the loops of a split that does not divide (found by tools/difftest_tvm.py)
@T.prim_func
def scale_add_6(A: T.Buffer((6,), "float32"), C: T.Buffer((6,), "float32")):
    B = T.alloc_buffer((6,), "float32")
    for i in range(6):
        with T.block("B"):
            vi = T.axis.spatial(6, i)
            B[vi] = A[vi] * T.float32(2)
    for i in range(6):
        with T.block("C"):
            vi = T.axis.spatial(6, i)
            C[vi] = B[vi] + T.float32(1)


def _scale_add_6_cached(writer_writes, copy_from, copy_to, reader_reads):
    return f'''
@T.prim_func
def main(A: T.Buffer((6,), "float32"), C: T.Buffer((6,), "float32")):
    B = T.alloc_buffer((6,))
    B_local = T.alloc_buffer((6,), scope="local")
    for i_0, i_1 in T.grid(2, 4):
        with T.block("B"):
            vi = T.axis.spatial(6, i_0 * 4 + i_1)
            T.where(i_0 * 4 + i_1 < 6)
            T.reads(A[vi])
            T.writes({writer_writes}[vi])
            {writer_writes}[vi] = A[vi] * T.float32(2.0)
        for ax0 in range(1):
            with T.block("B_local"):
                v0 = T.axis.spatial(6, i_0 * 4 + i_1 + ax0)
                T.where(i_0 * 4 + i_1 + ax0 < 6)
                T.reads({copy_from}[v0])
                T.writes({copy_to}[v0])
                {copy_to}[v0] = {copy_from}[v0]
        with T.block("C"):
            vi = T.axis.spatial(6, i_0 * 4 + i_1)
            T.where(i_0 * 4 + i_1 < 6)
            T.reads({reader_reads}[vi])
            T.writes(C[vi])
            C[vi] = {reader_reads}[vi] + T.float32(1.0)
'''


@pytest.mark.parametrize("kind", ["write", "read"])
def test_a_copy_under_the_loops_of_a_non_dividing_split_stays_in_the_buffer(kind):
    # i_0 * 4 + i_1 reaches 7 of a 6-element buffer: the copy gets the guard its neighbours
    # have (TVM 0.27 writes none, and copies past the end)
    sch = tir.Schedule(scale_add_6, debug_mask="all")
    c = sch.get_block("C")
    _, i_1 = sch.split(sch.get_loops(c)[0], factors=[None, 4])
    sch.compute_at(sch.get_block("B"), i_1)
    if kind == "write":
        sch.cache_write(sch.get_block("B"), 0, "local")
        expected = _scale_add_6_cached("B_local", "B_local", "B", "B")
    else:
        sch.cache_read(c, 0, "local")
        expected = _scale_add_6_cached("B", "B", "B_local", "B_local")
    check(sch, from_source(expected))
    verify_numeric(scale_add_6, sch.mod)  # lnumpy: an access out of bounds raises
    verify_trace_roundtrip(sch, scale_add_6)


@T.prim_func
def double_in_place(A: T.Buffer((8,), "float32")):
    for i in range(8):
        with T.block("A"):
            vi = T.axis.spatial(8, i)
            A[vi] = A[vi] * T.float32(2)


def test_a_buffer_read_and_written_named_is_the_write():
    # as TVM: block A reads and writes A, and the name stands for the write, so cache_read
    # by name is refused (TVM: an AssertionError); by its read index it is cached
    sch = tir.Schedule(double_in_place, debug_mask="all")
    block = sch.get_block("A")
    expect_error(sch, lambda: sch.cache_read(block, "A", "local"), "cache_read",
                 "block `A` reads and writes buffer `A`, and a buffer name stands for the write",
                 "pass the read index, 0")
    sch.cache_read(block, 0, "local")
    assert [b.name for b in sch.mod["main"].body.block.alloc_buffers] == ["A_local"]
    verify_numeric(double_in_place, sch.mod)
