"""PromoteInvariantElements: in an innermost loop, an element whose index does not move with
the loop is held in a one-element "local" buffer (loaded before the loop, stored after it
when written) — only where that keeps the sequential result.  numba_cpu runs the pass and
prints such a buffer as a scalar; lnumpy keeps the loads and stores as written."""

from __future__ import annotations

import textwrap

import numpy as np

from mlckit import tir
from mlckit.backend import lnumpy, numba_cpu
from mlckit.backend.codegen import LNUMPY, NUMBA, generate
from mlckit.ir import IRModule, assert_structural_equal
from mlckit.script import from_source
from mlckit.script import tir as T
from mlckit.tir.stmt import BlockRealize, For
from mlckit.tir.transform import PromoteInvariantElements
from mlckit.tir.transform.promote_invariant_elements import (
    invariant_elements,
    promote_invariant_elements,
)

from ...kernels import tile_matmul


def _unchanged(func) -> bool:
    return promote_invariant_elements(func) is func


def _func(text: str):
    return from_source(textwrap.dedent(text))


def _agree(func, *arrays):
    """Run ``func`` through lnumpy and numba_cpu on copies of ``arrays``; they must agree
    exactly (the same float32 operations in the same order)."""
    results = []
    for build in (lnumpy.build, lambda f: numba_cpu.build(f, cache=False)):
        args = [a.copy() for a in arrays]
        build(func)(*args)
        results.append(args)
    for ln, nb in zip(*results):
        np.testing.assert_array_equal(nb, ln)
    return results[1]


NAIVE = '''
    @T.prim_func
    def matmul(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32"),
               C: T.Buffer((8, 8), "float32")):
        T.func_attr({"global_symbol": "matmul", "tir.noalias": True})
        for i, j, k in T.grid(8, 8, 8):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    C[vi, vj] = T.float32(0)
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
'''


def _mm_args():
    rng = np.random.default_rng(0)
    a = rng.uniform(-1, 1, (8, 8)).astype("float32")
    b = rng.uniform(-1, 1, (8, 8)).astype("float32")
    return a, b, np.full((8, 8), 99, "float32")


def test_the_accumulator_is_held_over_the_reduction_loop_and_its_init_runs_before_it():
    after = _func('''
        @T.prim_func
        def matmul(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32"),
                   C: T.Buffer((8, 8), "float32")):
            T.func_attr({"global_symbol": "matmul", "tir.noalias": True})
            for i, j in T.grid(8, 8):
                C_acc = T.decl_buffer((1,), scope="local")
                C_acc[0] = T.float32(0)
                for k in range(8):
                    with T.block("C"):
                        vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                        T.reads(A[vi, vk], B[vk, vj])
                        T.writes()
                        C_acc[0] = C_acc[0] + A[vi, vk] * B[vk, vj]
                C[i, j] = C_acc[0]
    ''')
    mod = PromoteInvariantElements()(IRModule({"matmul": _func(NAIVE)}))
    assert_structural_equal(mod["matmul"], after)


def test_numba_prints_the_held_accumulator_as_a_scalar():
    func = _func(NAIVE)
    src = numba_cpu.build(func, cache=False).source
    body = textwrap.dedent("""\
        C_acc = np.float32(0.0)
        for k in range(8):
            C_acc = C_acc + A_1[i * 8 + k] * B_1[k * 8 + j]
        C_1[i * 8 + j] = C_acc
    """)
    assert textwrap.indent(body, " " * 12) in src
    a, b, c = _mm_args()
    _, _, out = _agree(func, a, b, c)
    np.testing.assert_allclose(out, a @ b, rtol=1e-5, atol=1e-6)


def test_lnumpy_keeps_the_loads_and_stores():
    src = str(generate(_func(NAIVE), LNUMPY))
    assert "_acc" not in src
    assert "C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]" in src


def test_loop_invariant_load_of_the_tiled_matmul_is_read_once():
    func = tile_matmul(_func(NAIVE), 4, 4, 2).mod["main"]
    src = numba_cpu.build(func, cache=False).source
    assert "A_ik = A_1[i_0 * 32 + i_1 * 8 + k_0 * 2 + k_1]" in src
    assert ("C_1[cse_var_2] = C_1[cse_var_2] + A_ik * B_1[k_0 * 16 + k_1 * 8 + cse_var_1 + j_1]"
            in src)  # cse_var_2: C's index, named once
    a, b, c = _mm_args()
    _agree(func, a, b, c)


