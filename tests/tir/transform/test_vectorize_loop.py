"""VectorizeLoop: T.vectorized loops become Ramp / Broadcast vectors, or serial loops over
the lanes where TVM scalarizes (each expected function checked against TVM 0.27's
VectorizeLoop output); the vector TIR runs in lnumpy and numba_cpu with NumPy's numbers."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mlckit as tvm
from mlckit import tir
from mlckit.backend import lnumpy, numba_cpu
from mlckit.error import InternalError
from mlckit.script import tir as T
from tests.backend.test_differential import _schedule, matmul_schedules

from ._mm import scheduled


def vectorize(func, enable=True):
    return tvm.tir.transform.VectorizeLoop(enable)(tvm.IRModule({"main": func}))["main"]


def run_both(func, *arrays):
    """``func`` run by lnumpy and numba_cpu on copies of ``arrays``: the two results."""
    results = []
    for build in (lnumpy.build, lambda f: numba_cpu.build(f, cache=False)):
        copies = [a.copy() for a in arrays]
        build(func)(*copies)
        results.append(copies)
    return results


@T.prim_func(private=True)
def scale(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    for i in range(4):
        for j in T.vectorized(4):
            B[i * 4 + j] = A[i * 4 + j] * T.float32(2) + T.Cast("float32", j)


def test_the_loop_variable_becomes_a_ramp_and_scalars_broadcasts():
    @T.prim_func(private=True)
    def expected(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
        for i in range(4):
            B[i * 4:i * 4 + 4] = (A[T.Ramp(i * 4, 1, 4)] * T.Broadcast(T.float32(2), 4)
                                  + T.Cast("float32x4", T.Ramp(0, 1, 4)))

    tvm.ir.assert_structural_equal(vectorize(scale), expected)


def test_vectorized_code_computes_what_the_loop_did():
    a = np.random.default_rng(0).random(16, dtype="float32")
    for (_, b) in run_both(vectorize(scale), a, np.zeros(16, "float32")):
        np.testing.assert_allclose(b, a * 2 + np.arange(16) % 4, rtol=1e-6)


def test_lnumpy_writes_slices_and_numba_lanes():
    func = vectorize(scale)
    assert "B[i * 4:i * 4 + 4] = A[i * 4:i * 4 + 4:1] * np.float32(2.0) + np.float32(np.arange(4))" \
        in lnumpy.build(func).source
    source = numba_cpu.build(func, cache=False).source
    # the ramps' base, shared by A's and B's lanes, named once (CommonSubexprElimTIR)
    assert "cse_var_1 = i * 4\n" in source
    assert "B_v1 = A[cse_var_1 + 1] * np.float32(2.0) + np.float32(1)" in source
    assert "B[cse_var_1 + 1] = B_v1" in source


def test_a_stride_multiplies_into_the_ramp():
    @T.prim_func(private=True)
    def before(A: T.Buffer((16,), "float32")):
        for j in T.vectorized(4):
            A[j * 4] = T.float32(1)

    @T.prim_func(private=True)
    def expected(A: T.Buffer((16,), "float32")):
        A[0:16:4] = T.Broadcast(T.float32(1), 4)

    after = vectorize(before)
    tvm.ir.assert_structural_equal(after, expected)
    for (a,) in run_both(after, np.zeros(16, "float32")):
        np.testing.assert_array_equal(a, np.tile([1, 0, 0, 0], 4).astype("float32"))


def test_a_condition_differing_between_lanes_is_scalarized():
    @T.prim_func(private=True)
    def before(A: T.Buffer((8,), "float32"), n: T.int32, x: T.int32):
        for i in T.vectorized(8):
            if x < n:
                A[i] = A[i] + T.float32(1)
            else:
                if i < n:
                    A[i] = T.float32(2)

    @T.prim_func(private=True)
    def expected(A: T.Buffer((8,), "float32"), n: T.int32, x: T.int32):
        if x < n:
            A[0:8] = A[T.Ramp(0, 1, 8)] + T.Broadcast(T.float32(1), 8)
        else:
            for i_s in range(8):
                if i_s < n:
                    A[i_s] = T.float32(2)

    after = vectorize(before)
    tvm.ir.assert_structural_equal(after, expected)
    a = np.arange(8, dtype="float32")
    for fn in (lnumpy.build(after), numba_cpu.build(after, cache=False)):
        b = a.copy()
        fn(b, 3, 5)  # x >= n: the scalar branch
        np.testing.assert_array_equal(b, np.where(np.arange(8) < 3, 2, a))
        fn(b, 3, 1)  # x < n: the vector branch
        np.testing.assert_array_equal(b, np.where(np.arange(8) < 3, 2, a) + 1)


def test_if_then_else_with_a_vector_condition_is_scalarized():
    @T.prim_func(private=True)
    def before(A: T.Buffer((4,), "float32")):
        for i in T.vectorized(4):
            A[i] = T.if_then_else(i > 0, A[i] + T.float32(1), A[i])

    @T.prim_func(private=True)
    def expected(A: T.Buffer((4,), "float32")):
        for i_s in range(4):
            A[i_s] = T.if_then_else(i_s > 0, A[i_s] + T.float32(1), A[i_s])

    tvm.ir.assert_structural_equal(vectorize(before), expected)


def test_if_then_else_with_a_scalar_condition_stays_vector():
    @T.prim_func(private=True)
    def before(A: T.Buffer((16,), "float32"), n: T.int32):
        for i in range(n):
            for j in T.vectorized(4):
                A[i * 4 + j] = T.if_then_else(i > 0, A[i * 4 + j], 0)

    @T.prim_func(private=True)
    def expected(A: T.Buffer((16,), "float32"), n: T.int32):
        for i in range(n):
            A[i * 4:i * 4 + 4] = T.if_then_else(i > 0, A[T.Ramp(i * 4, 1, 4)],
                                                T.Broadcast(T.float32(0), 4))

    after = vectorize(before)
    tvm.ir.assert_structural_equal(after, expected)
    a = np.arange(1, 17, dtype="float32")
    for fn in (lnumpy.build(after), numba_cpu.build(after, cache=False)):
        b = a.copy()
        fn(b, 4)
        np.testing.assert_array_equal(b, np.where(np.arange(16) < 4, 0, a))


def test_a_let_of_a_vector_gets_a_vector_variable():
    @T.prim_func(private=True)
    def before(A: T.Buffer((8,), "float32")):
        for i in T.vectorized(8):
            v = A[i] + T.float32(1)
            A[i] = T.max(v, T.float32(0)) * v

    after = vectorize(before)
    let = after.body
    assert isinstance(let, tir.LetStmt) and let.var.dtype == "float32x8"
    a = np.linspace(-2, 2, 8).astype("float32")
    for (b,) in run_both(after, a):
        np.testing.assert_allclose(b, np.maximum(a + 1, 0) * (a + 1), rtol=1e-6)


@pytest.mark.parametrize("op, numpy_op", [
    (T.Min, np.minimum), (T.Max, np.maximum), (T.Sub, np.subtract),
    (T.FloorDiv, lambda a, b: np.floor(a / b)),
])
def test_binary_operators_become_vector_operators(op, numpy_op):
    @T.prim_func(private=True)
    def before(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
        for j in T.vectorized(8):
            A[j] = op(T.float32(3), B[j])

    @T.prim_func(private=True)
    def expected(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
        A[0:8] = op(T.Broadcast(T.float32(3), 8), B[T.Ramp(0, 1, 8)])

    after = vectorize(before)
    tvm.ir.assert_structural_equal(after, expected)
    b = np.linspace(1, 8, 8).astype("float32")
    for (a, _) in run_both(after, np.zeros(8, "float32"), b):
        np.testing.assert_allclose(a, numpy_op(np.float32(3), b), rtol=1e-6)


def test_select_and_comparisons_become_vectors():
    @T.prim_func(private=True)
    def before(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "int32")):
        for j in T.vectorized(8):
            B[j] = T.Select(A[j] > T.float32(0), 1, 2)

    @T.prim_func(private=True)
    def expected(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "int32")):
        B[0:8] = T.Select(A[T.Ramp(0, 1, 8)] > T.Broadcast(T.float32(0), 8),
                          T.Broadcast(1, 8), T.Broadcast(2, 8))

    after = vectorize(before)
    tvm.ir.assert_structural_equal(after, expected)
    a = np.linspace(-1, 1, 8).astype("float32")
    for (_, b) in run_both(after, a, np.zeros(8, "int32")):
        np.testing.assert_array_equal(b, np.where(a > 0, 1, 2))


def test_reinterpret_keeps_the_bits_of_every_lane():
    @T.prim_func(private=True)
    def before(A: T.Buffer((8,), "int32"), B: T.Buffer((8,), "float32")):
        for i in T.vectorized(8):
            B[i] = T.reinterpret("float32", A[i])

    @T.prim_func(private=True)
    def expected(A: T.Buffer((8,), "int32"), B: T.Buffer((8,), "float32")):
        B[0:8] = T.reinterpret("float32x8", A[T.Ramp(0, 1, 8)])

    tvm.ir.assert_structural_equal(vectorize(before), expected)


def test_disabled_vectorization_makes_the_loops_serial():
    @T.prim_func(private=True)
    def expected(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
        for i, j in T.grid(4, 4):
            B[i * 4 + j] = A[i * 4 + j] * T.float32(2) + T.Cast("float32", j)

    tvm.ir.assert_structural_equal(vectorize(scale, enable=False), expected)


def test_a_symbolic_extent_is_refused_as_tvm_refuses_it():
    @T.prim_func(private=True)
    def before(a: T.handle):
        n = T.int32()
        A = T.match_buffer(a, (n,), "float32")
        for i in T.vectorized(n):
            A[i] = T.float32(0)

    with pytest.raises(InternalError, match="Failed to vectorize loop with extent n"):
        vectorize(before)


def test_a_while_loop_inside_is_refused():
    @T.prim_func(private=True)
    def before(A: T.Buffer((4,), "int32")):
        for i in T.vectorized(4):
            while A[i] < 10:
                A[i] = A[i] + 1

    with pytest.raises(InternalError, match="A while loop inside a vectorized loop"):
        vectorize(before)


def test_the_pass_is_in_the_default_pipeline_after_flatten_buffer():
    names = [p.info.name for p in tvm.tir.get_tir_pipeline("default")]
    assert names.index("FlattenBuffer") < names.index("VectorizeLoop") < names.index("UnrollLoop")


def test_the_course_mm_relu_relu_becomes_one_vector_store():
    last = tvm.lower(scheduled())["mm_relu"].script().splitlines()[-1].strip()
    # Y's name depends on where the allocation planning puts it (Y or Y_1)
    assert last.startswith("C_1[i * 128 + j_0 * 4:i * 128 + j_0 * 4 + 4] = T.max(Y")
    assert last.endswith("[T.Ramp(0, 1, 4)], T.Broadcast(T.float32(0.0), 4))")


# -- random vectorized element-wise kernels through lnumpy and numba ------------------------
_OPS = {"add": (lambda a, b: a + b, np.add), "mul": (lambda a, b: a * b, np.multiply),
        "max": (T.max, np.maximum), "min": (T.min, np.minimum),
        "sub": (lambda a, b: a - b, np.subtract)}


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(op=st.sampled_from(sorted(_OPS)), lanes=st.sampled_from([2, 4, 8]),
       stride=st.sampled_from([1, 2]), const=st.floats(-2, 2, width=32))
def test_random_vectorized_kernels_agree_with_numpy(op, lanes, stride, const):
    build, numpy_op = _OPS[op]
    n = 4 * lanes * stride
    c = T.float32(const)

    @T.prim_func(private=True)
    def before(A: T.Buffer((n,), "float32"), B: T.Buffer((n,), "float32")):
        for i in range(4):
            for j in T.vectorized(lanes):
                B[i * lanes * stride + j * stride] = build(A[i * lanes * stride + j * stride], c)

    after = vectorize(before)
    assert "T.vectorized" not in after.script()
    a = np.random.default_rng(lanes).random(n, dtype="float32")
    expected = np.zeros(n, "float32")
    expected[::stride] = numpy_op(a[::stride], np.float32(const))
    for (_, b) in run_both(after, a, np.zeros(n, "float32")):
        np.testing.assert_allclose(b, expected, rtol=1e-6)


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(choice=matmul_schedules(), seed=st.integers(0, 2**16))
def test_random_vectorized_matmul_schedules_lowered_agree_with_numpy(choice, seed):
    choice = {**choice, "j1": "vectorize"}  # the inner j loop always vectorized
    m, n, k = choice["sizes"]
    (lowered,) = tvm.lower(_schedule(choice)).functions.values()
    assert "T.vectorized" not in lowered.script()
    rng = np.random.default_rng(seed)
    a = rng.uniform(-1, 1, (m, k)).astype("float32")
    b = rng.uniform(-1, 1, (k, n)).astype("float32")
    for (_, _, c) in run_both(lowered, a, b, np.full((m, n), 99, "float32")):
        np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5, err_msg=lowered.script())


@T.prim_func(private=True)
def nested_vectorized(A: T.Buffer((3, 3), "float32"), B: T.Buffer((3,), "float32")):
    for i in T.vectorized(3):
        for j in T.vectorized(3):
            A[i, j] = B[j]


@T.prim_func(private=True)
def nested_vectorized_after(A: T.Buffer((3, 3), "float32"), B: T.Buffer((3,), "float32")):
    for i in range(3):
        A[i, 0:3] = B[T.Ramp(0, 1, 3)]


def test_an_outer_vectorized_loop_that_cannot_widen_the_inner_vectors_stays_serial():
    """TVM keeps the inner loop with a warning, then fails in its code generator; mlckit
    vectorizes the inner loop and, when the outer one cannot widen its x3 vectors to x9,
    keeps the outer one serial, with a warning that says so."""
    with pytest.warns(UserWarning, match="'i' holds a vectorized loop .* stays a serial loop"):
        after = vectorize(nested_vectorized)
    tvm.ir.assert_structural_equal(after, nested_vectorized_after)
    b = np.arange(3, dtype="float32")
    for a in run_both(after, np.zeros((3, 3), "float32"), b):
        np.testing.assert_array_equal(a[0], np.tile(b, (3, 1)))
