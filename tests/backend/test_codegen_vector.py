"""numba flavour: a ``T.vectorized`` loop, made a vector store by VectorizeLoop in the lowered
TIR, is written lane by lane where it is not LLVM vectors (numba_cuda, and numba_cpu for
what ``codegen_vector_llvm`` leaves: tests/backend/numba_cpu/test_vectors.py): every lane
read before any is written, the index parts the lanes share named once, and LLVM turns the
lanes into vector instructions; lanes whose accesses interfere get the vector store's
result, as TVM's; lnumpy keeps the loop, and refuses one whose lanes interfere (it would
run them one after another)."""

from __future__ import annotations

import dataclasses
import re
import textwrap

import numpy as np
import pytest

from mlckit.backend import lnumpy, numba_cpu
from mlckit.backend.codegen import LNUMPY, NUMBA, CodegenError, generate
from mlckit.script import from_source

from ..kernels import tile_matmul

MATMUL = textwrap.dedent('''
    @T.prim_func
    def matmul(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32"),
               C: T.Buffer((64, 64), "float32")):
        T.func_attr({"global_symbol": "matmul", "tir.noalias": True})
        for i, j, k in T.grid(64, 64, 64):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    C[vi, vj] = T.float32(0)
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
''')


# numba_cpu's printing with every vector store written lane by lane
LANES = dataclasses.replace(NUMBA, llvm_vectors=False)


def lanes_source(func) -> str:
    return str(generate(numba_cpu.lower(func), LANES))


def tutorial_schedule(vectorize=True):
    """The course's / TVM tutorial's matmul schedule (tiles of 8 here)."""
    return tile_matmul(from_source(MATMUL), 8, 8, 4, vectorize=vectorize, unroll=True).mod["main"]


def _run(func):
    rng = np.random.default_rng(0)
    a = rng.uniform(-1, 1, (64, 64)).astype("float32")
    b = rng.uniform(-1, 1, (64, 64)).astype("float32")
    results = []
    for build in (lnumpy.build, lambda f: numba_cpu.build(f, cache=False)):
        c = np.full((64, 64), 99, "float32")
        build(func)(a, b, c)
        results.append(c)
    return a @ b, results


def test_vectorized_loop_is_written_as_lanes():
    src = lanes_source(tutorial_schedule())
    assert "# a vector store of 8 lanes: each computed before any is stored" in src
    assert "C_i = i_0 * 8 + i_1\n" in src and "C_j = j_0 * 8\n" in src
    assert "A_e = A[i_0 * 8 + i_1, k_0 * 4]  # the same element in every lane" in src  # read once
    assert "C_v0 = C[C_i, C_j] + A_e * B[B_i, C_j]" in src
    assert "C_v7 = C[C_i, C_j + 7] + A_e * B[B_i, C_j + 7]" in src
    # every lane read before any is written
    assert src.index("C_v7 = ") < src.index("C[C_i, C_j] = C_v0")
    assert "C[C_i, C_j + 7] = 0.0" in src  # the init stores directly: nothing to read


def test_lanes_give_numpys_result():
    expected, results = _run(tutorial_schedule())
    for c in results:
        np.testing.assert_allclose(c, expected, rtol=1e-5, atol=1e-5)


def test_lanes_become_vector_instructions():
    f = numba_cpu.build(tutorial_schedule(), cache=False)
    llvm = f.dispatcher.inspect_llvm(f.dispatcher.signatures[0])
    assert re.search(r"fmul <\d+ x float>", llvm)
    assert re.search(r"fadd <\d+ x float>", llvm)


def test_serial_loop_is_not_written_as_lanes():
    src = numba_cpu.build(tutorial_schedule(vectorize=False), cache=False).source
    assert "lanes" not in src and "for j_1 in range(8):" in src


def test_lnumpy_keeps_the_vectorized_loop():
    src = str(generate(tutorial_schedule(), LNUMPY))
    assert "for j_1 in range(8):  # T.vectorized" in src and "lane" not in src


SHIFT = textwrap.dedent('''
    @T.prim_func
    def shift(A: T.Buffer((8,), "float32")):
        for j in T.vectorized(7):
            with T.block("s"):
                vj = T.axis.spatial(7, j)
                A[vj + 1] = A[vj] * T.float32(2)
''')

SAME_ELEMENT = textwrap.dedent('''
    @T.prim_func
    def total(A: T.Buffer((8,), "float32"), B: T.Buffer((1,), "float32")):
        for j in T.vectorized(8):
            with T.block("s"):
                vj = T.axis.spatial(8, j)
                B[0] = B[0] + A[vj]
''')


def test_lanes_that_read_another_lanes_element_read_before_any_is_written():
    # A[j + 1] = A[j] * 2 vectorized is one vector store: every lane reads A before any
    # lane writes it (TVM 0.27 computes [1, 2, 4, 6, 8, 10, 12, 14]); lnumpy, which runs the
    # lanes one after another, refuses it rather than give the sequential result
    func = from_source(SHIFT)
    src = lanes_source(func)
    assert src.index("A_v6 = A[6] * np.float32(2.0)") < src.index("A[1] = A_v0")
    a = np.arange(1, 9, dtype="float32")
    out = a.copy()
    numba_cpu.build(func, cache=False)(out)
    np.testing.assert_array_equal(out, [1, 2, 4, 6, 8, 10, 12, 14])
    with pytest.raises(CodegenError, match=r"lnumpy cannot run shift: in the T.vectorized "
                       r"loop 'j', a lane reads A\[j\], an element another lane writes "
                       r"\(A\[j \+ 1\]\): TVM reads every lane before any writes"):
        lnumpy.build(func)


