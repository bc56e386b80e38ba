"""reverse_compute_inline into a blockized producer, and the predicate TVM adds.

As TVM 0.27: the consumer is inlined into the innermost block that writes what it reads (the
inner block of a ``blockize``d producer), and that block gets a ``T.where`` keeping the
consumer's iterators in its domain, simplified knowing only the inner block's own iterators
(so an outer block's iterator stays: ``T.where(0 <= vi_o and vi_o < 12)``).  Expected
scripts are TVM 0.27's printouts, in v0.23 spelling.
"""

from mlckit import tir
from mlckit.script import tir as T

from .common import check, expect_error, verify_numeric, verify_trace_roundtrip
from .workloads import scale_add_8x6


@T.prim_func
def chain(A: T.Buffer((12, 16), "float32"), D: T.Buffer((12, 16), "float32")):
    B = T.alloc_buffer((12, 16))
    C = T.alloc_buffer((12, 16))
    for i, j in T.grid(12, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(12, 16):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] + T.float32(1)
    for i, j in T.grid(12, 16):
        with T.block("D"):
            vi, vj = T.axis.remap("SS", [i, j])
            D[vi, vj] = T.max(C[vi, vj], T.float32(0))


@T.prim_func
def chain_row_blockized_inlined(A: T.Buffer((12, 16), "float32"),
                                D: T.Buffer((12, 16), "float32")):
    B = T.alloc_buffer((12, 16))
    for i, j in T.grid(12, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(A[vi, vj])
            T.writes(B[vi, vj])
            B[vi, vj] = A[vi, vj] * T.float32(2.0)
    for i in range(12):
        with T.block("C_o"):
            vi_o = T.axis.spatial(12, i)
            vj_o = T.axis.spatial(1, 0)
            T.reads(B[vi_o, 0:16])
            T.writes(D[vi_o, 0:16])
            for j in range(16):
                with T.block("C"):
                    vj_i = T.axis.spatial(16, j)
                    T.where(0 <= vi_o and vi_o < 12)
                    T.reads(B[vi_o, vj_i])
                    T.writes(D[vi_o, vj_i])
                    D[vi_o, vj_i] = T.max(B[vi_o, vj_i] + T.float32(1.0), T.float32(0.0))


def test_inlines_into_the_inner_block_of_a_blockized_producer_with_a_where():
    sch = tir.Schedule(chain, debug_mask="all")
    sch.blockize(sch.get_loops(sch.get_block("C"))[1])
    sch.reverse_compute_inline(sch.get_block("D"))
    check(sch, chain_row_blockized_inlined)
    verify_numeric(chain, sch.mod)
    verify_trace_roundtrip(sch, chain)


@T.prim_func
def chain_whole_blockized_inlined(A: T.Buffer((12, 16), "float32"),
                                  D: T.Buffer((12, 16), "float32")):
    B = T.alloc_buffer((12, 16))
    for i, j in T.grid(12, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(A[vi, vj])
            T.writes(B[vi, vj])
            B[vi, vj] = A[vi, vj] * T.float32(2.0)
    with T.block("C_o"):
        vi_o = T.axis.spatial(1, 0)
        vj_o = T.axis.spatial(1, 0)
        T.reads(B[0:12, 0:16])
        T.writes(D[0:12, 0:16])
        for i, j in T.grid(12, 16):
            with T.block("C"):
                vi_i, vj_i = T.axis.remap("SS", [i, j])
                T.reads(B[vi_i, vj_i])
                T.writes(D[vi_i, vj_i])
                D[vi_i, vj_i] = T.max(B[vi_i, vj_i] + T.float32(1.0), T.float32(0.0))


def test_no_where_when_the_inner_block_covers_the_consumer():
    sch = tir.Schedule(chain, debug_mask="all")
    sch.blockize(sch.get_loops(sch.get_block("C"))[0], preserve_unit_iters=False)
    sch.reverse_compute_inline(sch.get_block("D"))
    check(sch, chain_whole_blockized_inlined)
    verify_numeric(chain, sch.mod)


@T.prim_func
def chain_twice_blockized_inlined(A: T.Buffer((12, 16), "float32"),
                                  D: T.Buffer((12, 16), "float32")):
    B = T.alloc_buffer((12, 16))
    for i, j in T.grid(12, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(A[vi, vj])
            T.writes(B[vi, vj])
            B[vi, vj] = A[vi, vj] * T.float32(2.0)
    with T.block("C_o_o"):
        vi_o_o = T.axis.spatial(1, 0)
        vj_o_o = T.axis.spatial(1, 0)
        T.reads(B[0:12, 0:16])
        T.writes(D[0:12, 0:16])
        for i in range(12):
            with T.block("C_o"):
                vi_o_i = T.axis.spatial(12, i)
                T.reads(B[vi_o_i, 0:16])
                T.writes(D[vi_o_i, 0:16])
                for j in range(16):
                    with T.block("C"):
                        vj_i = T.axis.spatial(16, j)
                        T.where(0 <= vi_o_i and vi_o_i < 12)
                        T.reads(B[vi_o_i, vj_i])
                        T.writes(D[vi_o_i, vj_i])
                        D[vi_o_i, vj_i] = T.max(B[vi_o_i, vj_i] + T.float32(1.0),
                                                T.float32(0.0))


def test_every_block_between_the_scope_and_the_inner_block_gets_new_regions():
    sch = tir.Schedule(chain, debug_mask="all")
    sch.blockize(sch.get_loops(sch.get_block("C"))[1])
    sch.blockize(sch.get_loops(sch.get_block("C_o"))[0])
    sch.reverse_compute_inline(sch.get_block("D"))
    check(sch, chain_twice_blockized_inlined)
    verify_numeric(chain, sch.mod)


@T.prim_func
def longer_producer(A: T.Buffer((16,), "float32"), C: T.Buffer((12,), "float32")):
    B = T.alloc_buffer((16,))
    for i in range(16):
        with T.block("B"):
            vi = T.axis.spatial(16, i)
            B[vi] = A[vi] * T.float32(2)
    for i in range(12):
        with T.block("C"):
            vi = T.axis.spatial(12, i)
            C[vi] = B[vi] + T.float32(1)


@T.prim_func
def longer_producer_inlined(A: T.Buffer((16,), "float32"), C: T.Buffer((12,), "float32")):
    for i in range(16):
        with T.block("B"):
            vi = T.axis.spatial(16, i)
            T.where(i < 12)
            T.reads(A[vi])
            T.writes(C[vi])
            C[vi] = A[vi] * T.float32(2.0) + T.float32(1.0)


def test_a_producer_over_more_elements_than_the_consumer_stores_only_the_consumers():
    # the producer runs over 16 elements, the consumer's C has 12: the store is guarded
    sch = tir.Schedule(longer_producer, debug_mask="all")
    sch.reverse_compute_inline(sch.get_block("C"))
    check(sch, longer_producer_inlined)
    verify_numeric(longer_producer, sch.mod)


@T.prim_func
def shorter_producer(A: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32")):
    B = T.alloc_buffer((16,))
    for i in range(12):
        with T.block("B"):
            vi = T.axis.spatial(12, i)
            B[vi] = A[vi] * T.float32(2)
    for i in range(16):
        with T.block("C"):
            vi = T.axis.spatial(16, i)
            C[vi] = B[vi] + T.float32(1)


def test_a_producer_covering_part_of_the_consumer_is_refused():
    sch = tir.Schedule(shorter_producer)
    expect_error(sch, lambda: sch.reverse_compute_inline(sch.get_block("C")),
                 "reverse_compute_inline", "producer `B` does not cover the domain of block `C`",
                 "`vi`", "lose elements")


@T.prim_func
def two_inner_writers(A: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32")):
    B = T.alloc_buffer((16,))
    with T.block("B_o"):
        T.reads(A[0:16])
        T.writes(B[0:16])
        for i in range(8):
            with T.block("B_lo"):
                vi = T.axis.spatial(8, i)
                B[vi] = A[vi] * T.float32(2)
        for i in range(8):
            with T.block("B_hi"):
                vi = T.axis.spatial(8, i)
                B[vi + 8] = A[vi + 8] * T.float32(3)
    for i in range(16):
        with T.block("C"):
            vi = T.axis.spatial(16, i)
            C[vi] = B[vi] + T.float32(1)


def test_a_producer_holding_two_inner_writers_is_refused():
    # TVM: "required to have only a single producer block"
    sch = tir.Schedule(two_inner_writers)
    expect_error(sch, lambda: sch.reverse_compute_inline(sch.get_block("C")),
                 "producer `B_o` holds 2 innermost blocks writing what block `C` reads",
                 "`B_lo`, `B_hi`", "exactly one")


# -- loads at an affine map of the iterators (found by tools/difftest_tvm.py) ----------------
@T.prim_func
def scale_add_8x6_packed_reverse_inlined(A: T.Buffer((8, 6), "float32"),
                                         C: T.Buffer((8, 6), "float32")):
    for i, j in T.grid(8, 6):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(A[vi, vj])
            T.writes(C[vi % 4 + vi // 4 * 4, vj])
            C[vi % 4 + vi // 4 * 4, vj] = A[vi, vj] * T.float32(2.0) + T.float32(1.0)


def test_reverse_compute_inline_of_loads_from_a_packed_layout():
    # C loads B[vi // 4, vj, vi % 4]: its iterators are written in the producer's store
    # indices through the inverse of that map (unsimplified, as TVM writes them)
    sch = tir.Schedule(scale_add_8x6, debug_mask="all")
    sch.transform_layout(sch.get_block("B"), ("write", 0), lambda i, j: (i // 4, j, i % 4))
    sch.reverse_compute_inline(sch.get_block("C"))
    check(sch, scale_add_8x6_packed_reverse_inlined)
    verify_numeric(scale_add_8x6, sch.mod)
    verify_trace_roundtrip(sch, scale_add_8x6)


@T.prim_func
def scale_add_8x6_half_loaded(A: T.Buffer((8, 6), "float32"), C: T.Buffer((8, 6), "float32")):
    B = T.alloc_buffer((8, 6), "float32")
    for i, j in T.grid(8, 6):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(8, 6):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi // 2, vj] + T.float32(1)


def test_reverse_compute_inline_refuses_loads_that_are_not_one_to_one():
    # rows 2k and 2k + 1 of C both read B[k]: the producer, storing B[k] once, could write
    # only one of them (TVM 0.27 takes it, writes C[vi * 2] and leaves the odd rows unset)
    sch = tir.Schedule(scale_add_8x6_half_loaded)
    expect_error(sch, lambda: sch.reverse_compute_inline(sch.get_block("C")),
                 "reverse_compute_inline", "loads `B` at indices that are not a one-to-one "
                 "affine map of its iterators (vi // 2, vj)")
