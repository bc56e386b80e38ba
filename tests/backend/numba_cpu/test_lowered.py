"""numba_cpu on lowered TIR: TVM's default TIR pipeline runs before the generator, which then prints loops, flat views, ``T.Ramp`` /
``T.Broadcast`` vectors and unrolled copies as they are; the numbers are NumPy's."""

from __future__ import annotations

import dataclasses
import textwrap

import numpy as np
import pytest

from mlckit.backend import numba_cpu
from mlckit.backend.codegen import NUMBA, generate
from mlckit.error import TVMError
from mlckit.script import from_source
from mlckit.script import tir as T
from mlckit.tir import stmt as S
from mlckit.tir.expr_vector import Ramp
from mlckit.tir.stmt_functor import post_order_visit

from ...kernels import tile_matmul

# numba_cpu's printing with every vector store written lane by lane (numba_cuda's way)
LANES = dataclasses.replace(NUMBA, llvm_vectors=False)

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

ROW_SUM = textwrap.dedent('''
    @T.prim_func
    def row_sum(A: T.Buffer((16, 256), "float32"), S: T.Buffer((16,), "float32")):
        T.func_attr({"global_symbol": "row_sum", "tir.noalias": True})
        for i, k in T.grid(16, 256):
            with T.block("S"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    S[vi] = T.float32(0)
                S[vi] = S[vi] + A[vi, vk]
''')


def _tiled(tj: int, vectorize=True, unroll=True):
    return tile_matmul(from_source(MATMUL), 8, tj, 4, vectorize=vectorize, unroll=unroll).mod["main"]


def _matmul_numbers(func):
    rng = np.random.default_rng(0)
    a = rng.uniform(-1, 1, (64, 64)).astype("float32")
    b = rng.uniform(-1, 1, (64, 64)).astype("float32")
    c = np.zeros((64, 64), "float32")
    numba_cpu.build(func)(a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)


def test_the_lowered_tir_has_no_blocks_and_vectorized_stores_are_ramps():
    func = numba_cpu.lower(_tiled(32))
    kinds = []
    post_order_visit(func.body, lambda n: kinds.append(n))
    assert not any(isinstance(n, S.Block) for n in kinds)
    assert any(isinstance(n, S.BufferStore) and isinstance(n.indices[0], Ramp) for n in kinds)


@pytest.mark.parametrize("tj", [8, 32])
def test_the_lowered_tiled_matmul_computes_a_at_b(tj):
    _matmul_numbers(_tiled(tj))


def test_the_lowered_naive_matmul_computes_a_at_b():
    _matmul_numbers(from_source(MATMUL))


def test_lanes_index_a_parameter_in_its_own_shape_and_one_element_is_read_once():
    src = generate(numba_cpu.lower(_tiled(8, unroll=False)), LANES)
    # C_1[i_0 * 512 + i_1 * 64 + j_0 * 8 + 1] of the flat view, printed as C's element,
    # the row and the first column named once for all lanes
    assert "C_i = i_0 * 8 + i_1\n" in src and "C_j = j_0 * 8\n" in src
    assert "C_v1 = C[C_i, C_j + 1] + A_e * B[B_i, C_j + 1]" in src
    assert "A_e = A[i_0 * 8 + i_1, k_0 * 4 + k_1]  # the same element in every lane" in src
    assert "reshape" not in src  # no flat view is indexed: none is declared


def test_32_float32_lanes_are_stored_as_two_chunks_of_16():
    src = generate(numba_cpu.lower(_tiled(32, unroll=False)), LANES)
    assert ("# a vector store of 32 lanes as 2 chunks of 16: each lane reads only the element "
            "it writes") in src
    assert "for C_chunk in range(2):" in src
    assert "C_j = j_0 * 32 + C_chunk * 16\n" in src
    assert "C[C_i, C_j + 15] = C_v15" in src


