"""topi broadcast operators: TVM's TIR, NumPy's broadcasting, and shape mismatches."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mlckit
from mlckit import te, topi
from mlckit.ir import assert_structural_equal
from mlckit.script import tir as T

from ..te.common import assert_runs_like

BINARY = {
    "add": np.add, "subtract": np.subtract, "multiply": np.multiply, "divide": np.divide,
    "maximum": np.maximum, "minimum": np.minimum, "power": np.power,
    "floor_divide": np.floor_divide, "floor_mod": np.mod,
}
COMPARE = {
    "greater": np.greater, "less": np.less, "equal": np.equal, "not_equal": np.not_equal,
    "greater_equal": np.greater_equal, "less_equal": np.less_equal,
}


def inputs(shape_a, shape_b, dtype="float32", seed=0):
    rng = np.random.default_rng(seed)
    a = rng.uniform(0.5, 2.0, shape_a).astype(dtype)
    b = rng.uniform(0.5, 2.0, shape_b).astype(dtype)
    return a, b


def test_add_of_matrix_and_row_is_tvms_t_add():
    A = te.placeholder((4, 3), name="A")
    B = te.placeholder((3,), name="B")
    C = topi.add(A, B)
    assert (C.op.name, C.op.tag) == ("T_add", "broadcast")

    @T.prim_func
    def expected(A: T.Buffer((4, 3), "float32"), B: T.Buffer((3,), "float32"),
                 T_add: T.Buffer((4, 3), "float32")):
        T.func_attr({"tir.noalias": True})
        for ax0, ax1 in T.grid(4, 3):
            with T.block("T_add"):
                v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
                T_add[v_ax0, v_ax1] = A[v_ax0, v_ax1] + B[v_ax1]

    func = te.create_prim_func([A, B, C])
    assert_structural_equal(func.with_attr("global_symbol", "expected"), expected)


def test_size_one_dimension_is_read_at_zero():
    A = te.placeholder((4, 1), name="A")
    B = te.placeholder((1, 3), name="B")

    @T.prim_func
    def expected(A: T.Buffer((4, 1), "float32"), B: T.Buffer((1, 3), "float32"),
                 T_multiply: T.Buffer((4, 3), "float32")):
        T.func_attr({"tir.noalias": True})
        for ax0, ax1 in T.grid(4, 3):
            with T.block("T_multiply"):
                v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
                T_multiply[v_ax0, v_ax1] = A[v_ax0, 0] * B[0, v_ax1]

    func = te.create_prim_func([A, B, topi.multiply(A, B)])
    assert_structural_equal(func.with_attr("global_symbol", "expected"), expected)


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_ops_run_like_numpy(name):
    A = te.placeholder((2, 3, 4), name="A")
    B = te.placeholder((3, 1), name="B")
    C = getattr(topi, name)(A, B)
    a, b = inputs((2, 3, 4), (3, 1))
    want = BINARY[name](a, b)
    assert_runs_like(te.create_prim_func([A, B, C]), [a, b, np.zeros(want.shape, "float32")],
                     [2], [want], rtol=1e-5)


@pytest.mark.parametrize("name", sorted(COMPARE))
def test_comparisons_give_bool_tensors(name):
    A = te.placeholder((5,), "int32", name="A")
    B = te.placeholder((1,), "int32", name="B")
    C = getattr(topi, name)(A, B)
    assert C.dtype == "bool"
    a = np.array([1, 2, 3, 4, 5], "int32")
    b = np.array([3], "int32")
    assert_runs_like(te.create_prim_func([A, B, C]), [a, b, np.zeros(5, bool)], [2],
                     [COMPARE[name](a, b)])


def test_integer_division_truncates_and_floor_division_floors():
    A = te.placeholder((4,), "int32", name="A")
    B = te.placeholder((4,), "int32", name="B")
    a = np.array([7, -7, 7, -7], "int32")
    b = np.array([2, 2, -2, -2], "int32")
    func = te.create_prim_func([A, B, topi.divide(A, B), topi.floor_divide(A, B),
                                topi.mod(A, B), topi.floor_mod(A, B)])
    z = np.zeros(4, "int32")
    assert_runs_like(func, [a, b, z, z, z, z], [2, 3, 4, 5],
                     [np.trunc(a / b).astype("int32"), a // b, np.fmod(a, b), np.mod(a, b)])


def test_logical_ops():
    A = te.placeholder((4,), "bool", name="A")
    B = te.placeholder((4,), "bool", name="B")
    a = np.array([True, True, False, False])
    b = np.array([True, False, True, False])
    func = te.create_prim_func([A, B, topi.logical_and(A, B), topi.logical_or(A, B)])
    z = np.zeros(4, bool)
    assert_runs_like(func, [a, b, z, z], [2, 3], [a & b, a | b])


def test_tensor_and_scalar_in_either_order_is_elementwise():
    A = te.placeholder((3, 2), name="A")
    B = topi.subtract(A, 1.5)
    C = topi.subtract(10, A)
    assert (B.op.name, B.op.tag) == ("T_subtract", "elemwise")

    @T.prim_func
    def expected(A: T.Buffer((3, 2), "float32"), T_subtract: T.Buffer((3, 2), "float32"),
                 T_subtract_1: T.Buffer((3, 2), "float32")):
        T.func_attr({"tir.noalias": True})
        for ax0, ax1 in T.grid(3, 2):
            with T.block("T_subtract"):
                v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
                T_subtract[v_ax0, v_ax1] = A[v_ax0, v_ax1] - T.float32(1.5)
        for ax0, ax1 in T.grid(3, 2):
            with T.block("T_subtract_1"):
                v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
                T_subtract_1[v_ax0, v_ax1] = T.float32(10) - A[v_ax0, v_ax1]

    func = te.create_prim_func([A, B, C])
    assert_structural_equal(func.with_attr("global_symbol", "expected"), expected)
    a = np.arange(6, dtype="float32").reshape(3, 2)
    z = np.zeros((3, 2), "float32")
    assert_runs_like(func, [a, z, z], [1, 2], [a - 1.5, 10 - a])


def test_two_scalars_give_an_expression():
    n = te.var("n")
    e = topi.maximum(n, 3)
    assert isinstance(e, mlckit.tir.Max)


def test_mixed_dtypes_promote_as_tvm():
    A = te.placeholder((4,), "int32", name="A")
    B = te.placeholder((4,), "float32", name="B")
    C = topi.add(A, B)
    assert C.dtype == "float32"
    a = np.arange(4, dtype="int32")
    b = np.full(4, 0.5, "float32")
    assert_runs_like(te.create_prim_func([A, B, C]), [a, b, np.zeros(4, "float32")], [2],
                     [a + b])


def test_symbolic_dimension_broadcasts_against_one():
    n = te.var("n")
    A = te.placeholder((n, 3), name="A")
    B = te.placeholder((1, 3), name="B")
    C = topi.add(A, B)
    assert C.shape[0] is n and int(C.shape[1]) == 3
    a, b = inputs((5, 3), (1, 3))
    assert_runs_like(te.create_prim_func([A, B, C]), [a, b, np.zeros((5, 3), "float32")], [2],
                     [a + b])


def test_two_symbolic_dimensions_broadcast_to_their_max():
    n, m = te.var("n"), te.var("m")
    A = te.placeholder((n,), name="A")
    B = te.placeholder((m,), name="B")
    C = topi.add(A, B)
    assert isinstance(C.shape[0], mlckit.tir.Max)


def test_int64_and_int32_dimensions_meet_as_int64():
    A = te.placeholder((mlckit.tir.IntImm("int64", 4),), name="A")
    B = te.placeholder((4,), name="B")
    C = topi.add(A, B)
    assert C.shape[0].dtype == "int64"


def test_broadcast_to():
    A = te.placeholder((3, 1), name="A")
    B = topi.broadcast_to(A, (2, 3, 4))
    assert [int(s) for s in B.shape] == [2, 3, 4] and B.op.name == "T_broadcast_to"
    a = np.arange(3, dtype="float32").reshape(3, 1)
    assert_runs_like(te.create_prim_func([A, B]), [a, np.zeros((2, 3, 4), "float32")], [1],
                     [np.broadcast_to(a, (2, 3, 4))])


def test_mismatched_shapes_name_the_op_and_the_dimensions():
    A = te.placeholder((2, 3), name="A")
    B = te.placeholder((4,), name="B")
    with pytest.raises(mlckit.TVMError, match=r"topi.add: cannot broadcast shapes \(2, 3\) "
                                              r"and \(4,\): dimension 3 and 4"):
        topi.add(A, B)
    with pytest.raises(mlckit.TVMError,
                       match=r"topi.broadcast_to: cannot broadcast shapes \(2, 5\) and \(2, 3\)"):
        topi.broadcast_to(A, (2, 5))


def test_non_tensor_operand_is_refused():
    A = te.placeholder((2,), name="A")
    with pytest.raises(mlckit.TVMError, match=r"topi.add: expected a te.Tensor or a scalar"):
        topi.add(A, "x")


@st.composite
def broadcastable_shapes(draw):
    """Two shapes NumPy can broadcast: a common shape with some dimensions set to 1 or
    dropped from the left of one side."""
    rank = draw(st.integers(1, 3))
    common = draw(st.lists(st.integers(2, 4), min_size=rank, max_size=rank))
    sides = []
    for _ in range(2):
        shape = [1 if draw(st.booleans()) else d for d in common]
        shape = shape[draw(st.integers(0, rank - 1)):]
        sides.append(tuple(shape))
    return sides


@settings(max_examples=12, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(shapes=broadcastable_shapes(), name=st.sampled_from(["add", "multiply", "maximum"]))
def test_random_broadcasts_match_numpy(shapes, name):
    shape_a, shape_b = shapes
    A = te.placeholder(shape_a, name="A")
    B = te.placeholder(shape_b, name="B")
    C = getattr(topi, name)(A, B)
    a, b = inputs(shape_a, shape_b, seed=len(shape_a))
    want = BINARY[name](a, b)
    assert tuple(int(s) for s in C.shape) == want.shape
    assert_runs_like(te.create_prim_func([A, B, C]), [a, b, np.zeros(want.shape, "float32")],
                     [2], [want])
