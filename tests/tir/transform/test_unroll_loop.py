"""UnrollLoop and Simplify after it: the course's unrolled j_1 written out (checked against
TVM 0.27's UnrollLoop and StmtSimplify output for the scheduled mm_relu)."""

from __future__ import annotations

import pytest

import mlckit as tvm
from mlckit.script import tir as T

from ._mm import check_numbers


@T.prim_func
def before(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
    T.func_attr({"global_symbol": "f"})
    for k in range(16):
        for j_1 in T.unroll(4):
            B[k * 4 + j_1] = A[k * 4 + j_1] * T.float32(2)


def test_each_iteration_becomes_a_copy_with_the_value_substituted():
    @T.prim_func
    def expected(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
        T.func_attr({"global_symbol": "f"})
        for k in range(16):
            B[T.Add(k * 4, 0)] = A[T.Add(k * 4, 0)] * T.float32(2)
            B[k * 4 + 1] = A[k * 4 + 1] * T.float32(2)
            B[k * 4 + 2] = A[k * 4 + 2] * T.float32(2)
            B[k * 4 + 3] = A[k * 4 + 3] * T.float32(2)

    after = tvm.tir.transform.UnrollLoop()(tvm.IRModule({"f": before}))
    tvm.ir.assert_structural_equal(after["f"], expected)


def test_simplify_removes_the_added_zero():
    @T.prim_func
    def expected(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
        T.func_attr({"global_symbol": "f"})
        for k in range(16):
            B[k * 4] = A[k * 4] * T.float32(2)
            B[k * 4 + 1] = A[k * 4 + 1] * T.float32(2)
            B[k * 4 + 2] = A[k * 4 + 2] * T.float32(2)
            B[k * 4 + 3] = A[k * 4 + 3] * T.float32(2)

    seq = tvm.transform.Sequential([tvm.tir.transform.UnrollLoop(),
                                    tvm.tir.transform.Simplify()])
    tvm.ir.assert_structural_equal(seq(tvm.IRModule({"f": before}))["f"], expected)


def test_inner_definitions_are_renewed_in_each_copy():
    @T.prim_func
    def nested(A: T.Buffer((2, 3), "float32")):
        for i in T.unroll(2):
            for j in range(3):
                A[i, j] = T.float32(1)

    after = tvm.tir.transform.UnrollLoop()(tvm.IRModule({"f": nested}))["f"]
    first, second = after.body.seq
    assert first.loop_var is not second.loop_var  # each copy defines its own j
    assert after.script().endswith("    for j in range(3):\n        A[0, j] = T.float32(1.0)\n"
                                   "    for j in range(3):\n        A[1, j] = T.float32(1.0)")


def test_unrolled_lowered_kernel_still_computes_mm_relu():
    from ._mm import scheduled

    check_numbers(tvm.lower(scheduled())["mm_relu"])


# -- the tir.UnrollLoop config (each expected output checked against TVM 0.27's UnrollLoop) ----
@T.prim_func
def two_by_four(A: T.Buffer((2, 4), "float32")):
    for i in range(2):
        for j in range(4):
            A[i, j] = T.float32(1)


def unrolled_with(config, func=two_by_four):
    with tvm.transform.PassContext(config={"tir.UnrollLoop": config}):
        return tvm.tir.transform.UnrollLoop()(tvm.IRModule({"main": func}))["main"]


@T.prim_func
def two_by_four_written_out(A: T.Buffer((2, 4), "float32")):
    A[0, 0] = T.float32(1)
    A[0, 1] = T.float32(1)
    A[0, 2] = T.float32(1)
    A[0, 3] = T.float32(1)
    A[1, 0] = T.float32(1)
    A[1, 1] = T.float32(1)
    A[1, 2] = T.float32(1)
    A[1, 3] = T.float32(1)


@T.prim_func
def inner_written_out(A: T.Buffer((2, 4), "float32")):
    for i in range(2):
        A[i, 0] = T.float32(1)
        A[i, 1] = T.float32(1)
        A[i, 2] = T.float32(1)
        A[i, 3] = T.float32(1)


def assert_same_body(after, expected):
    """Equal but for the name: each expected function here has its own."""
    tvm.ir.assert_structural_equal(after.without_attr("global_symbol"),
                                   expected.without_attr("global_symbol"))


def test_serial_loops_are_kept_by_default():
    assert_same_body(unrolled_with({}), two_by_four)


def test_auto_max_step_unrolls_a_nest_running_at_most_that_many_statements():
    assert_same_body(unrolled_with({"auto_max_step": 8}), two_by_four_written_out)


def test_auto_max_step_too_small_for_the_nest_unrolls_the_inner_loop_only():
    assert_same_body(unrolled_with({"auto_max_step": 4}), inner_written_out)


def test_explicit_unroll_false_only_marks_the_loops():
    @T.prim_func
    def expected(A: T.Buffer((2, 4), "float32")):
        for i in T.unroll(2):
            for j in T.unroll(4):
                A[i, j] = T.float32(1)

    after = unrolled_with({"auto_max_step": 8, "explicit_unroll": False})
    assert_same_body(after, expected)


def test_auto_max_extent_unrolls_short_loops_whatever_their_steps():
    assert_same_body(unrolled_with({"auto_max_extent": 4}), two_by_four_written_out)


def test_auto_max_depth_limits_how_many_unrolled_loops_nest():
    after = unrolled_with({"auto_max_step": 8, "auto_max_depth": 0})
    assert_same_body(after, inner_written_out)


def test_pragma_auto_unroll_max_step_sets_the_step_limit_inside_and_goes():
    @T.prim_func
    def before(A: T.Buffer((8,), "float32")):
        T.attr(0, "pragma_auto_unroll_max_step", 4)
        for j in range(4):
            A[j] = T.float32(1)
        for k in range(2, 4):
            A[k + 4] = T.float32(2)

    @T.prim_func
    def expected(A: T.Buffer((8,), "float32")):
        A[0] = T.float32(1)
        A[1] = T.float32(1)
        A[2] = T.float32(1)
        A[3] = T.float32(1)
        A[T.Add(2, 4)] = T.float32(2)
        A[T.Add(3, 4)] = T.float32(2)

    assert_same_body(unrolled_with({}, before), expected)


def test_unroll_local_access_unrolls_loops_indexing_local_memory():
    @T.prim_func
    def before(A: T.Buffer((4,), "float32")):
        r_data = T.allocate([4], "float32", scope="local")
        r = T.Buffer([4], "float32", data=r_data)
        for i in range(4):
            r[i] = A[i]
        for i in range(4):
            A[i] = r[3 - i]

    @T.prim_func
    def expected(A: T.Buffer((4,), "float32")):
        r_data = T.allocate([4], "float32", scope="local")
        r = T.Buffer([4], "float32", data=r_data)
        r[0] = A[0]
        r[1] = A[1]
        r[2] = A[2]
        r[3] = A[3]
        A[0] = r[T.Sub(3, 0)]
        A[1] = r[T.Sub(3, 1)]
        A[2] = r[T.Sub(3, 2)]
        A[3] = r[T.Sub(3, 3)]

    assert_same_body(unrolled_with({"unroll_local_access": True}, before),
                                   expected)
    assert_same_body(unrolled_with({}, before), before)


def test_a_symbolic_unroll_loop_is_a_clear_error():
    @T.prim_func
    def before(A: T.Buffer((8,), "float32"), n: T.int32):
        for i in T.unroll(n):
            A[i] = T.float32(0)

    with pytest.raises(tvm.error.TVMError, match="Cannot unroll non-constant loop"):
        tvm.tir.transform.UnrollLoop()(tvm.IRModule({"main": before}))


def test_an_unknown_config_field_is_a_clear_error():
    with pytest.raises(tvm.error.TVMError, match="unknown field"):
        unrolled_with({"max_step": 8})