def test_lanes_reading_another_lanes_element_are_not_chunked():
    shift = from_source(textwrap.dedent('''
        @T.prim_func
        def shift(A: T.Buffer((33,), "float32")):
            A[T.Ramp(0, 1, 32)] = A[T.Ramp(1, 1, 32)]
    '''))
    src = generate(numba_cpu.lower(shift), NUMBA)
    assert "chunk" not in src
    a = np.arange(33, dtype="float32")
    expected = a.copy()
    expected[:32] = a[1:]
    numba_cpu.NumbaFunction(numba_cpu.lower(shift), "shift", cache=False)(a)
    np.testing.assert_array_equal(a, expected)


def test_a_reduction_init_leaves_the_loop_before_lowering():
    # PromoteInvariantElements runs first: S_acc[0] = 0 before the loop over k, not an
    # `if k == 0` in every iteration as LowerInitBlock alone leaves it
    src = generate(numba_cpu.lower(from_source(ROW_SUM)), NUMBA)
    assert "if k == 0" not in src
    assert "S_acc = np.float32(0.0)" in src


def test_the_lowered_row_sum_computes_numpys_sums():
    a = np.random.default_rng(1).uniform(-1, 1, (16, 256)).astype("float32")
    s = np.zeros(16, "float32")
    numba_cpu.build(from_source(ROW_SUM))(a, s)
    np.testing.assert_allclose(s, a.sum(axis=1), rtol=1e-5)


def test_a_vectorized_float16_kernel_stores_float16_lanes():
    # legalize_half after VectorizeLoop: float16x8 loads and stores become uint16 lanes
    scale = from_source(textwrap.dedent('''
        @T.prim_func
        def scale(A: T.Buffer((64,), "float16"), B: T.Buffer((64,), "float16")):
            T.func_attr({"global_symbol": "scale", "tir.noalias": True})
            for i0 in range(8):
                for i1 in T.vectorized(8):
                    with T.block("B"):
                        vi = T.axis.spatial(64, i0 * 8 + i1)
                        B[vi] = A[vi] * T.float16(0.5) + T.float16(1)
    '''))
    a = np.random.default_rng(2).uniform(-4, 4, 64).astype("float16")
    b = np.zeros(64, "float16")
    numba_cpu.build(scale)(a, b)
    np.testing.assert_array_equal(b, a * np.float16(0.5) + np.float16(1))


def test_a_vectorized_loop_of_symbolic_extent_is_refused_naming_the_loop():
    # as TVM 0.27's tvm.compile: "Failed to vectorize loop with extent n" (an InternalError)
    add_one = from_source(textwrap.dedent('''
        @T.prim_func
        def add_one(a: T.handle, b: T.handle):
            n = T.int32()
            A = T.match_buffer(a, (n,), "float32")
            B = T.match_buffer(b, (n,), "float32")
            for i in T.vectorized(n):
                with T.block("B"):
                    vi = T.axis.spatial(n, i)
                    B[vi] = A[vi] + T.float32(1)
    '''))
    with pytest.raises(TVMError, match=r"extent n .*the loop 'i in T.vectorized\(n\)'"):
        numba_cpu.build(add_one)


def test_the_kernel_is_printed_from_the_lowered_tir_alone():
    """No block iterator is bound: the generator prints what the pipeline left."""
    f = numba_cpu.build(_tiled(8), cache=False)
    assert "vk = " not in f.source and "vi = " not in f.source


def test_two_views_of_one_register_are_one_scalar():
    # StorageRewrite lets `nm` reuse the one-element "local" memory of `rs` (rmsnorm's
    # dlight kernel, run on the CPU): both views print as the same scalar
    @T.prim_func(private=True)
    def shared_register(x: T.Buffer((4,), "float32"), y: T.Buffer((4,), "float32")):
        rs = T.decl_buffer((1,), scope="local")
        nm = T.decl_buffer((1,), data=rs.data, scope="local")
        for i in range(4):
            rs[0] = x[i] * T.float32(2)
            nm[0] = rs[0] + T.float32(1)
            y[i] = nm[0]

    kernel = numba_cpu.build(shared_register, cache=False)
    x, y = np.arange(4, dtype="float32"), np.zeros(4, "float32")
    kernel(x, y)
    np.testing.assert_array_equal(y, x * 2 + 1)
    assert "np.empty" not in kernel.source
