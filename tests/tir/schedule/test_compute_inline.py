"""compute_inline and reverse_compute_inline."""

from mlckit import tir
from mlckit.script import tir as T

from .common import check, expect_error, verify_numeric, verify_trace_roundtrip
from .workloads import elementwise, matmul, mm_relu_small, scale_add_8x6


@T.prim_func
def elementwise_inlined(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    for i, j in T.grid(16, 16):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = A[vi, vj] * T.float32(2) + T.float32(1)


@T.prim_func
def elementwise_reverse_inlined(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    for i, j in T.grid(16, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = A[vi, vj] * T.float32(2) + T.float32(1)


def test_compute_inline():
    sch = tir.Schedule(elementwise, debug_mask="all")
    sch.compute_inline(sch.get_block("B"))
    check(sch, elementwise_inlined)
    verify_numeric(elementwise, sch.mod)
    verify_trace_roundtrip(sch, elementwise)


def test_reverse_compute_inline():
    sch = tir.Schedule(elementwise, debug_mask="all")
    sch.reverse_compute_inline(sch.get_block("C"))
    check(sch, elementwise_reverse_inlined)
    verify_numeric(elementwise, sch.mod)
    verify_trace_roundtrip(sch, elementwise)


def test_compute_inline_errors():
    sch = tir.Schedule(elementwise)
    expect_error(sch, lambda: sch.compute_inline(sch.get_block("C")), "compute_inline",
                 "block `C` writes `C`, a parameter of the function")
    sch2 = tir.Schedule(mm_relu_small)
    expect_error(sch2, lambda: sch2.compute_inline(sch2.get_block("Y")), "compute_inline",
                 "block `Y` is a reduction")
    sch3 = tir.Schedule(matmul)
    expect_error(sch3, lambda: sch3.reverse_compute_inline(sch3.get_block("C")),
                 "reverse_compute_inline", "reduction")


def test_reverse_compute_inline_into_reduction_fails():
    sch = tir.Schedule(mm_relu_small)
    expect_error(sch, lambda: sch.reverse_compute_inline(sch.get_block("C")),
                 "reverse_compute_inline", "producer `Y` is a reduction")


def test_compute_inline_refuses_the_output_block_of_a_blockized_scope():
    # as TVM: after blockize, the inner block B writes B, which its scope (block `B_o`) does
    # not allocate: it is that scope's output block (inlining it would leave B_o empty)
    sch = tir.Schedule(elementwise, debug_mask="all")
    sch.blockize(sch.get_loops(sch.get_block("B"))[1])
    expect_error(sch, lambda: sch.compute_inline(sch.get_block("B")), "block `B` writes `B`",
                 "scope (block `B_o`) does not allocate", "output block")


@T.prim_func
def mm_relu_small_cache_inlined(A: T.Buffer((16, 16), "float32"),
                                B: T.Buffer((16, 16), "float32"),
                                C: T.Buffer((16, 16), "float32")):
    Y_local = T.alloc_buffer((16, 16), scope="local")
    for i, j, k in T.grid(16, 16, 16):
        with T.block("Y"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            T.reads(A[vi, vk], B[vk, vj])
            T.writes(Y_local[vi, vj])
            with T.init():
                Y_local[vi, vj] = T.float32(0)
            Y_local[vi, vj] = Y_local[vi, vj] + A[vi, vk] * B[vk, vj]
    for i, j in T.grid(16, 16):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(Y_local[vi, vj])
            T.writes(C[vi, vj])
            C[vi, vj] = T.max(Y_local[vi, vj], T.float32(0))


def test_compute_inline_of_a_cache_write_copy_updates_reads_and_drops_the_buffer():
    # as TVM: C reads Y_local afterwards (its T.reads too), and Y is no longer allocated
    sch = tir.Schedule(mm_relu_small, debug_mask="all")
    sch.compute_inline(sch.cache_write(sch.get_block("Y"), 0, "local"))
    check(sch, mm_relu_small_cache_inlined)
    verify_numeric(mm_relu_small, sch.mod)


@T.prim_func
def elementwise_explicit(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    B = T.alloc_buffer((16, 16))
    for i, j in T.grid(16, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(A[vi, vj])
            T.writes(B[vi, vj])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(16, 16):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(B[vi, vj])
            T.writes(C[vi, vj])
            C[vi, vj] = B[vi, vj] + T.float32(1)


def test_reverse_compute_inline_of_a_cache_write_copy_gives_the_kernel_back():
    # as TVM: after reverse_compute_at, inlining the copy-back C_local into C writes C again;
    # C_local's allocation goes and no T.reads/T.writes still names it
    sch = tir.Schedule(elementwise, debug_mask="all")
    copy = sch.cache_write(sch.get_block("C"), 0, "local")
    sch.reverse_compute_at(copy, sch.get_loops(sch.get_block("C"))[0])
    sch.reverse_compute_inline(copy)
    check(sch, elementwise_explicit)
    verify_numeric(elementwise, sch.mod)


# -- a store at an affine map of the iterators (found by tools/difftest_tvm.py) --------------
@T.prim_func
def scale_add_8x6_packed_inlined(A: T.Buffer((8, 6), "float32"),
                                 C: T.Buffer((8, 6), "float32")):
    for i, j in T.grid(8, 6):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(A[vi % 4 + vi // 4 * 4, vj])
            T.writes(C[vi, vj])
            C[vi, vj] = A[vi % 4 + vi // 4 * 4, vj] * T.float32(2.0) + T.float32(1.0)


def test_compute_inline_of_a_store_to_a_packed_layout():
    # B[vi // 4, vj, vi % 4] = ...: the map is one-to-one, so the load B[vi // 4, vj, vi % 4]
    # reads the value of the iterators (p2 + p0 * 4, p1) of its indices, as TVM writes it
    sch = tir.Schedule(scale_add_8x6, debug_mask="all")
    sch.transform_layout(sch.get_block("B"), ("write", 0), lambda i, j: (i // 4, j, i % 4))
    sch.compute_inline(sch.get_block("B"))
    check(sch, scale_add_8x6_packed_inlined)
    verify_numeric(scale_add_8x6, sch.mod)
    verify_trace_roundtrip(sch, scale_add_8x6)


@T.prim_func
def scale_add_8x6_half_stored(A: T.Buffer((8, 6), "float32"), C: T.Buffer((8, 6), "float32")):
    B = T.alloc_buffer((4, 6), "float32")
    for i, j in T.grid(8, 6):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi // 2, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(8, 6):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi // 2, vj] + T.float32(1)


def test_compute_inline_refuses_a_store_that_is_not_one_to_one():
    sch = tir.Schedule(scale_add_8x6_half_stored)
    expect_error(sch, lambda: sch.compute_inline(sch.get_block("B")), "compute_inline",
                 "stores to `B` at indices that are not a one-to-one affine map of its "
                 "iterators (vi // 2, vj)")


# -- a consumer blockized around the block that reads (found by tools/difftest_tvm.py) -----
@T.prim_func
def matmul_6x16(A: T.Buffer((6, 16), "float32"), B: T.Buffer((16, 16), "float32"),
                C: T.Buffer((6, 16), "float32")):
    for i, j, k in T.grid(6, 16, 16):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


@T.prim_func
def matmul_6x16_blockized(A: T.Buffer((6, 16), "float32"), B: T.Buffer((16, 16), "float32"),
                          C: T.Buffer((6, 16), "float32")):
    for i in range(6):
        with T.block("C_o"):
            vi_o = T.axis.spatial(6, i)
            vj_o = T.axis.spatial(1, 0)
            vk_o = T.axis.reduce(1, 0)
            T.reads(A[vi_o, 0:16], B[0:16, 0:16])
            T.writes(C[vi_o, 0:16])
            with T.init():
                for j in range(16):
                    with T.block("C_init"):
                        vj_i_init = T.axis.spatial(16, j)
                        T.reads()
                        T.writes(C[vi_o, vj_i_init])
                        C[vi_o, vj_i_init] = T.float32(0.0)
            for j, k in T.grid(16, 16):
                with T.block("C"):
                    vj_i, vk_i = T.axis.remap("SR", [j, k])
                    T.reads(C[vi_o, vj_i], A[vi_o, vk_i], B[vk_i, vj_i])
                    T.writes(C[vi_o, vj_i])
                    C[vi_o, vj_i] = C[vi_o, vj_i] + A[vi_o, vk_i] * B[vk_i, vj_i]


def test_compute_inline_into_a_blockized_consumer_updates_the_inner_reads():
    # the loads inlined are in the inner block C: its reads and C_o's name B, and the cache
    # buffer goes (they named B_shared, still allocated, after the inlining)
    sch = tir.Schedule(matmul_6x16, debug_mask="all")
    c = sch.get_block("C")
    sch.cache_read(c, 1, "shared")
    sch.blockize(sch.get_loops(c)[1])
    sch.compute_inline(sch.get_block("B_shared"))
    check(sch, matmul_6x16_blockized)
    verify_numeric(matmul_6x16, sch.mod)
    verify_trace_roundtrip(sch, matmul_6x16)


@T.prim_func
def scale_add_batch1(A: T.Buffer((1, 8, 6), "float32"), C: T.Buffer((1, 8, 6), "float32")):
    B = T.alloc_buffer((1, 8, 6), "float32")
    for n, i, j in T.grid(1, 8, 6):
        with T.block("B"):
            vn, vi, vj = T.axis.remap("SSS", [n, i, j])
            B[vn, vi, vj] = A[vn, vi, vj] * T.float32(2)
    for n, i, j in T.grid(1, 8, 6):
        with T.block("C"):
            vn, vi, vj = T.axis.remap("SSS", [n, i, j])
            C[vn, vi, vj] = B[vn, vi, vj] + T.float32(1)


@T.prim_func
def scale_add_batch1_inlined(A: T.Buffer((1, 8, 6), "float32"),
                             C: T.Buffer((1, 8, 6), "float32")):
    for n, i, j in T.grid(1, 8, 6):
        with T.block("C"):
            vn, vi, vj = T.axis.remap("SSS", [n, i, j])
            T.reads(A[0, vi % 4 + vi // 4 * 4, vj])
            T.writes(C[vn, vi, vj])
            C[vn, vi, vj] = A[0, vi % 4 + vi // 4 * 4, vj] * T.float32(2.0) + T.float32(1.0)


def test_compute_inline_through_a_map_writes_a_unit_iterator_as_its_minimum():
    # as TVM: the store B[vn, vi // 4, vj, vi % 4] goes through its inverse, and the unit
    # iterator vn is 0 there, whatever index the load has
    sch = tir.Schedule(scale_add_batch1, debug_mask="all")
    sch.transform_layout(sch.get_block("B"), ("write", 0), lambda n, i, j: (n, i // 4, j, i % 4))
    sch.compute_inline(sch.get_block("B"))
    check(sch, scale_add_batch1_inlined)
    verify_numeric(scale_add_batch1, sch.mod)


@T.prim_func
def scale_add_permuted_store(A: T.Buffer((1, 4, 6), "float32"),
                             C: T.Buffer((1, 6, 4), "float32")):
    B = T.alloc_buffer((6, 1, 4), "float32")
    for b, i, j in T.grid(1, 4, 6):
        with T.block("B"):
            vb, vi, vj = T.axis.remap("SSS", [b, i, j])
            B[vj, vb, vi] = A[vb, vi, vj] * T.float32(2)
    for b, j, i in T.grid(1, 6, 4):
        with T.block("C"):
            vb, vj, vi = T.axis.remap("SSS", [b, j, i])
            C[vb, vj, vi] = B[vj, vb, vi] + T.float32(1)


@T.prim_func
def scale_add_permuted_store_inlined(A: T.Buffer((1, 4, 6), "float32"),
                                     C: T.Buffer((1, 6, 4), "float32")):
    for b, j, i in T.grid(1, 6, 4):
        with T.block("C"):
            vb, vj, vi = T.axis.remap("SSS", [b, j, i])
            T.reads(A[0, vi, vj])
            T.writes(C[vb, vj, vi])
            C[vb, vj, vi] = A[0, vi, vj] * T.float32(2) + T.float32(1)


def test_compute_inline_of_a_permuted_store_goes_through_its_inverse():
    # as TVM: only a store at the iterators in their order is substituted directly; a
    # permutation (B[vj, vb, vi]) is a map like any other, its unit iterator vb its minimum
    sch = tir.Schedule(scale_add_permuted_store, debug_mask="all")
    sch.compute_inline(sch.get_block("B"))
    check(sch, scale_add_permuted_store_inlined)
    verify_numeric(scale_add_permuted_store, sch.mod)
    verify_trace_roundtrip(sch, scale_add_permuted_store)
