"""Simplify / StmtSimplify: expressions simplified with the loop ranges known."""

from __future__ import annotations

import pytest

import mlckit as tvm
from mlckit.script import tir as T


def test_a_condition_the_loop_range_decides_keeps_only_its_branch():
    @T.prim_func
    def before(A: T.Buffer((16,), "float32")):
        T.func_attr({"global_symbol": "f"})
        for i in range(16):
            if i < 16:
                A[i] = T.float32(1)
            else:
                A[i] = T.float32(2)

    @T.prim_func
    def expected(A: T.Buffer((16,), "float32")):
        T.func_attr({"global_symbol": "f"})
        for i in range(16):
            A[i] = T.float32(1)

    after = tvm.tir.transform.Simplify()(tvm.IRModule({"f": before}))
    tvm.ir.assert_structural_equal(after["f"], expected)


def test_indices_of_loads_inside_values_are_simplified():
    @T.prim_func
    def before(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
        T.func_attr({"global_symbol": "f"})
        for i in range(16):
            B[i * 1 + 0] = A[i // 1 + 0] + A[(i + 16) % 16]

    @T.prim_func
    def expected(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
        T.func_attr({"global_symbol": "f"})
        for i in range(16):
            B[i] = A[i] + A[i]

    after = tvm.tirx.transform.StmtSimplify()(tvm.IRModule({"f": before}))
    tvm.ir.assert_structural_equal(after["f"], expected)


def test_what_is_simplest_already_is_returned_unchanged():
    @T.prim_func
    def f(A: T.Buffer((16,), "float32")):
        for i in range(16):
            A[i] = T.float32(1)

    assert tvm.tir.transform.Simplify()(tvm.IRModule({"f": f}))["f"] is f


# -- what the enclosing conditions say (constraint scopes) ---------------------------------
def _simplified(func, **options):
    config = {"tir.Simplify": options} if options else {}
    with tvm.transform.PassContext(config=config):
        return tvm.tir.transform.Simplify()(tvm.IRModule({"main": func}))["main"]


def _check(before, expected, **options):
    tvm.ir.assert_structural_equal(_simplified(before, **options), expected)


def test_an_inner_condition_the_outer_one_decides_goes():
    @T.prim_func(private=True)
    def before(A: T.Buffer((16,), "float32")):
        for i in range(16):
            if i == 5:
                if i < 7:
                    A[i] = T.float32(0)

    @T.prim_func(private=True)
    def expected(A: T.Buffer((16,), "float32")):
        for i in range(16):
            if i == 5:
                A[i] = T.float32(0)

    _check(before, expected)


def test_the_else_branch_knows_the_condition_is_false():
    @T.prim_func(private=True)
    def before(A: T.Buffer((16,), "int32"), n: T.int32):
        for i in range(16):
            if i == n:
                A[i] = 0
            elif i == n:
                A[i] = 1
            else:
                A[i] = 2

    @T.prim_func(private=True)
    def expected(A: T.Buffer((16,), "int32"), n: T.int32):
        for i in range(16):
            if i == n:
                A[i] = 0
            else:
                A[i] = 2

    _check(before, expected)


def test_an_or_known_false_makes_each_side_false():
    @T.prim_func(private=True)
    def before(A: T.Buffer((16, 16), "int32"), n: T.int32):
        for i, j in T.grid(16, 16):
            if i == n or j == n:
                A[i, j] = 0
            else:
                if j == n:
                    A[i, j] = 1
                else:
                    A[i, j] = 2

    @T.prim_func(private=True)
    def expected(A: T.Buffer((16, 16), "int32"), n: T.int32):
        for i, j in T.grid(16, 16):
            if i == n or j == n:
                A[i, j] = 0
            else:
                A[i, j] = 2

    _check(before, expected)


def test_a_condition_reading_memory_is_not_trusted_after_a_store():
    @T.prim_func(private=True)
    def before(A: T.Buffer((1,), "int32"), n: T.int32):
        if A[0] == n:
            A[0] = A[0] + 1
            if A[0] == n:
                A[0] = 0

    _check(before, before)


def test_if_then_else_inside_an_if_takes_the_known_branch():
    @T.prim_func(private=True)
    def before(A: T.Buffer((16,), "float32")):
        for i in range(16):
            if i < 12:
                A[i] = T.if_then_else(i < 12, T.float32(1), T.float32(2))

    @T.prim_func(private=True)
    def expected(A: T.Buffer((16,), "float32")):
        for i in range(16):
            if i < 12:
                A[i] = T.float32(1)

    _check(before, expected)


def test_what_is_known_narrows_a_comparison():
    @T.prim_func(private=True)
    def before(A: T.Buffer((2,), "bool"), i: T.int32, j: T.int32):
        if i <= j:
            A[0] = j <= i
            A[1] = i != j

    @T.prim_func(private=True)
    def expected(A: T.Buffer((2,), "bool"), i: T.int32, j: T.int32):
        if i <= j:
            A[0] = j == i
            A[1] = i < j

    _check(before, expected)


def test_an_offset_of_a_known_inequality_is_proven():
    @T.prim_func(private=True)
    def before(A: T.Buffer((1,), "bool"), i: T.int32, j: T.int32):
        if i < j:
            A[0] = i < j + 1

    @T.prim_func(private=True)
    def expected(A: T.Buffer((1,), "bool"), i: T.int32, j: T.int32):
        if i < j:
            A[0] = T.bool(True)

    _check(before, expected)


def test_transitive_inequalities_only_with_the_option():
    @T.prim_func(private=True)
    def before(A: T.Buffer((1,), "bool"), i: T.int32, j: T.int32, k: T.int32):
        if i < j + 5 and j < k + 7:
            A[0] = i < k + 11

    @T.prim_func(private=True)
    def expected(A: T.Buffer((1,), "bool"), i: T.int32, j: T.int32, k: T.int32):
        if i < j + 5 and j < k + 7:
            A[0] = T.bool(True)

    _check(before, before)
    _check(before, expected, transitively_prove_inequalities=True)


def test_a_let_bound_condition_proves_a_branch():
    @T.prim_func(private=True)
    def before(A: T.Buffer((4,), "bool")):
        for i in range(4):
            condition = i < 3
            if i < 3:
                if condition:
                    A[i] = condition

    @T.prim_func(private=True)
    def expected(A: T.Buffer((4,), "bool")):
        for i in range(4):
            condition = i < 3
            if i < 3:
                A[i] = condition

    _check(before, expected)


def test_an_integer_let_is_inlined():
    @T.prim_func(private=True)
    def before(A: T.Buffer((16,), "float32")):
        for i in range(8):
            j = i * 2 + 1
            A[j] = T.float32(0)

    @T.prim_func(private=True)
    def expected(A: T.Buffer((16,), "float32")):
        for i in range(8):
            A[i * 2 + 1] = T.float32(0)

    _check(before, expected)


def test_an_assumption_holds_for_the_statements_after_it_with_the_option():
    @T.prim_func(private=True)
    def before(A: T.Buffer((1,), "int32"), n: T.int32):
        T.evaluate(T.assume(n == 0))
        if n == 0:
            A[0] = 42

    @T.prim_func(private=True)
    def expected(A: T.Buffer((1,), "int32"), n: T.int32):
        T.evaluate(T.assume(n == 0))
        A[0] = 42

    _check(before, before)
    _check(before, expected, propagate_knowns_to_prove_conditional=True)


def test_each_side_of_and_knows_the_other_with_the_option():
    @T.prim_func(private=True)
    def before(A: T.Buffer((2,), "bool"), n: T.int32):
        A[0] = n < 10 and n < 5
        A[1] = n < 5 or n < 10

    @T.prim_func(private=True)
    def expected(A: T.Buffer((2,), "bool"), n: T.int32):
        A[0] = n < 5
        A[1] = n < 10

    _check(before, before)
    _check(before, expected, apply_constraints_to_boolean_branches=True)


def test_a_condition_or_its_negation_holds():
    @T.prim_func(private=True)
    def before(A: T.Buffer((2,), "bool"), n: T.int32):
        A[0] = n < 5 or 5 <= n
        A[1] = n < 5 and 5 <= n

    @T.prim_func(private=True)
    def expected(A: T.Buffer((2,), "bool"), n: T.int32):
        A[0] = T.bool(True)
        A[1] = T.bool(False)

    _check(before, expected)


def test_and_of_ors_with_the_option():
    @T.prim_func(private=True)
    def before(A: T.Buffer((1,), "bool"), i: T.int32, k: T.int32):
        A[0] = (i == 0 or k == 20) and (i == 0 or k != 30)

    @T.prim_func(private=True)
    def expected(A: T.Buffer((1,), "bool"), i: T.int32, k: T.int32):
        A[0] = i == 0 or k == 20

    _check(before, expected, convert_boolean_to_and_of_ors=True)


def test_storing_what_was_just_loaded_is_removed():
    @T.prim_func(private=True)
    def before(A: T.Buffer((2,), "float32")):
        A[0] = A[0] + (T.float32(5) - T.float32(5))
        A[1] = A[0]

    @T.prim_func(private=True)
    def expected(A: T.Buffer((2,), "float32")):
        A[1] = A[0]                     # the no-op is dropped from the sequence, as TVM's

    _check(before, expected)


def test_buffer_shapes_are_not_negative():
    @T.prim_func(private=True)
    def before(a: T.handle):
        n = T.int64()
        A = T.match_buffer(a, (n * 32 - 1,), "float32")
        A[T.min(T.int64(1), n)] = T.float32(0)

    @T.prim_func(private=True)
    def expected(a: T.handle):
        n = T.int64()
        A = T.match_buffer(a, (n * 32 - 1,), "float32")
        A[T.int64(1)] = T.float32(0)

    _check(before, expected)


def test_ceil_log2_and_shift_bounds():
    @T.prim_func(private=True)
    def before(A: T.Buffer((16,), "float32"), B: T.Buffer((1,), "int32")):
        B[0] = T.Cast("int32", T.ceil(T.log2(T.Cast("float64", 14))))
        for i in range(16):
            if T.Cast("int32", T.ceil(T.log2(T.Cast("float64", i + 1025)))) == 11:
                if T.shift_left(31, i) <= 1015808:
                    A[i] = T.float32(0)

    @T.prim_func(private=True)
    def expected(A: T.Buffer((16,), "float32"), B: T.Buffer((1,), "int32")):
        B[0] = 4
        for i in range(16):
            A[i] = T.float32(0)

    _check(before, expected)


def test_an_unknown_option_is_an_error():
    @T.prim_func(private=True)
    def f(A: T.Buffer((1,), "int32")):
        A[0] = 1

    with pytest.raises(tvm.TVMError, match="unknown option"):
        _simplified(f, prove_everything=True)


def test_a_no_op_stays_in_a_sequence_nothing_else_changed_and_goes_from_one_that_changed():
    # TVM's mutators rebuild (and so flatten away T.evaluate(0)) only what they change
    @T.prim_func
    def unchanged(A: T.Buffer((4,), "float32")):
        T.func_attr({"global_symbol": "f"})
        T.evaluate(0)
        for i in range(4):
            A[i] = T.float32(1)

    @T.prim_func
    def changed(A: T.Buffer((4,), "float32")):
        T.func_attr({"global_symbol": "f"})
        T.evaluate(0)
        for i in range(4):
            if i < 4:
                A[i] = T.float32(1)

    @T.prim_func
    def changed_expected(A: T.Buffer((4,), "float32")):
        T.func_attr({"global_symbol": "f"})
        for i in range(4):
            A[i] = T.float32(1)

    simplify = tvm.tir.transform.Simplify()
    tvm.ir.assert_structural_equal(simplify(tvm.IRModule({"f": unchanged}))["f"], unchanged)
    tvm.ir.assert_structural_equal(simplify(tvm.IRModule({"f": changed}))["f"], changed_expected)
