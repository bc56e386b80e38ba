"""record_accesses runs a thread-bound kernel as a GPU would: the outputs equal NumPy, and
every thread's loads and stores are recorded, with the barrier interval they happen in.

The expected counts and elements are derived by hand from each schedule (the formulas in the
comments) or walked thread by thread in plain Python, never read from the recorder."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mlckit.backend.numba_cuda.record import RecordError, record_accesses
from mlckit.error import TVMError
from mlckit.script import tir as T

from . import access_kernels as K
from .schedules import CASES, inputs, reference
from .test_random_bindings import elementwise, reduction, schedule

RNG = np.random.default_rng(0)


def window_inputs():
    return RNG.uniform(-1, 1, 259).astype("float32"), np.full(256, np.nan, "float32")


def window_reference(a):
    return a[:256] + a[1:257] + a[2:258]


@pytest.mark.parametrize("case", sorted(CASES))
def test_course_schedules_equal_numpy(case):
    kernel, schedule = CASES[case]
    func = schedule().mod["main"]
    args = inputs(func)
    args[-1][:] = np.nan
    log = record_accesses(func, *args)
    np.testing.assert_allclose(args[-1], reference(kernel, args), rtol=1e-5, atol=1e-5)
    assert log.races == []


def _window_walk():
    """Per (block, thread) of window_sum_shared(64): the elements of A it reads, of A_shared
    it writes and reads, of B it writes -- the cooperative fetch's two rounds walked out."""
    walk = {}
    for b in range(4):
        for t in range(64):
            fetch = [r * 64 + t for r in range(2) if r * 64 + t < 66]
            walk[b, t] = {
                ("A", "read"): [(b * 64 + f,) for f in fetch],
                ("A_shared", "write"): [(f,) for f in fetch],
                ("A_shared", "read"): [(t,), (t + 1,), (t + 2,)],
                ("B", "write"): [(b * 64 + t,)],
            }
    return walk


@pytest.mark.parametrize("func", [K.window_sum_shared(64), K.window_sum_by_hand],
                         ids=["scheduled", "by_hand"])
def test_window_sum_every_thread_touches_what_the_schedule_says(func):
    a, b = window_inputs()
    log = record_accesses(func, a, b)
    np.testing.assert_allclose(b, window_reference(a), rtol=1e-6)
    for (blk, t), expected in _window_walk().items():
        for (buf, kind), elements in expected.items():
            assert log.elements(buf, kind, block=blk, thread=t) == elements, (buf, kind, blk, t)
    # counts: threads 0 and 1 fetch twice (66 = 64 + 2 elements), the others once
    reads_a = log.counts("A", "read")
    assert reads_a.shape == (4, 64)
    assert (reads_a[:, :2] == 2).all() and (reads_a[:, 2:] == 1).all()
    assert (log.counts("A_shared", "read") == 3).all()
    assert log.count("B", "write", block=(3,), thread=(63,)) == 1
    assert len(log) == 4 * (66 + 66 + 64 * 3 + 64)