def _innermost(func) -> For:
    s = func.body
    while not (isinstance(s, For) and not isinstance(s.body, For)):
        s = s.block.body if isinstance(s, BlockRealize) else s.body
    return s


def test_invariant_elements_names_the_buffers():
    loop = _innermost(_func(NAIVE))
    [held] = invariant_elements(loop)
    assert held.buffer.name == "C" and held.written and len(held.nodes) == 3  # init, load, store


ROWS = '''
    @T.prim_func
    def rows(X: T.Buffer((4, 5), "float32")):
        for i, k in T.grid(4, 4):
            with T.block("B"):
                vi, vk = T.axis.remap("SR", [i, k])
                X[vi, 0] = X[vi, 0] + X[vi, {index}]
'''


def _x():
    return np.random.default_rng(1).uniform(-1, 1, (4, 5)).astype("float32")


def test_an_element_also_read_at_an_index_that_may_meet_it_stays_in_memory():
    # X[vi, vk] is X[vi, 0] when vk == 0: a scalar would miss that update
    func = _func(ROWS.format(index="vk"))
    assert _unchanged(func)
    x = _x()
    [out] = _agree(func, x)
    expected = x.copy()
    for i in range(4):
        for k in range(4):
            expected[i, 0] = expected[i, 0] + expected[i, k]
    np.testing.assert_array_equal(out, expected)


def test_an_element_apart_from_the_other_accesses_is_held():
    # X[vi, vk + 1] never is X[vi, 0]
    func = _func(ROWS.format(index="vk + 1"))
    src = numba_cpu.build(func, cache=False).source
    assert "X_acc = X_1[cse_var_1]" in src and "X_acc = X_acc + X_1[i * 5 + k + 1]" in src
    x = _x()
    [out] = _agree(func, x)
    np.testing.assert_allclose(out[:, 0], x[:, 0] + x[:, 1:].sum(axis=1), rtol=1e-6)


def test_a_read_only_element_of_a_buffer_written_where_it_may_be_read_stays_in_memory():
    func = _func('''
        @T.prim_func
        def f(X: T.Buffer((4, 4), "float32")):
            for i, k in T.grid(4, 4):
                with T.block("B"):
                    vi, vk = T.axis.remap("SS", [i, k])
                    X[vi, vk] = X[vi, 0] * T.float32(2)
    ''')
    assert _unchanged(func)
    x = _x()[:, :4].copy()
    [out] = _agree(func, x)
    expected = x.copy()
    expected[:, 0] *= 2
    expected[:, 1:] = expected[:, :1] * 2
    np.testing.assert_array_equal(out, expected)


def test_an_element_accessed_only_under_a_predicate_is_not_read_early():
    # the tail of a split: reading X[vi, 0] before the loop for i_1 == 3 would read row 6
    func = _func('''
        @T.prim_func
        def f(X: T.Buffer((6, 4), "float32"), Y: T.Buffer((6, 4), "float32")):
            for i_0, i_1, k in T.grid(2, 4, 4):
                with T.block("B"):
                    vi = T.axis.spatial(6, i_0 * 4 + i_1)
                    vk = T.axis.spatial(4, k)
                    T.where(i_0 * 4 + i_1 < 6)
                    Y[vi, vk] = X[vi, 0] + T.float32(1)
    ''')
    assert _unchanged(func)
    x = np.random.default_rng(2).uniform(-1, 1, (6, 4)).astype("float32")
    _, out = _agree(func, x, np.zeros((6, 4), "float32"))
    np.testing.assert_array_equal(out, np.repeat(x[:, :1] + 1, 4, axis=1))


