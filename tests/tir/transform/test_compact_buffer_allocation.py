"""compact_buffer_allocation: expected TIR, numbers through lnumpy and numba_cpu, no-ops."""

from __future__ import annotations

import numpy as np

from mlckit import tir
from mlckit.backend import lnumpy, numba_cpu
from mlckit.script import tir as T
from mlckit.tir.transform import compact_buffer_allocation


@T.prim_func
def matmul(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32"),
           C: T.Buffer((16, 16), "float32")):
    T.func_attr({"global_symbol": "matmul", "tir.noalias": True})
    for i, j, k in T.grid(16, 16, 16):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


def blocked(packed: bool = False):
    """The course's blocked matmul: a 2 x 8 tile of C accumulated in ``C_local``."""
    sch = tir.Schedule(matmul)
    block = sch.get_block("C")
    i, j, k = sch.get_loops(block)
    i0, i1 = sch.split(i, factors=[None, 2])
    j0, j1 = sch.split(j, factors=[None, 8])
    sch.reorder(j0, i0, k, i1, j1)
    c_local = sch.cache_write(block, 0, "local")
    sch.reverse_compute_at(c_local, i0)
    if packed:
        init = sch.decompose_reduction(block, k)
        sch.cache_read(block, 2, "global")
        sch.compute_at(sch.get_block("B_global"), j0)
        sch.transform_layout(block, ("read", 2), lambda k, j: (j, k))
        for b in (init, block, c_local):
            for loop in sch.get_loops(b)[-2:]:
                sch.unroll(loop)
    return sch.mod["main"]


EXPECTED = '''\
# from tvm.script import tir as T

@T.prim_func
def matmul(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    T.func_attr({"tir.noalias": True})
    # with T.block("root"):
    for j_0, i_0 in T.grid(2, 8):
        with T.block("C_local_alloc"):
            T.reads(A[i_0 * 2:i_0 * 2 + 2, 0:16], B[0:16, j_0 * 8:j_0 * 8 + 8])
            T.writes(C[i_0 * 2:i_0 * 2 + 2, j_0 * 8:j_0 * 8 + 8])
            C_local = T.alloc_buffer((2, 8), scope="local")
            for k, i_1, j_1 in T.grid(16, 2, 8):
                with T.block("C"):
                    vi = T.axis.spatial(16, i_0 * 2 + i_1)
                    vj = T.axis.spatial(16, j_0 * 8 + j_1)
                    vk = T.axis.reduce(16, k)
                    T.reads(A[vi, vk], B[vk, vj])
                    T.writes(C_local[i_1, j_1])
                    with T.init():
                        C_local[i_1, j_1] = T.float32(0.0)
                    C_local[i_1, j_1] = C_local[i_1, j_1] + A[vi, vk] * B[vk, vj]
            for ax0, ax1 in T.grid(2, 8):
                with T.block("C_local"):
                    v0 = T.axis.spatial(16, i_0 * 2 + ax0)
                    v1 = T.axis.spatial(16, j_0 * 8 + ax1)
                    T.reads(C_local[ax0, ax1])
                    T.writes(C[v0, v1])
                    C[v0, v1] = C_local[ax0, ax1]'''


def _inputs():
    rng = np.random.default_rng(0)
    a = rng.uniform(-1, 1, (16, 16)).astype("float32")
    b = rng.uniform(-1, 1, (16, 16)).astype("float32")
    return a, b


def test_cache_write_tile_shrinks_to_its_region():
    before = blocked()
    assert before.body.block.alloc_buffers[0].shape[0].value == 16
    # lowered TIR (as after TVM's ConvertBlocksToOpaque): blocks index C_local with loop
    # variables, so the expected function is compared as text
    assert compact_buffer_allocation(before).script() == EXPECTED


def test_compacted_function_computes_the_same():
    a, b = _inputs()
    for packed in (False, True):
        func = compact_buffer_allocation(blocked(packed))
        for build in (lnumpy.build, lambda f: numba_cpu.build(f, cache=False)):
            c = np.zeros((16, 16), "float32")
            build(func)(a, b, c)
            np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5)


def test_packed_panel_is_compacted_too():
    func = compact_buffer_allocation(blocked(packed=True))
    script = func.script()
    assert 'B_global = T.alloc_buffer((8, 16))' in script
    assert 'C_local = T.alloc_buffer((2, 8), scope="local")' in script
    assert "B_global[ax1, v0] = B[v0, v1]" in script


def test_buffers_used_whole_are_left_alone():
    # the LCA of Y's accesses is the root: nothing to compact
    from tests.backend import kernels as K

    assert compact_buffer_allocation(K.mm_relu) is K.mm_relu
    assert compact_buffer_allocation(matmul) is matmul