def test_shared_matmul_counts_match_the_formulas():
    # blocking_with_shared(4, 4, 8, 8, 8) on 64x64: grid 2x2, 64 threads, k in 8 tiles of 8.
    # Per tile each thread fetches (32 * 8) / 64 = 4 floats of A and 4 of B (one float4),
    # then does 8 * 4 * 4 = 128 updates of its 4x4 C_local.
    A = RNG.uniform(-1, 1, (64, 64)).astype("float32")
    B = RNG.uniform(-1, 1, (64, 64)).astype("float32")
    C = np.full((64, 64), np.nan, "float32")
    log = record_accesses(K.matmul_shared(), A, B, C)
    np.testing.assert_allclose(C, A @ B, rtol=1e-5, atol=1e-5)
    tiles, updates = 8, 128
    expected = {("A", "read"): tiles * 4, ("B", "read"): tiles * 4,
                ("A_shared", "write"): tiles * 4, ("B_shared", "write"): tiles * 4,
                ("A_shared", "read"): tiles * updates, ("B_shared", "read"): tiles * updates,
                ("C_local", "write"): 16 + tiles * updates,  # init, then every update
                ("C_local", "read"): tiles * updates + 16,  # every update, then the copy out
                ("C", "write"): 16, ("C", "read"): 0, ("A", "write"): 0}
    for (buf, kind), n in expected.items():
        assert (log.counts(buf, kind) == n).all(), (buf, kind)
    # thread t of block (bx, by) fetches A[by*32 + (4t+v)//8, k0*8 + (4t+v)%8], v = 0..3
    t, bx, by = 13, 1, 0
    want = [(by * 32 + (4 * t + v) // 8, k0 * 8 + (4 * t + v) % 8)
            for k0 in range(8) for v in range(4)]
    assert log.elements("A", "read", block=(bx, by), thread=(t,)) == want
    assert log.elements("C", "write", block=(bx, by), thread=(t,)) == [
        (by * 32 + t // 8 * 4 + i, bx * 32 + t % 8 * 4 + j) for i in range(4) for j in range(4)]


def test_16x16_matmul_counts():
    # 16x16 threads, one output each, 4 k-tiles of 16: every thread fetches one element of
    # A's and of B's tile per k-tile and reads 16 of each tile back
    A = RNG.uniform(-1, 1, (64, 64)).astype("float32")
    B = RNG.uniform(-1, 1, (64, 64)).astype("float32")
    C = np.full((64, 64), np.nan, "float32")
    log = record_accesses(K.matmul_16x16(), A, B, C)
    np.testing.assert_allclose(C, A @ B, rtol=1e-5, atol=1e-5)
    assert log.kernels[0].grid == (4, 4) and log.kernels[0].block == (16, 16)
    for buf, kind, n in [("A", "read", 4), ("B", "read", 4), ("A_shared", "write", 4),
                         ("A_shared", "read", 64), ("C", "write", 65), ("C", "read", 64)]:
        assert (log.counts(buf, kind) == n).all(), (buf, kind)
    # thread (tx=3, ty=5) of block (bx=2, by=1) fetches A[16 + 5, 16 * k0 + 3]
    assert log.elements("A", "read", block=(2, 1), thread=(3, 5)) == [
        (16 + 5, 16 * k0 + 3) for k0 in range(4)]


def test_one_threads_accesses_in_order_with_their_barrier_intervals():
    a, b = window_inputs()
    log = record_accesses(K.window_sum_by_hand, a, b, sync=False)
    # thread 1 of block 2 fetches twice (1 and 64 + 1 < 66), waits, sums three, stores one
    assert [str(x) for x in log.thread_accesses(block=2, thread=1)] == [
        "read  A[129] (global) interval 0", "write A_shared[1] (shared) interval 0",
        "read  A[193] (global) interval 0", "write A_shared[65] (shared) interval 0",
        "read  A_shared[1] (shared) interval 1", "read  A_shared[2] (shared) interval 1",
        "read  A_shared[3] (shared) interval 1", "write B[129] (global) interval 1"]
    # per scope, as GPU-Puzzles counts: global = A's reads, shared = A_shared's
    assert (log.scope_counts("global", "read") == log.counts("A", "read")).all()
    assert (log.scope_counts("shared", "read") == 3).all()
    assert (log.scope_counts("local", "read") == 0).all()


def test_missing_barrier_is_a_race_naming_buffer_element_and_threads():
    a, b = window_inputs()
    log = record_accesses(K.window_sum_no_barrier, a, b, sync=False)
    # element e of a block's tile is fetched by thread e % 64 and read by threads e-2..e:
    # every e in 1..65 has a reader other than its writer, in each of the 4 blocks
    assert log.race_count == 4 * 65
    race = next(r for r in log.races if r.element == (64,) and r.first.block == (0,))
    assert race.buffer == "A_shared" and race.scope == "shared"
    assert not race.between_blocks and race.interval == 0
    assert (race.first.thread, race.first.kind) == ((0,), "write")
    assert (race.second.thread, race.second.kind) == ((62,), "read")
    assert race.first.site.text == "A_shared[r * 64 + tx] = A[bx * 64 + r * 64 + tx]"
    assert race.second.site.text == "A_shared[tx + 2]"
    assert str(race) == (
        "race on A_shared[64] (shared) in barrier interval 0: block (0,) thread (0,) writes "
        "it at `A_shared[r * 64 + tx] = A[bx * 64 + r * 64 + tx]` (block 'tile'); block (0,) "
        "thread (62,) reads it at `A_shared[tx + 2]` (block 'tile')")
    first = log.races[0]
    assert (first.element, first.first.thread, first.second.thread) == ((1,), (0,), (1,))


def test_the_written_barrier_separates_the_intervals():
    a, b = window_inputs()
    log = record_accesses(K.window_sum_by_hand, a, b, sync=False)
    np.testing.assert_allclose(b, window_reference(a), rtol=1e-6)
    assert log.races == [] and log.race_count == 0
    intervals = {int(i) for i in log.interval}
    assert intervals == {0, 1}  # the fetch before the barrier, the sum after it


def test_scheduled_kernels_race_without_the_inserted_barriers():
    a, b = window_inputs()
    racy = record_accesses(K.window_sum_shared(64), a, b, sync=False)
    assert racy.race_count == 4 * 65
    A = RNG.uniform(-1, 1, (64, 64)).astype("float32")
    C = np.zeros((64, 64), "float32")
    log = record_accesses(K.matmul_shared(), A, A, C, sync=False)
    # without the barrier at the top of the k-loop the next fetch overwrites a tile others
    # still read, and without the one after the fetch they read it before it is written
    assert log.races_in("A_shared") and log.races_in("B_shared")
    assert not log.races_in("A") and not log.races_in("C")
    assert record_accesses(K.matmul_shared(), A, A, C).race_count == 0


@T.prim_func
def every_block_writes_b0(A: T.Buffer((2,), "float32"), B: T.Buffer((1,), "float32")):
    for bx in T.thread_binding(2, thread="blockIdx.x"):
        for _tx in T.thread_binding(1, thread="threadIdx.x"):
            B[0] = A[bx]


def test_global_writes_of_two_blocks_race_whatever_the_barriers():
    log = record_accesses(every_block_writes_b0, np.ones(2, "float32"), np.zeros(1, "float32"))
    (race,) = log.races
    assert race.between_blocks and race.buffer == "B" and race.element == (0,)
    assert (race.first.block, race.second.block) == ((0,), (1,))
    assert race.first.kind == race.second.kind == "write"


def test_coalesced_and_uncoalesced_copies_are_told_apart():
    A = RNG.uniform(-1, 1, (64, 64)).astype("float32")
    rows, cols = np.zeros_like(A), np.zeros_like(A)
    by_rows = record_accesses(K.copy_rows, A, rows)
    by_cols = record_accesses(K.copy_columns, A, cols)
    np.testing.assert_array_equal(rows, A)
    np.testing.assert_array_equal(cols, A)
    # 64 blocks of 2 warps; a warp reads 32 floats: one 128-byte run (4 sectors) by rows,
    # 32 floats 256 bytes apart (32 sectors) by columns.  The minimum for the columns is a
    # 128-byte run from the lowest address, 4 * by: 4 sectors where 4 * by is a multiple of
    # 32 (by % 8 == 0: 8 blocks, 16 warps), 5 elsewhere (112 warps): 16 * 4 + 112 * 5
    for c in by_rows.coalescing:
        assert (c.executions, c.uncoalesced, c.sectors, c.min_sectors) == (128, 0, 512, 512)
    assert by_rows.uncoalesced == []
    assert [c.site.text for c in by_cols.uncoalesced] == ["A[tx, by]", "B[tx, by] = A[tx, by]"]
    for c in by_cols.uncoalesced:
        assert (c.executions, c.uncoalesced, c.sectors, c.min_sectors) == (128, 128, 4096, 624)
        assert c.example == ("copy_columns_kernel", (0,), 0, 32, 4)
        # in 128-byte lines: one where 4 * by is a multiple of 128 (by 0 and 32: 4 warps)
        assert (c.lines, c.min_lines) == (4096, 4 * 1 + 124 * 2)


def test_shared_matmul_uncoalesced_store_and_bank_conflict():
    A = RNG.uniform(-1, 1, (64, 64)).astype("float32")
    C = np.zeros((64, 64), "float32")
    log = record_accesses(K.matmul_shared(), A, A, C)
    # the float4 fetches are one instruction each: a warp's 128 floats are 16 rows of 8
    # (A) or 4 rows of 32 (B), whole 32-byte sectors: coalesced.  The copy-out writes 8
    # threads x stride 4 in each of 4 rows: 16 sectors where 32 floats need 4.
    (store,) = log.uncoalesced
    assert store.site.text.startswith("C[v0, v1] = C_local[ax0, ax1]")
    assert store.example[3:] == (16, 4)
    # A_shared[t // 8 * 4 + i_2, k_1] in a (32, 8) tile: threads 0, 8, 16, 24 read words
    # 0, 32, 64, 96, all in bank 0 (threads 1..7 share thread 0's word): 4-way
    (conflict,) = log.bank_conflicts
    assert conflict.buffer == "A_shared" and conflict.max_ways == 4
    assert conflict.conflicted == conflict.executions == 2 * 2 * 2 * 8 * 128
    assert conflict.example[1:] == ((0, 0), 0, 0, (0, 8, 16, 24), (0, 32, 64, 96))


def test_out_of_bounds_access_names_the_thread():
    @T.prim_func
    def shifted(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
        for tx in T.thread_binding(64, thread="threadIdx.x"):
            B[tx] = A[tx + 1]

    with pytest.raises(RecordError) as err:
        record_accesses(shifted, np.ones(64, "float32"), np.zeros(64, "float32"))
    assert isinstance(err.value, TVMError)
    assert str(err.value) == (
        "record_accesses: in shifted_kernel, block (0,) thread (63,) accesses A[tx + 1] = "
        "A[64], outside A's shape (64,)")


def test_each_index_is_checked_not_only_the_flat_element():
    @T.prim_func
    def past_the_row(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4,), "float32")):
        for tx in T.thread_binding(4, thread="threadIdx.x"):
            B[tx] = A[tx, tx + 6]  # thread 2 reads A[2, 8]: as a flat index, A[3, 0]

    with pytest.raises(RecordError, match=r"thread \(2,\) accesses A\[tx, tx \+ 6\] = A\[2, 8\]"):
        record_accesses(past_the_row, np.ones((4, 8), "float32"), np.zeros(4, "float32"))


def test_too_many_accesses_is_refused_before_memory_runs_out():
    a, b = window_inputs()
    with pytest.raises(RecordError, match="more than 100 accesses"):
        record_accesses(K.window_sum_shared(64), a, b, max_accesses=100)


def test_wrong_arguments_are_the_builds_errors():
    with pytest.raises(TVMError, match="takes 2 arguments"):
        record_accesses(K.window_sum_shared(64), np.zeros(259, "float32"))


@settings(max_examples=10, deadline=None)
@given(decisions=st.one_of(elementwise(), reduction()))
def test_random_bindings_equal_numpy_and_write_each_output_from_one_thread(decisions):
    func = schedule(decisions).mod["main"]
    shape_a = [int(d) for d in func.buffer_map[func.params[0]].shape]
    a = np.random.default_rng(0).uniform(-1, 1, shape_a).astype("float32")
    out = np.full([int(d) for d in func.buffer_map[func.params[1]].shape], np.nan, "float32")
    log = record_accesses(func, a, out)
    want = a * 2 + 1 if out.ndim == 2 else a.sum(axis=1)
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)
    assert log.race_count == 0
    # every output element is written by exactly one thread: once (elementwise), or once
    # for the init and once per k (row sum, 10 columns)
    writes = np.zeros(out.size, int)
    writers: dict = {}
    for k in range(len(log.kernels)):
        counts = log.counts("B", "write", launch=k)
        for blk, thr in zip(*np.nonzero(counts)):
            for element in log.elements("B", "write", int(blk), int(thr), launch=k):
                flat = int(np.ravel_multi_index(element, out.shape))
                writes[flat] += 1
                writers.setdefault(flat, set()).add((k, int(blk), int(thr)))
    assert (writes == (1 if out.ndim == 2 else 11)).all()
    assert all(len(w) == 1 for w in writers.values())


@T.prim_func
def barrier_in_a_branch(A: T.Buffer((128,), "float32"), B: T.Buffer((128,), "float32")):
    for bx in T.thread_binding(2, thread="blockIdx.x"):
        for tx in T.thread_binding(64, thread="threadIdx.x"):
            with T.block("tile"):
                A_shared = T.alloc_buffer((64,), scope="shared")
                A_shared[tx] = A[bx * 64 + tx]
                if tx < 32:
                    T.tvm_storage_sync("shared")  # threads 32..63 never arrive
                B[bx * 64 + tx] = A_shared[63 - tx]


def test_a_barrier_only_some_threads_reach_is_reported():
    a = RNG.uniform(-1, 1, 128).astype("float32")
    log = record_accesses(barrier_in_a_branch, a, np.zeros(128, "float32"), sync=False)
    (d,) = log.divergent_barriers
    assert (d.block, d.reached, d.threads, d.where, d.blocks) == ((0,), 32, 64, "tile", 2)
    assert "a barrier in block 'tile' is reached by 32 of the 64 threads of block (0,)" in str(log)
    assert record_accesses(K.window_sum_by_hand, *window_inputs(), sync=False
                           ).divergent_barriers == []