def test_parallel_symbolic_and_load_indexed_loops_are_left_alone():
    parallel = _func('''
        @T.prim_func
        def f(A: T.Buffer((4,), "float32"), B: T.Buffer((4, 8), "float32")):
            for i in range(4):
                for j in T.parallel(8):
                    with T.block("B"):
                        vi, vj = T.axis.remap("SS", [i, j])
                        B[vi, vj] = A[vi] * T.float32(2)
    ''')
    symbolic = _func('''
        @T.prim_func
        def f(a: T.handle, b: T.handle):
            n = T.int32()
            A = T.match_buffer(a, (4, n), "float32")
            B = T.match_buffer(b, (4,), "float32")
            for i, k in T.grid(4, n):
                with T.block("B"):
                    vi, vk = T.axis.remap("SR", [i, k])
                    with T.init():
                        B[vi] = T.float32(0)
                    B[vi] = B[vi] + A[vi, vk]
    ''')
    indirect = _func('''
        @T.prim_func
        def f(idx: T.Buffer((4,), "int32"), A: T.Buffer((4, 4), "float32"), B: T.Buffer((4, 4), "float32")):
            for i, k in T.grid(4, 4):
                with T.block("B"):
                    vi, vk = T.axis.remap("SS", [i, k])
                    B[vi, vk] = A[idx[vi], 0] + A[vi, vk]
    ''')
    for func in (parallel, symbolic):
        assert _unchanged(func), func.script()
    src = str(generate(numba_cpu.lower(indirect), NUMBA))
    assert "idx_i = idx[i]" in src  # held: its index does not move with k
    # A[idx[vi], 0] is not (a load in its index); cse_var_1: i * 4 + k, named once
    assert "A_1[idx_i * 4] + A_1[cse_var_1]" in src
    a = np.arange(4, dtype="float32")
    _agree(parallel, a, np.zeros((4, 8), "float32"))
    _agree(symbolic, np.ones((4, 3), "float32"), np.zeros(4, "float32"))
    # a loop over an empty range: nothing is read or written
    _agree(symbolic, np.ones((4, 0), "float32"), np.full(4, 7, "float32"))
    _agree(indirect, np.array([3, 2, 1, 0], "int32"), np.ones((4, 4), "float32"),
           np.zeros((4, 4), "float32"))


def test_a_value_of_another_dtype_held_in_a_scalar_is_converted_as_a_store_would():
    func = _func('''
        @T.prim_func
        def f(A: T.Buffer((4, 4), "float32"), B: T.Buffer((4,), "int32")):
            for i, k in T.grid(4, 4):
                with T.block("B"):
                    vi, vk = T.axis.remap("SR", [i, k])
                    with T.init():
                        B[vi] = 0
                    B[vi] = B[vi] + T.Cast("int32", A[vi, vk])
    ''')
    src = numba_cpu.build(func, cache=False).source
    assert "B_acc = np.int32(0)" in src  # the init, before the loop, typed as B
    a = np.random.default_rng(3).uniform(-5, 5, (4, 4)).astype("float32")
    _, out = _agree(func, a, np.zeros(4, "int32"))
    np.testing.assert_array_equal(out, a.astype("int32").sum(axis=1))


# -- T.init() before the loop ----------------------------------------------------------------
TWO_REDUCTIONS = '''
    @T.prim_func
    def f(A: T.Buffer((4, 3, 5), "float32"), C: T.Buffer((4,), "float32")):
        for i, r, k in T.grid(4, 3, 5):
            with T.block("C"):
                vi, vr, vk = T.axis.remap("SRR", [i, r, k])
                with T.init():
                    C[vi] = T.float32(-1)
                C[vi] = C[vi] + A[vi, vr, vk]
'''



def test_init_before_the_loop_is_guarded_by_the_outer_reduction_iterators():
    # the init runs when r == 0 and k == 0: before the loop over k, when r == 0
    func = _func(TWO_REDUCTIONS)
    src = numba_cpu.build(func, cache=False).source
    body = textwrap.dedent("""\
        C_acc = C[i]
        if r == 0:
            C_acc = np.float32(-1.0)
        for k in range(5):
    """)
    assert textwrap.indent(body, " " * 12) in src
    assert "if vr == 0" not in src and "if vk == 0" not in src
    a = np.random.default_rng(2).uniform(-1, 1, (4, 3, 5)).astype("float32")
    [_, out] = _agree(func, a, np.full(4, 99, "float32"))
    np.testing.assert_allclose(out, a.sum(axis=(1, 2)) - 1, rtol=1e-5, atol=1e-5)


def test_init_stays_in_the_loop_when_the_reduction_iterator_is_not_the_loop_variable():
    # after split, vk = k_0 * 4 + k_1: the init runs in the first k_1 of the first k_0 only
    sch = tir.Schedule(_func(NAIVE))
    _, _, k = sch.get_loops(sch.get_block("C"))
    sch.split(k, [None, 4])
    func = sch.mod["main"]
    src = numba_cpu.build(func, cache=False).source
    assert "C_acc = C_acc + " in src and "if cse_var_2 + k_1 == 0:" in src  # k_0 * 4
    a, b, c = _mm_args()
    _, _, out = _agree(func, a, b, c)
    np.testing.assert_allclose(out, a @ b, rtol=1e-5, atol=1e-6)


