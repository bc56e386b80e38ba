"""numba_cpu prints the lowered TIR's flat buffers: FlattenBuffer's views of the parameters
(``B_1 = flat_view(B)``, the flat index a sum over loop variables, as TVM's FlattenBuffer
and Simplify write it); in vector lanes and ``prange`` bodies a parameter of constant shape
is indexed in its own shape (``C[i, 7]``: ``codegen_flat.ParamViews``); lnumpy, which
prints the un-lowered PrimFunc, keeps the 2-D form everywhere."""

from __future__ import annotations

import dataclasses
import re
import textwrap

import numpy as np

from mlckit import tir
from mlckit.backend import lnumpy, numba_cpu
from mlckit.backend.codegen import LNUMPY, NUMBA, generate
from mlckit.script import from_source

from ..kernels import tile_matmul
from ..tir.transform.test_promote_invariant_elements import NAIVE

SCALE = textwrap.dedent('''
    @T.prim_func
    def scale(a: T.handle, b: T.handle, c: T.handle):
        n = T.int32()
        A = T.match_buffer(a, (n, 8), "float32")
        B = T.match_buffer(b, (4, 8), "float32")
        C = T.match_buffer(c, (4, 8), "float32")
        T2 = T.alloc_buffer((4, 8), "float32")
        for i, j in T.grid(4, 8):
            with T.block("T"):
                vi, vj = T.axis.remap("SS", [i, j])
                T2[vi, vj] = A[vi, vj] + B[vi, vj]
        for i in range(4):
            for j in T.vectorized(8):
                with T.block("C"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    C[vi, vj] = T2[vi, vj] * T.float32(2)
''')


def test_constant_shape_parameters_are_read_through_flat_views():
    func = from_source(SCALE)
    src = str(generate(numba_cpu.lower(func), NUMBA))
    assert "    A_1 = flat_view(A)\n" in src and "    B_1 = flat_view(B)\n" in src
    assert "reshape" not in src
    # T2 is allocated flat; C is only written by lanes: in its own shape
    assert 'T2 = workspace_alloc((32,), np.float32)' in src
    assert "cse_var_1 = i * 8 + j\n" in src  # the index, named once (CommonSubexprElimTIR)
    assert "T2[cse_var_1] = A_1[cse_var_1] + B_1[cse_var_1]" in src
    # a vector store: LLVM vectors of the flat views (codegen_vector_llvm)
    assert re.search(r"C_1\[ramp\((cse_var_\d), 1, 8\)\] = T2\[ramp\(\1, 1, 8\)\] \* "
                     r"broadcast\(np.float32\(2.0\), 8\)", src)
    lanes = str(generate(numba_cpu.lower(func), dataclasses.replace(NUMBA, llvm_vectors=False)))
    assert "C[i, 7] = C_v7" in lanes and "C_1" not in lanes  # by lanes: in C's own shape
    assert "reshape" not in str(generate(func, LNUMPY))
    rng = np.random.default_rng(0)
    a = rng.uniform(-1, 1, (5, 8)).astype("float32")
    b = rng.uniform(-1, 1, (4, 8)).astype("float32")
    for build in (lnumpy.build, lambda f: numba_cpu.build(f, cache=False)):
        c = np.zeros((4, 8), "float32")
        build(func)(a, b, c)
        np.testing.assert_array_equal(c, (a[:4] + b) * np.float32(2))


FIRST_ROW = textwrap.dedent('''
    @T.prim_func
    def first_row(A: T.Buffer((4, 8), "float32"), B: T.Buffer((8,), "float32")):
        A_1 = T.decl_buffer((8,), "float32", data=A.data)
        for j in range(8):
            B[j] = A_1[j] * T.float32(2)
''')