def test_lanes_that_write_one_element_leave_the_last_lanes_value():
    # B[0] = B[0] + A[j] vectorized: every lane reads the old B[0], the last lane's store
    # stays (TVM 0.27: 1 + A[7])
    func = from_source(SAME_ELEMENT)
    a = np.arange(8, dtype="float32")
    b = np.ones(1, "float32")
    numba_cpu.build(func, cache=False)(a, b)
    np.testing.assert_array_equal(b, [1 + a[7]])
    with pytest.raises(CodegenError, match=r"every lane writes B\[0\]: TVM keeps the last "
                       r"lane's value, and lnumpy runs a T.vectorized loop one lane after"):
        lnumpy.build(func)


# -- lanes in chunks ---------------------------------------------------------------------------
def wide_schedule(dtype="float32"):
    """The tutorial schedule with j split by 32: 32 lanes."""
    func = from_source(MATMUL.replace('"float32"', f'"{dtype}"')
                       .replace("T.float32(0)", f"T.{dtype}(0)"))
    return tile_matmul(func, 8, 32, 4, vectorize=True).mod["main"]


def test_more_lanes_than_a_vector_register_are_written_in_chunks():
    # 32 float32 lanes: 2 chunks of 16 (64 bytes) in a loop, a third of the compile time
    f = numba_cpu.build(wide_schedule(), cache=False)
    src = lanes_source(wide_schedule())
    assert ("# a vector store of 32 lanes as 2 chunks of 16: each lane reads only the "
            "element it writes") in src
    assert "for C_chunk in range(2):" in src
    assert "C_j = j_0 * 32 + C_chunk * 16\n" in src
    assert "C_v15 = C[C_i, C_j + 15] + A_e * B[B_i, C_j + 15]" in src and "C_v16" not in src
    llvm = f.dispatcher.inspect_llvm(f.dispatcher.signatures[0])
    assert re.search(r"fmul <\d+ x float>", llvm)
    expected, (ln, nb) = _run(wide_schedule())
    np.testing.assert_array_equal(nb, ln)  # the same float32 operations in the same order
    np.testing.assert_allclose(nb, expected, rtol=1e-5, atol=1e-5)


def test_chunks_hold_64_bytes_of_the_widest_dtype():
    src = lanes_source(wide_schedule("float64"))
    assert "# a vector store of 32 lanes as 4 chunks of 8" in src


def test_a_vectorized_local_buffer_stays_an_array_written_in_chunks():
    # ScalarizeLocalBuffers splits a buffer indexed by constants; a vectorized loop's index
    # is a T.Ramp, so t stays one array
    func = from_source(textwrap.dedent('''
        @T.prim_func
        def f(A: T.Buffer((4, 32), "float32"), B: T.Buffer((4, 32), "float32")):
            for i in range(4):
                with T.block("row"):
                    vi = T.axis.spatial(4, i)
                    t = T.alloc_buffer((32,), "float32", scope="local")
                    for j in T.vectorized(32):
                        with T.block("t"):
                            vj = T.axis.spatial(32, j)
                            t[vj] = A[vi, vj] * T.float32(2)
                    for j in T.vectorized(32):
                        with T.block("b"):
                            vj = T.axis.spatial(32, j)
                            B[vi, vj] = t[vj] + T.float32(1)
    '''))
    f = numba_cpu.build(func, cache=False)
    assert 't = workspace_alloc((32,), np.float32)' in f.source
    assert "for t_chunk in range(2):" in lanes_source(func) and "t_31" not in lanes_source(func)
    a = np.random.default_rng(0).uniform(-1, 1, (4, 32)).astype("float32")
    b = np.zeros_like(a)
    f(a, b)
    np.testing.assert_array_equal(b, a * 2 + 1)


TILE_2D = textwrap.dedent('''
    @T.prim_func
    def f(A: T.Buffer((32, 64), "float32"), B: T.Buffer((32, 64), "float32")):
        for i_0, j_0 in T.grid(2, 16):
            for i_1_j_1_fused in T.vectorized(64):
                with T.block("b"):
                    vi = T.axis.spatial(32, i_0 * 16 + i_1_j_1_fused // 4)
                    vj = T.axis.spatial(64, j_0 * 4 + i_1_j_1_fused % 4)
                    B[vi, vj] = B[vi, vj] + A[vi, vj] * T.float32(2)
''')


def test_a_vectorized_tile_of_rows_is_written_in_chunks_of_whole_rows():
    # a fused 16 x 4 tile: lane r writes B's element (r // 4, r % 4) of the tile, 64 distinct
    # elements; a chunk of 16 lanes is 4 rows, its index one base plus constants
    f = numba_cpu.build(from_source(TILE_2D), cache=False)
    src = lanes_source(from_source(TILE_2D))
    assert "# a vector store of 64 lanes as 4 chunks of 16" in src
    assert "for B_chunk in range(4):" in src
    assert "B_i = B_chunk * 4 + i_0 * 16\n" in src
    assert "B_v15 = B[B_i + 3, B_j + 3] + A[B_i + 3, B_j + 3] * np.float32(2.0)" in src
    rng = np.random.default_rng(0)
    a, b = (rng.uniform(-1, 1, (32, 64)).astype("float32") for _ in range(2))
    out = b.copy()
    f(a, out)
    np.testing.assert_array_equal(out, b + a * np.float32(2))