def test_init_stays_in_the_loop_under_a_predicate_or_when_it_reads_memory():
    where = NAIVE.replace('vi, vj, vk = T.axis.remap("SSR", [i, j, k])',
                          'vi, vj, vk = T.axis.remap("SSR", [i, j, k])\n'
                          '                T.where(i < 6)')
    reads = NAIVE.replace("C[vi, vj] = T.float32(0)", "C[vi, vj] = A[vi, vj]")
    a, b, c = _mm_args()
    for text, expected in ((where, np.where(np.arange(8)[:, None] < 6, a @ b, c)),
                           (reads, a + a @ b)):
        func = _func(text)
        src = numba_cpu.build(func, cache=False).source
        assert "if k == 0:" in src
        _, _, out = _agree(func, a, b, c)
        np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)


def test_the_init_before_the_loop_is_guarded_by_the_outer_reduction_iterators_in_tir():
    after = _func('''
        @T.prim_func
        def f(A: T.Buffer((4, 3, 5), "float32"), C: T.Buffer((4,), "float32")):
            for i, r in T.grid(4, 3):
                C_acc = T.decl_buffer((1,), scope="local")
                C_acc[0] = C[i]
                if r == 0:
                    C_acc[0] = T.float32(-1)
                for k in range(5):
                    with T.block("C"):
                        vi, vr, vk = T.axis.remap("SRR", [i, r, k])
                        T.reads(A[vi, vr, vk])
                        T.writes()
                        C_acc[0] = C_acc[0] + A[vi, vr, vk]
                C[i] = C_acc[0]
    ''')
    assert_structural_equal(promote_invariant_elements(_func(TWO_REDUCTIONS)), after)


def test_a_read_only_element_is_loaded_once_before_the_loop_in_tir():
    before = _func('''
        @T.prim_func
        def f(A: T.Buffer((4,), "float32"), B: T.Buffer((4, 8), "float32")):
            for i, j in T.grid(4, 8):
                with T.block("B"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    B[vi, vj] = A[vi] * T.float32(2)
    ''')
    after = _func('''
        @T.prim_func
        def f(A: T.Buffer((4,), "float32"), B: T.Buffer((4, 8), "float32")):
            for i in range(4):
                A_i = T.decl_buffer((1,), scope="local")
                A_i[0] = A[i]
                for j in range(8):
                    with T.block("B"):
                        vi, vj = T.axis.remap("SS", [i, j])
                        T.reads()
                        T.writes(B[vi, vj])
                        B[vi, vj] = A_i[0] * T.float32(2)
    ''')
    assert_structural_equal(promote_invariant_elements(before), after)
    a = np.arange(4, dtype="float32")
    _, out = _agree(before, a, np.zeros((4, 8), "float32"))
    np.testing.assert_array_equal(out, np.repeat(a[:, None] * 2, 8, axis=1))


@T.prim_func
def vector_rows(A: T.Buffer((16,), "float32"), B: T.Buffer((128,), "float32"),
                C: T.Buffer((128,), "float32")):
    T.func_attr({"tir.noalias": True})
    for i, k in T.grid(4, 4):
        # C's row and B's row are vectors (T.Ramp): 32 elements each, not one
        C[i * 32:i * 32 + 32] = (C[T.Ramp(i * 32, 1, 32)]
                                 + T.Broadcast(A[i * 4 + k], 32) * B[T.Ramp(k * 32, 1, 32)])


def test_a_vector_access_is_a_row_of_elements_and_is_not_held_in_one():
    after = PromoteInvariantElements()(IRModule({"main": vector_rows}))
    assert_structural_equal(after["main"], vector_rows)
    rng = np.random.default_rng(0)
    a, b = rng.random(16, dtype="float32"), rng.random(128, dtype="float32")
    c = np.zeros(128, "float32")
    numba_cpu.build(vector_rows, cache=False)(a, b, c)
    np.testing.assert_allclose(c.reshape(4, 32), a.reshape(4, 4) @ b.reshape(4, 32), rtol=1e-5)
