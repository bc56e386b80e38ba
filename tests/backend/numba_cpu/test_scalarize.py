"""numba_cpu: a small "local" tile whose indices are constant once unrolled becomes scalars
(the pass ScalarizeLocalBuffers splits it into one-element buffers, printed as scalars)."""

from __future__ import annotations

import numpy as np

from mlckit.backend import lnumpy, numba_cpu
from mlckit.backend.codegen import generate
from mlckit.script import tir as T
from mlckit.tir.transform import compact_buffer_allocation

from ...tir.transform.test_compact_buffer_allocation import blocked


def _check(func):
    rng = np.random.default_rng(1)
    a = rng.uniform(-1, 1, (16, 16)).astype("float32")
    b = rng.uniform(-1, 1, (16, 16)).astype("float32")
    for build in (lnumpy.build, lambda f: numba_cpu.build(f, cache=False)):
        c = np.zeros((16, 16), "float32")
        build(func)(a, b, c)
        np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5)


def test_unrolled_local_tile_becomes_scalar_variables():
    func = blocked(packed=True)
    f = numba_cpu.build(func, cache=False)
    src = f.source
    assert '# C_local_0_0 ... C_local_1_7: one-element "local" buffers, held in scalars' in src
    assert "C_local_1_7 = np.float32(0.0)" in src
    # the unrolled copies' loop variables are constants, folded into the indices by Simplify
    assert "j_1 = 7\n" not in src
    # the indices each loop body repeats are named once (CommonSubexprElimTIR)
    assert "cse_var_2 = k + 112\n" in src and "cse_var_10 = cse_var_9 + 16\n" in src
    assert "C_local_1_7 = C_local_1_7 + A_1[cse_var_10] * B_global[cse_var_2]" in src
    assert "cse_var_1 = i_0 * 32 + j_0 * 8\n" in src and "C_1[cse_var_1] = C_local_0_0" in src
    assert "C_local = workspace_alloc" not in src and "C_local[" not in src
    assert 'B_global = workspace_alloc((128,), np.float32)' in src  # compacted, then flat
    _check(func)


def test_float_constant_stored_to_a_scalar_is_typed():
    src = numba_cpu.build(blocked(packed=True), cache=False).source
    assert "C_local_0_0 = np.float32(0.0)" in src


def test_tile_with_a_serial_loop_stays_an_array():
    # blocked() without packing: the tile's loops are serial, so its indices are not constants
    src = numba_cpu.build(blocked(), cache=False).source
    assert 'C_local = workspace_alloc((16,), np.float32)' in src  # 2 x 8, flat
    # A held over j_1
    assert "cse_var_1 = i_1 * 8 + j_1\n" in src  # the tile's index, named once
    assert "C_local[cse_var_1] = C_local[cse_var_1] + A_ik * B_1[k * 16 + j_0 * 8 + j_1]" in src
    _check(blocked())


def test_lnumpy_keeps_arrays():
    src = str(generate(compact_buffer_allocation(blocked(packed=True))))
    assert "C_local[i_1, j_1]" in src
    assert "C_local_0_0" not in src


def test_a_tile_allocated_outside_a_parallel_loop_becomes_private_scalars():
    @T.prim_func
    def f(A: T.Buffer((4, 2), "float32"), B: T.Buffer((4, 2), "float32")):
        t = T.alloc_buffer((2,), "float32", scope="local")
        for i in T.parallel(4):
            for j in T.unroll(2):
                with T.block("t"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    t[vj] = A[vi, vj] * T.float32(2)
            for j in T.unroll(2):
                with T.block("b"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    B[vi, vj] = t[vj]

    # t is allocated at the root: scalars there would be shared by the prange's iterations;
    # the numba backend first moves it into the parallel loop, where scalars are private
    built = numba_cpu.build(f, cache=False)
    assert ("    for i in prange(4):\n"
            '        # t_0, t_1: one-element "local" buffers, held in scalars\n'
            "        t_0 = A[i, 0] * np.float32(2.0)\n") in built.source
    a = np.arange(8, dtype="float32").reshape(4, 2)
    b = np.zeros((4, 2), "float32")
    built(a, b)
    np.testing.assert_array_equal(b, a * 2)


@T.prim_func
def row_max(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4,), "float32")):
    for i in range(4):
        m = T.decl_buffer((1,), "float32", scope="local")
        m[0] = T.float32(-1e30)
        for k in range(8):
            m[0] = T.max(m[0], A[i, k])
        B[i] = m[0]


def test_a_one_element_local_buffer_is_printed_as_a_scalar():
    src = numba_cpu.build(row_max, cache=False).source
    body = (
        "        m = np.float32(-1e+30)\n"
        "        for k in range(8):\n"
        "            m = max(m, A_1[i * 8 + k])\n"
        "        B[i] = m\n"
    )
    assert body in src
    assert '# m: a one-element "local" buffer, held in a scalar' in src
    assert "np.empty" not in src and "workspace_alloc" not in src
    a = np.random.default_rng(4).uniform(-1, 1, (4, 8)).astype("float32")
    for build in (lnumpy.build, lambda f: numba_cpu.build(f, cache=False)):
        b = np.zeros(4, "float32")
        build(row_max)(a, b)
        np.testing.assert_array_equal(b, a.max(axis=1))
