"""PrimExpr operators: the nodes they build, dtype promotion and constant folding (as TVM)."""

import pytest

from mlckit import tir


def test_arithmetic_builds_nodes_with_converted_constants():
    i = tir.Var("i", "int32")
    e = i * 4 + 1
    assert isinstance(e, tir.Add) and isinstance(e.a, tir.Mul)
    assert isinstance(e.b, tir.IntImm) and e.b.value == 1 and e.b.dtype == "int32"


def test_python_constants_take_the_dtype_of_the_other_side():
    n = tir.Var("n", "int64")
    assert (n + 1).b.dtype == "int64"
    x = tir.Var("x", "float16")
    assert (x * 2).b.dtype == "float16" and isinstance((x * 2).b, tir.FloatImm)


def test_mixed_dtypes_promote_to_the_wider_or_float_side():
    i32, i64, f32 = tir.Var("a", "int32"), tir.Var("b", "int64"), tir.Var("c", "float32")
    assert (i32 + i64).dtype == "int64" and isinstance((i32 + i64).a, tir.Cast)
    assert (i32 * f32).dtype == "float32"


def test_constants_fold_and_identities_simplify():
    x = tir.Var("x")
    assert (tir.const(2) + 3).value == 5
    assert (tir.const(7) // 2).value == 3 and (tir.const(-7) // 2).value == -4
    assert (tir.const(-7) % 2).value == 1
    assert (x + 0) is x and (x * 1) is x and (0 + x) is x
    assert (x * 0).value == 0


def test_comparisons_are_bool_and_equality_is_reference_equality_in_python():
    x, y = tir.Var("x"), tir.Var("y")
    assert (x < y).dtype == "bool" and isinstance(x < y, tir.LT)
    assert bool(x == x) and not bool(x == y)
    assert {x: 1}[x] == 1


def test_truth_value_of_a_symbolic_expression_is_an_error():
    x = tir.Var("x")
    with pytest.raises(ValueError, match="truth value"):
        bool(x < 3)


def test_logical_operators_need_bool_operands():
    x = tir.Var("x")
    both = (x < 3) & (x > 0)
    assert isinstance(both, tir.And)
    with pytest.raises(TypeError, match="bool"):
        x & x


def test_intrinsics_keep_the_argument_dtype():
    x = tir.Var("x", "float32")
    call = tir.exp(x)
    assert call.dtype == "float32" and call.op.name == "tir.exp"
    assert tir.abs(x).op.name == "tir.fabs"
    assert isinstance(tir.abs(tir.Var("i")), tir.Select)
    assert tir.max_value("float32").value == pytest.approx(3.4028234663852886e38)
    assert tir.min_value("int8").value == -128


def test_unknown_dtype_is_rejected_with_the_known_ones():
    with pytest.raises(ValueError, match="unknown dtype 'flaot32'"):
        tir.Var("x", "flaot32")


def test_buffer_indexing_checks_the_number_of_indices():
    A = tir.decl_buffer((4, 4), "float32", "A")
    i = tir.Var("i")
    assert isinstance(A[i, 0], tir.BufferLoad)
    with pytest.raises(IndexError, match="2 dimension"):
        A[i]
    region = A[0:2, i]
    assert isinstance(region, tir.BufferRegion)
    assert region.region[0].extent.value == 2 and region.region[1].extent.value == 1
