"""numba flavour: parameter buffers of constant shape are indexed through flat views
(``C_flat[vi * 8 + vj]``) outside vector lanes; symbolic shapes, allocated buffers and lanes
keep the 2-D form; lnumpy keeps it everywhere."""

from __future__ import annotations

import textwrap

import numpy as np

from mlckit.backend import lnumpy, numba_cpu
from mlckit.backend.codegen import LNUMPY, NUMBA, generate
from mlckit.script import from_source

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
    assert "    B_flat = B.reshape(-1)\n" in src
    # A has a symbolic size, T2 is allocated here, C is only written by lanes
    assert "T2[vi, vj] = A[vi, vj] + B_flat[vi * 8 + vj]" in src
    assert "C[vi, vj + 7] = C_lane7" in src
    assert "A_flat" not in src and "C_flat" not in src and "T2_flat" not in src
    assert "_flat" not in str(generate(func, LNUMPY))
    rng = np.random.default_rng(0)
    a = rng.uniform(-1, 1, (5, 8)).astype("float32")
    b = rng.uniform(-1, 1, (4, 8)).astype("float32")
    for build in (lnumpy.build, lambda f: numba_cpu.build(f, cache=False)):
        c = np.zeros((4, 8), "float32")
        build(func)(a, b, c)
        np.testing.assert_array_equal(c, (a[:4] + b) * np.float32(2))
