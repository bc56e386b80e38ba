"""CommonSubexprElimTIR: an index computed more than once in a loop body is computed once,
into a ``cse_var`` bound at the top of that body; what the kernel computes is unchanged."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings

import mlckit as tvm
from mlckit.backend import lnumpy
from mlckit.script import tir as T
from mlckit.tir.transform import common_subexpr_elim
from tests.backend.test_differential import _schedule, matmul_schedules
from tests.tir.transform._mm import check_numbers, mm_relu


@T.prim_func
def mm_relu_named(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32"),
                  C: T.Buffer((128, 128), "float32")):
    # tvm.lower(mm_relu), then each loop body's repeated index named once, smallest first
    T.func_attr({"global_symbol": "mm_relu", "tir.noalias": True})
    A_1 = T.Buffer((16384,), data=A.data)
    B_1 = T.Buffer((16384,), data=B.data)
    C_1 = T.Buffer((16384,), data=C.data)
    Y = T.allocate([16384], "float32", "global")
    Y_1 = T.Buffer((16384,), data=Y)
    for i, j, k in T.grid(128, 128, 128):
        cse_var_1: T.int32 = i * 128
        cse_var_2: T.int32 = cse_var_1 + j
        if k == 0:
            Y_1[cse_var_2] = T.float32(0.0)
        Y_1[cse_var_2] = Y_1[cse_var_2] + A_1[cse_var_1 + k] * B_1[k * 128 + j]
    for i, j in T.grid(128, 128):
        cse_var_3: T.int32 = i * 128 + j
        C_1[cse_var_3] = T.max(Y_1[cse_var_3], T.float32(0.0))


def test_each_loop_body_names_its_repeated_indices_once():
    named = common_subexpr_elim(tvm.lower(mm_relu)["mm_relu"])
    tvm.ir.assert_structural_equal(named, mm_relu_named)
    check_numbers(named)


def test_the_pass_runs_on_a_module_under_both_tvm_names():
    mod = tvm.lower(mm_relu)
    for make in (tvm.tir.transform.CommonSubexprElimTIR, tvm.tir.transform.CommonSubexprElim):
        tvm.ir.assert_structural_equal(make()(mod)["mm_relu"], mm_relu_named)


def test_a_function_with_nothing_repeated_is_returned_as_it_is():
    @T.prim_func
    def copy(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
        for i in range(16):
            B[i] = A[i * 2 % 16]

    assert common_subexpr_elim(copy) is copy


@T.prim_func
def guarded(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32"), n: T.int32):
    for i in range(8):
        if n > 0:
            B[i // n + 1] = A[i // n + 1] + A[i // n + 1]
        B[i * 8 + 1] = B[i * 8 + 1] + A[i * 8] * A[i * 8]
        x: T.int32 = i + 1
        B[x * 2] = A[x * 2]


def test_what_could_fail_or_read_memory_or_is_bound_inside_stays():
    @T.prim_func
    def expected(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32"), n: T.int32):
        T.func_attr({"global_symbol": "guarded"})
        for i in range(8):
            cse_var_1: T.int32 = i * 8
            cse_var_2: T.int32 = cse_var_1 + 1
            # i // n: a division by a variable, evaluated only where n > 0
            if n > 0:
                B[i // n + 1] = A[i // n + 1] + A[i // n + 1]
            # a load (A[i * 8]) is read twice: loads are never named
            B[cse_var_2] = B[cse_var_2] + A[cse_var_1] * A[cse_var_1]
            # x * 2 uses x, bound inside the loop body
            x: T.int32 = i + 1
            B[x * 2] = A[x * 2]

    tvm.ir.assert_structural_equal(common_subexpr_elim(guarded), expected)


def test_a_nested_loop_names_in_its_own_body():
    @T.prim_func
    def tiles(A: T.Buffer((32, 32), "float32"), B: T.Buffer((32, 32), "float32")):
        for i in range(4):
            B[i * 8, 0] = A[i * 8, 0]
            for j in range(8):
                B[i * 8 + j, 1] = A[i * 8 + j, 1] * T.float32(2)

    @T.prim_func
    def expected(A: T.Buffer((32, 32), "float32"), B: T.Buffer((32, 32), "float32")):
        T.func_attr({"global_symbol": "tiles"})
        for i in range(4):
            cse_var_1: T.int32 = i * 8
            B[cse_var_1, 0] = A[cse_var_1, 0]
            for j in range(8):
                cse_var_2: T.int32 = i * 8 + j
                B[cse_var_2, 1] = A[cse_var_2, 1] * T.float32(2)

    tvm.ir.assert_structural_equal(common_subexpr_elim(tiles), expected)


def test_a_block_keeps_its_iterators_inside_it():
    @T.prim_func
    def blocked(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
        for i in range(16):
            with T.block("B"):
                vi = T.axis.spatial(16, i)
                B[vi * 3 % 16] = A[vi * 3 % 16]

    named = common_subexpr_elim(blocked)
    assert "cse_var_1: T.int32 = vi * 3 % 16" in named.script()
    a = np.arange(16, dtype="float32")
    b = np.zeros(16, "float32")
    lnumpy.build(named)(a, b)
    np.testing.assert_array_equal(b, a)  # 3 is prime to 16: every element is copied


_SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@_SETTINGS
@given(choice=matmul_schedules())
def test_naming_keeps_what_randomly_scheduled_matmuls_compute(choice):
    m, n, k = choice["sizes"]
    (lowered,) = tvm.lower(_schedule(choice)).functions.values()
    named = common_subexpr_elim(lowered)
    rng = np.random.default_rng(0)
    a = rng.uniform(-1, 1, (m, k)).astype("float32")
    b = rng.uniform(-1, 1, (k, n)).astype("float32")
    c = np.full((m, n), 99, "float32")
    lnumpy.build(named)(a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5, err_msg=named.script())


def test_a_launched_threads_body_names_in_its_own_scope():
    # blockIdx.x binds i at T.launch_thread: an index using it stays below the launch
    from mlckit import tir

    @T.prim_func
    def elementwise(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32")):
        for i, j in T.grid(8, 8):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] * T.float32(2)

    sch = tir.Schedule(elementwise)
    i, j = sch.get_loops(sch.get_block("B"))
    sch.bind(i, "blockIdx.x")
    sch.bind(j, "threadIdx.x")
    (lowered,) = tvm.lower(sch.mod).functions.values()
    named = common_subexpr_elim(lowered)
    script = named.script()
    assert script.index('T.launch_thread("threadIdx.x", 8)') < script.index("cse_var_1")
    a = np.arange(64, dtype="float32").reshape(8, 8)
    b = np.zeros_like(a)
    lnumpy.build(named)(a, b)
    np.testing.assert_array_equal(b, a * 2)