def test_a_view_of_a_parameters_first_elements_is_a_slice_of_its_flat_view():
    func = from_source(FIRST_ROW)
    src = numba_cpu.build(func, cache=False).source
    assert "    A_1 = flat_view(A)[0:8]\n" in src
    assert "from mlckit.backend.numba_cpu.views import flat_view\n" in src
    a = np.arange(32, dtype="float32").reshape(4, 8)
    b = np.zeros(8, "float32")
    numba_cpu.build(func, cache=False)(a, b)
    np.testing.assert_array_equal(b, a[0] * 2)


def test_a_prange_body_keeps_the_2d_form_and_its_writes():
    # Numba's parallel lowering lost the writes of a body reaching C as C[vi, vj] (the
    # init's lanes) and as C_flat[...] (the update's held element): C stayed all zeros
    sch = tir.Schedule(from_source(textwrap.dedent(NAIVE)))  # 8 x 8 x 8
    block = sch.get_block("C")
    i, j, k = sch.get_loops(block)
    j0, j1 = sch.split(j, [None, 2])
    k0, k1 = sch.split(k, [None, 1])
    sch.reorder(i, j0, k0, j1, k1)
    sch.vectorize(j1)
    sch.parallel(i)
    sch.decompose_reduction(block, k0)
    func = sch.mod["main"]
    f = numba_cpu.build(func, cache=False)
    assert "prange(8)" in f.source and "C_1" not in f.source
    rng = np.random.default_rng(0)
    a, b = (rng.uniform(-1, 1, (8, 8)).astype("float32") for _ in range(2))
    c = np.full((8, 8), 99, "float32")
    f(a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-6)


def test_a_flat_index_is_a_sum_over_loop_variables_largest_stride_first():
    # as TVM's FlattenBuffer + Simplify write it; LLVM then addresses the unrolled j_1
    # copies as one base plus constant offsets
    func = tile_matmul(from_source(textwrap.dedent(NAIVE)), 4, 4, 2).mod["main"]  # 8 x 8 x 8
    src = numba_cpu.build(func, cache=False).source
    # (the index named once by CommonSubexprElimTIR, its part j_0 * 4 shared with B's)
    assert "cse_var_2 = i_0 * 32 + i_1 * 8 + cse_var_1 + j_1\n" in src
    assert ("C_1[cse_var_2] = C_1[cse_var_2] + A_ik * B_1[k_0 * 16 + k_1 * 8 + cse_var_1 + j_1]"
            in src)
    assert "C_1[i_0 * 32 + i_1_init * 8 + j_0 * 4 + j_1_init] = 0.0" in src
    assert re.search(r"\bv[ijk]\b", src) is None  # no block iterators
    rng = np.random.default_rng(0)
    a, b = (rng.uniform(-1, 1, (8, 8)).astype("float32") for _ in range(2))
    for build in (lnumpy.build, lambda f: numba_cpu.build(f, cache=False)):
        c = np.full((8, 8), np.nan, "float32")
        build(func)(a, b, c)
        np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-6)


def test_a_reversed_index_gets_a_negative_stride_and_a_fused_one_divides_the_loop_variable():
    # vi = ij // 8, vj = ij % 8 substituted into the flat index
    func = from_source(textwrap.dedent('''
        @T.prim_func
        def f(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32")):
            for i, j in T.grid(8, 8):
                with T.block("B"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    B[vi, vj] = A[7 - vi, vj] * T.float32(2)
    '''))
    sch = tir.Schedule(func)
    sch.fuse(*sch.get_loops(sch.get_block("B")))
    src = numba_cpu.build(func, cache=False).source
    assert "B_1[cse_var_1 + j] = A_1[j - cse_var_1 + 56] * np.float32(2.0)" in src  # i * 8
    src = numba_cpu.build(sch.mod["main"], cache=False).source
    assert ("B_1[i_j_fused] = A_1[i_j_fused % 8 - i_j_fused // 8 * 8 + 56] * np.float32(2.0)"
            in src)
    a = np.arange(64, dtype="float32").reshape(8, 8)
    for f in (func, sch.mod["main"]):
        b = np.zeros_like(a)
        numba_cpu.build(f, cache=False)(a, b)
        np.testing.assert_array_equal(b, a[::-1] * 2)