def test_point_per_iteration_becomes_one_element():
    @T.prim_func
    def f(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
        t = T.alloc_buffer((16,), "float32")
        for i in range(16):
            with T.block("t"):
                vi = T.axis.spatial(16, i)
                t[vi * vi % 16] = A[vi]
            with T.block("b"):
                vi = T.axis.spatial(16, i)
                B[vi] = t[vi * vi % 16]

    out = compact_buffer_allocation(f)
    assert 't = T.alloc_buffer((1,))' in out.script()
    assert "B[vi] = t[0]" in out.script()
    a = np.arange(16, dtype="float32")
    b = np.zeros(16, "float32")
    numba_cpu.build(out, cache=False)(a, b)
    np.testing.assert_array_equal(b, a)


def test_index_that_cannot_be_bounded_is_left_alone():
    @T.prim_func
    def f(A: T.Buffer((4, 4), "float32"), B: T.Buffer((4, 4), "float32")):
        t = T.alloc_buffer((16,), "float32")
        for i in range(4):
            for k in range(4):
                with T.block("t"):
                    vi, vk = T.axis.remap("SS", [i, k])
                    t[vk * vk] = A[vi, vk]
            for k in range(4):
                with T.block("b"):
                    vi, vk = T.axis.remap("SS", [i, k])
                    B[vi, vk] = t[vk * vk]

    assert compact_buffer_allocation(f) is f


@T.prim_func
def sum_rf_under_j(A: T.Buffer((8, 16), "float32"), B: T.Buffer((1,), "float32")):
    # B_rf[vj] accumulates over loop i (vi is a reduction iterator bound to i), while both
    # blocks sit under loop j: the allocation must stay above loop i (as TVM's LCA detector)
    B_rf = T.alloc_buffer((16, 1))
    for i, j in T.grid(8, 16):
        with T.block("B_rf"):
            vj, vi = T.axis.remap("SR", [j, i])
            with T.init():
                B_rf[vj, 0] = T.float32(0)
            B_rf[vj, 0] = B_rf[vj, 0] + A[vi, vj]
        with T.block("B"):
            vj = T.axis.reduce(16, j)
            with T.init():
                B[0] = T.float32(0)
            B[0] = B[0] + B_rf[vj, 0]


def test_a_buffer_a_reduction_accumulates_across_a_loop_is_not_shrunk_inside_it():
    lowered = compact_buffer_allocation(sum_rf_under_j)
    allocs = [b for b in lowered.body.block.alloc_buffers if b.name == "B_rf"]
    assert [int(d.value) for d in allocs[0].shape] == [16, 1]
    a = np.random.default_rng(0).random((8, 16), dtype="float32")
    for build in (lnumpy.build, numba_cpu.build):
        b = np.zeros(1, "float32")
        build(sum_rf_under_j)(a, b)
        np.testing.assert_allclose(b, [a.sum()], rtol=1e-5)


# -- the pass CompactBufferAllocation(): TVM's rules -------------------------------------------
def compact(func):
    import mlckit as tvm

    mod = tvm.IRModule({"main": func})
    return tir.transform.CompactBufferAllocation()(mod)["main"]


def assert_compacts_to(before, expected):
    import mlckit as tvm

    tvm.ir.assert_structural_equal(compact(before), expected)


def test_a_buffer_a_call_takes_whole_is_not_compacted():
    @T.prim_func(private=True)
    def before(A: T.Buffer((16,), "float32")):
        B = T.alloc_buffer((16,))
        for i in range(4):
            T.evaluate(T.call_extern("int32", "use", B.data))
            B[i] = A[i]

    assert_compacts_to(before, before)


def test_an_annotated_opaque_access_covers_the_annotated_region():
    @T.prim_func(private=True)
    def before(A: T.Buffer((64,), "float32")):
        with T.block("root"):
            C = T.alloc_buffer((64,))
            for i in range(8):
                with T.block(""):
                    T.reads(A[i])
                    T.writes(C[i:i + 4])
                    T.evaluate(T.call_extern("int32", "fill4", C.data))
                    C[i] = A[i]

    @T.prim_func(private=True)
    def expected(A: T.Buffer((64,), "float32")):
        with T.block("root"):
            C = T.alloc_buffer((11,))
            for i in range(8):
                with T.block(""):
                    T.reads(A[i])
                    T.writes(C[i:i + 4])
                    T.evaluate(T.call_extern("int32", "fill4", C.data))
                    C[i] = A[i]

    assert_compacts_to(before, expected)


def test_a_shared_buffer_spans_the_threads_of_its_block():
    # one copy per thread block: threadIdx varies within it, blockIdx does not
    @T.prim_func(private=True)
    def before(A: T.Buffer((64,), "float32"), C: T.Buffer((64,), "float32")):
        for bx in T.thread_binding(8, thread="blockIdx.x"):
            for tx in T.thread_binding(8, thread="threadIdx.x"):
                with T.block(""):
                    B = T.alloc_buffer((64,), scope="shared")
                    B[bx * 8 + tx] = A[bx * 8 + tx]
                    C[bx * 8 + tx] = B[bx * 8 + tx]

    @T.prim_func(private=True)
    def expected(A: T.Buffer((64,), "float32"), C: T.Buffer((64,), "float32")):
        for bx in T.thread_binding(8, thread="blockIdx.x"):
            for tx in T.thread_binding(8, thread="threadIdx.x"):
                with T.block(""):
                    B = T.alloc_buffer((8,), scope="shared")
                    B[tx] = A[bx * 8 + tx]
                    C[bx * 8 + tx] = B[tx]

    assert_compacts_to(before, expected)


def test_a_branch_condition_bounds_the_accesses_under_it():
    @T.prim_func(private=True)
    def before(A: T.Buffer((16,), "float32"), C: T.Buffer((20,), "float32")):
        with T.block("root"):
            B = T.alloc_buffer((20,))
            for i in range(16):
                B[i] = A[i]
            for i in range(20):
                C[i] = T.if_then_else(2 <= i and i < 18, B[i - 2], T.float32(0))

    @T.prim_func(private=True)
    def expected(A: T.Buffer((16,), "float32"), C: T.Buffer((20,), "float32")):
        with T.block("root"):
            B = T.alloc_buffer((16,))
            for i in range(16):
                B[i] = A[i]
            for i in range(20):
                C[i] = T.if_then_else(2 <= i and i < 18, B[i - 2], T.float32(0))

    assert_compacts_to(before, expected)


def test_a_lowered_allocation_is_compacted_and_an_integer_condition_is_nonzero():
    @T.prim_func(private=True)
    def before():
        data = T.allocate([12], "int32")
        A = T.Buffer([12], "int32", data)
        for i in range(10):
            if i:
                A[i] = A[i] + 1

    @T.prim_func(private=True)
    def expected():
        data = T.allocate([9], "int32")
        A = T.Buffer([9], "int32", data)
        for i in range(10):
            if i:
                A[i - 1] = A[i - 1] + 1

    assert_compacts_to(before, expected)


def test_a_vector_access_covers_all_its_lanes():
    # a lowered (vectorized) kernel compacted again, as numba_cpu does: the region of
    # A[T.Ramp(i * 4 + 2, 1, 2)] is its lanes 2..3 of each row, not its first lane only
    @T.prim_func(private=True)
    def before():
        data = T.allocate([16], "float32", "local")
        A = T.Buffer([16], "float32", data, scope="local")
        for i in range(4):
            A[i * 4 + 2:i * 4 + 4] = A[T.Ramp(i * 4 + 2, 1, 2)] + T.Broadcast(T.float32(1), 2)

    @T.prim_func(private=True)
    def expected():
        data = T.allocate([14], "float32", "local")
        A = T.Buffer([14], "float32", data, scope="local")
        for i in range(4):
            A[i * 4:i * 4 + 2] = A[T.Ramp(i * 4, 1, 2)] + T.Broadcast(T.float32(1), 2)

    assert_compacts_to(before, expected)


def test_a_compacted_vector_tile_keeps_its_lanes():
    # the whole tile is one vector: nothing to shrink, and the lanes stay distinct
    @T.prim_func(private=True)
    def before(C: T.Buffer((4,), "float32")):
        data = T.allocate([2], "float32", "local")
        acc = T.Buffer([2], "float32", data, scope="local")
        for j in range(2):
            acc[0:2] = T.Broadcast(T.float32(0), 2)
            C[j * 2:j * 2 + 2] = acc[T.Ramp(0, 1, 2)]

    assert_compacts_to(before, before)
    c = np.full(4, 9, "float32")
    numba_cpu.build(compact_buffer_allocation(before), cache=False)(c)
    np.testing.assert_array_equal(c, np.zeros(4, "float32"))


def test_a_fused_loop_divided_in_every_index_is_one_term():
    # meta_schedule's fused outer loop: `f // 4` and `f % 4` are written anew in each access,
    # and still cancel between the first and last element of the region
    @T.prim_func(private=True)
    def before(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
        C_global = T.alloc_buffer((16, 16))
        for f in T.parallel(16):
            for i, j in T.grid(4, 4):
                with T.block("C_global"):
                    vi = T.axis.spatial(16, f // 4 * 4 + i)
                    vj = T.axis.spatial(16, f % 4 * 4 + j)
                    C_global[vi, vj] = A[vi, vj] * T.float32(2)
            for i, j in T.grid(4, 4):
                with T.block("C"):
                    vi = T.axis.spatial(16, f // 4 * 4 + i)
                    vj = T.axis.spatial(16, f % 4 * 4 + j)
                    C[vi, vj] = C_global[vi, vj]

    compact = compact_buffer_allocation(before)
    (alloc,) = [s.block.alloc_buffers[0] for s in _realizes(compact) if s.block.alloc_buffers]
    assert [int(x) for x in alloc.shape] == [4, 4]
    a = np.random.default_rng(0).uniform(-1, 1, (16, 16)).astype("float32")
    c = np.zeros((16, 16), "float32")
    numba_cpu.build(compact, cache=False)(a, c)
    np.testing.assert_allclose(c, a * 2)


def _realizes(func):
    found = []
    tir.stmt_functor.post_order_visit(
        func.body, lambda s: found.append(s) if isinstance(s, tir.BlockRealize) else None)
    return found


def test_an_allocation_two_buffers_view_is_not_compacted():
    @T.prim_func(private=True)
    def before():
        data = T.allocate([1024], "int8")
        A = T.decl_buffer([1024], "int8", data)
        B = T.decl_buffer([512], "float16", data)
        for i in range(10):
            A[i] = A[i] + T.int8(1)
        for i in range(10):
            B[i] = B[i] + T.float16(1)

    assert_compacts_to(before, before)


def test_an_index_bound_by_a_let_is_its_value():
    # rii = rij // 8 spans all 8 rows of C: nothing to shrink
    @T.prim_func(private=True)
    def before(A: T.Buffer((8, 8), "float32")):
        with T.block("root"):
            C = T.alloc_buffer((8, 8))
            for rij in range(64):
                rii: T.int32 = rij // 8
                C[rii, rij % 8] = A[rii, rij % 8]
            for i, j in T.grid(8, 8):
                A[i, j] = C[i, j]

    assert_compacts_to(before, before)


def test_a_match_buffer_source_region_is_rebased():
    @T.prim_func(private=True)
    def before(A: T.Buffer((16, 16), "float32")):
        for i in range(16):
            with T.block(""):
                B = T.alloc_buffer((16, 16))
                with T.block(""):
                    B0 = T.match_buffer(B[i, 0:16], (16,))
                    for j in range(16):
                        B0[j] = T.float32(1)
                for j in range(16):
                    A[i, j] = B[i, j]

    @T.prim_func(private=True)
    def expected(A: T.Buffer((16, 16), "float32")):
        for i in range(16):
            with T.block(""):
                B = T.alloc_buffer((1, 16))
                with T.block(""):
                    B0 = T.match_buffer(B[0, 0:16], (16,))
                    for j in range(16):
                        B0[j] = T.float32(1)
                for j in range(16):
                    A[i, j] = B[0, j]

    assert_compacts_to(before, expected)


def test_a_block_predicate_bounds_each_index_by_itself():
    # j * 8 + k < 60: 60 rows and 60 columns of the diagonal, not 64
    @T.prim_func(private=True)
    def before():
        for i in range(4):
            with T.block(""):
                A = T.alloc_buffer((256, 256))
                for j, k in T.grid(8, 8):
                    with T.block(""):
                        T.where(j * 8 + k < 60)
                        A[i * 64 + j * 8 + k, i * 64 + j * 8 + k] = T.float32(1)

    @T.prim_func(private=True)
    def expected():
        for _i in range(4):  # the compacted indices no longer use i
            with T.block(""):
                A = T.alloc_buffer((60, 60))
                for j, k in T.grid(8, 8):
                    with T.block(""):
                        T.where(j * 8 + k < 60)
                        A[j * 8 + k, j * 8 + k] = T.float32(1)

    assert_compacts_to(before, expected)


def test_only_a_non_strict_compaction_grows_a_buffer_to_its_region():
    @T.prim_func(private=True)
    def before(A: T.Buffer((8, 8), "float32")):
        for i in range(2):
            with T.block(""):
                B = T.alloc_buffer((8, 7))
                for j, k in T.grid(4, 8):
                    B[i * 4 + j, k] = A[i * 4 + j, k]

    @T.prim_func(private=True)
    def expected(A: T.Buffer((8, 8), "float32")):
        for i in range(2):
            with T.block(""):
                B = T.alloc_buffer((4, 8))
                for j, k in T.grid(4, 8):
                    B[j, k] = A[i * 4 + j, k]

    import mlckit as tvm

    mod = tvm.IRModule({"main": before})
    loose = tir.transform.CompactBufferAllocation(is_strict=False)(mod)["main"]
    tvm.ir.assert_structural_equal(loose, expected)
    strict = compact(before)  # strict: the shape never grows, the rows still shrink
    assert [int(x) for x in strict.body.block.body.body.block.alloc_buffers[0].shape] == [4, 7]
