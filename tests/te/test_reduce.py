"""Reductions: te.sum / te.max / te.min, te.comm_reducer, where=, init=, and their misuse."""

import numpy as np
import pytest

import mlckit
from mlckit import te, tir
from mlckit.ir import assert_structural_equal
from mlckit.script import tir as T

from .common import assert_runs_like


def row_reduce(reducer, n=6, m=5, dtype="float32"):
    A = te.placeholder((n, m), dtype, name="A")
    k = te.reduce_axis((0, m), name="k")
    B = te.compute((n,), lambda i: reducer(A[i, k], axis=k), name="B")
    return A, B


@pytest.mark.parametrize("reducer, numpy_reduce", [
    (te.sum, np.sum), (te.max, np.max), (te.min, np.min),
])
def test_row_reductions_run_like_numpy(reducer, numpy_reduce):
    A, B = row_reduce(reducer)
    func = te.create_prim_func([A, B])
    a = np.random.default_rng(1).standard_normal((6, 5)).astype("float32")
    assert_runs_like(func, [a, np.zeros(6, "float32")], [1], [numpy_reduce(a, axis=1)])


def test_max_reduction_starts_from_the_smallest_float():
    A, B = row_reduce(te.max)

    @T.prim_func
    def expected(A: T.Buffer((6, 5), "float32"), B: T.Buffer((6,), "float32")):
        T.func_attr({"tir.noalias": True})
        for i, k in T.grid(6, 5):
            with T.block("B"):
                v_i, v_k = T.axis.remap("SR", [i, k])
                with T.init():
                    B[v_i] = T.min_value("float32")
                B[v_i] = T.max(B[v_i], A[v_i, v_k])

    assert_structural_equal(te.create_prim_func([A, B]).with_attr("global_symbol", "expected"),
                            expected)


def test_integer_sum_keeps_the_integer_dtype():
    A, B = row_reduce(te.sum, dtype="int32")
    assert B.dtype == "int32"
    func = te.create_prim_func([A, B])
    a = np.arange(30, dtype="int32").reshape(6, 5)
    assert_runs_like(func, [a, np.zeros(6, "int32")], [1], [a.sum(axis=1)])


def test_sum_over_two_axes():
    A = te.placeholder((4, 3, 5), name="A")
    r = te.reduce_axis((0, 3), name="r")
    s = te.reduce_axis((0, 5), name="s")
    B = te.compute((4,), lambda i: te.sum(A[i, r, s], axis=[r, s]), name="B")

    @T.prim_func
    def expected(A: T.Buffer((4, 3, 5), "float32"), B: T.Buffer((4,), "float32")):
        T.func_attr({"tir.noalias": True})
        for i, r, s in T.grid(4, 3, 5):
            with T.block("B"):
                v_i, v_r, v_s = T.axis.remap("SRR", [i, r, s])
                with T.init():
                    B[v_i] = T.float32(0)
                B[v_i] = B[v_i] + A[v_i, v_r, v_s]

    func = te.create_prim_func([A, B])
    assert_structural_equal(func.with_attr("global_symbol", "expected"), expected)
    a = np.arange(60, dtype="float32").reshape(4, 3, 5)
    assert_runs_like(func, [a, np.zeros(4, "float32")], [1], [a.sum(axis=(1, 2))])


def test_custom_product_reducer():
    prod = te.comm_reducer(lambda x, y: x * y, lambda t: tir.const(1, t), name="prod")
    A, B = row_reduce(prod, n=3, m=4)

    @T.prim_func
    def expected(A: T.Buffer((3, 4), "float32"), B: T.Buffer((3,), "float32")):
        T.func_attr({"tir.noalias": True})
        for i, k in T.grid(3, 4):
            with T.block("B"):
                v_i, v_k = T.axis.remap("SR", [i, k])
                with T.init():
                    B[v_i] = T.float32(1)
                B[v_i] = B[v_i] * A[v_i, v_k]

    func = te.create_prim_func([A, B])
    assert_structural_equal(func.with_attr("global_symbol", "expected"), expected)
    a = np.linspace(0.5, 1.5, 12, dtype="float32").reshape(3, 4)
    assert_runs_like(func, [a, np.zeros(3, "float32")], [1], [a.prod(axis=1)])


def argmax_workload():
    def combine(x, y):
        keep = x[1] >= y[1]
        return tir.Select(keep, x[0], y[0]), tir.Select(keep, x[1], y[1])

    def identity(index_dtype, value_dtype):
        return tir.const(-1, index_dtype), te.min_value(value_dtype)

    argmax = te.comm_reducer(combine, identity, name="argmax")
    m, n = te.var("m"), te.var("n")
    idx = te.placeholder((m, n), name="idx", dtype="int32")
    val = te.placeholder((m, n), name="val", dtype="float32")
    k = te.reduce_axis((0, n), "k")
    max_idx, max_val = te.compute((m,), lambda i: argmax((idx[i, k], val[i, k]), axis=k),
                                  name="argmax")
    return idx, val, max_idx, max_val


def test_tuple_reducer_binds_both_values_before_storing():
    idx, val, max_idx, max_val = argmax_workload()

    @T.prim_func
    def expected(var_idx: T.handle, var_val: T.handle, var_argmax_v0: T.handle,
                 var_argmax_v1: T.handle):
        T.func_attr({"tir.noalias": True})
        m, n = T.int32(), T.int32()
        idx = T.match_buffer(var_idx, (m, n), "int32")
        val = T.match_buffer(var_val, (m, n))
        argmax_v0 = T.match_buffer(var_argmax_v0, (m,), "int32")
        argmax_v1 = T.match_buffer(var_argmax_v1, (m,))
        for i, k in T.grid(m, n):
            with T.block("argmax"):
                v_i, v_k = T.axis.remap("SR", [i, k])
                T.reads(val[v_i, v_k], idx[v_i, v_k])
                T.writes(argmax_v0[v_i], argmax_v1[v_i])
                with T.init():
                    argmax_v0[v_i] = -1
                    argmax_v1[v_i] = T.min_value("float32")
                v_argmax_v0: T.int32 = T.Select(argmax_v1[v_i] >= val[v_i, v_k], argmax_v0[v_i],
                                                idx[v_i, v_k])
                v_argmax_v1: T.float32 = T.Select(argmax_v1[v_i] >= val[v_i, v_k],
                                                  argmax_v1[v_i], val[v_i, v_k])
                argmax_v0[v_i] = v_argmax_v0
                argmax_v1[v_i] = v_argmax_v1

    func = te.create_prim_func([idx, val, max_idx, max_val])
    assert_structural_equal(func.with_attr("global_symbol", "expected"), expected)


def test_tuple_reducer_computes_argmax():
    idx, val, max_idx, max_val = argmax_workload()
    func = te.create_prim_func([idx, val, max_idx, max_val])
    v = np.random.default_rng(2).standard_normal((4, 7)).astype("float32")
    i = np.tile(np.arange(7, dtype="int32"), (4, 1))
    assert_runs_like(func, [i, v, np.zeros(4, "int32"), np.zeros(4, "float32")], [2, 3],
                     [v.argmax(axis=1), v.max(axis=1)])


def test_identity_may_read_a_tensor_at_the_output_index():
    data = te.placeholder((5, 5), "float32", "a")
    start = te.placeholder((5,), "float32", "b")
    ax = te.reduce_axis((0, 5), "ax")
    out = te.compute(
        (5,),
        lambda i: te.comm_reducer(lambda x, y: x + y, lambda t: start[i])(data[i, ax], axis=[ax]),
        name="sum_red",
    )

    @T.prim_func
    def expected(a: T.Buffer((5, 5), "float32"), b: T.Buffer((5,), "float32"),
                 sum_red: T.Buffer((5,), "float32")):
        T.func_attr({"tir.noalias": True})
        for i, ax in T.grid(5, 5):
            with T.block("sum_red"):
                v_i, v_ax = T.axis.remap("SR", [i, ax])
                T.reads(b[v_i], a[v_i, v_ax])
                T.writes(sum_red[v_i])
                with T.init():
                    sum_red[v_i] = b[v_i]
                sum_red[v_i] = sum_red[v_i] + a[v_i, v_ax]

    func = te.create_prim_func([data, start, out])
    assert_structural_equal(func.with_attr("global_symbol", "expected"), expected)
    a = np.arange(25, dtype="float32").reshape(5, 5)
    b = np.arange(5, dtype="float32") * 10
    assert_runs_like(func, [a, b, np.zeros(5, "float32")], [2], [a.sum(axis=1) + b])


def test_where_skips_the_points_it_excludes():
    """A lower-triangular row sum. TVM v0.23 drops ``where``; mlckit keeps it as an ``if``."""
    A = te.placeholder((6, 6), name="A")
    k = te.reduce_axis((0, 6), name="k")
    B = te.compute((6,), lambda i: te.sum(A[i, k], axis=k, where=k <= i), name="B")

    @T.prim_func
    def expected(A: T.Buffer((6, 6), "float32"), B: T.Buffer((6,), "float32")):
        T.func_attr({"tir.noalias": True})
        for i, k in T.grid(6, 6):
            with T.block("B"):
                v_i, v_k = T.axis.remap("SR", [i, k])
                T.reads(A[v_i, v_k])
                T.writes(B[v_i])
                with T.init():
                    B[v_i] = T.float32(0)
                if v_k <= v_i:
                    B[v_i] = B[v_i] + A[v_i, v_k]

    func = te.create_prim_func([A, B])
    assert_structural_equal(func.with_attr("global_symbol", "expected"), expected)
    a = np.arange(36, dtype="float32").reshape(6, 6)
    assert_runs_like(func, [a, np.zeros(6, "float32")], [1], [np.tril(a).sum(axis=1)])


def test_init_replaces_the_identity():
    A = te.placeholder((3, 4), name="A")
    k = te.reduce_axis((0, 4), name="k")
    B = te.compute((3,), lambda i: te.sum(A[i, k], axis=k, init=100.0), name="B")
    func = te.create_prim_func([A, B])
    a = np.ones((3, 4), "float32")
    assert_runs_like(func, [a, np.zeros(3, "float32")], [1], [np.full(3, 104, "float32")])


def test_reduction_domain_may_depend_on_an_outer_axis():
    """A reduction axis whose range uses another axis gets its own nested block (as TVM)."""
    x = te.placeholder((4, 4, 4), "float32", "x")

    def fcompute(i, j):
        r1 = te.reduce_axis(tir.Range.from_min_extent(0, j))
        r2 = te.reduce_axis(tir.Range.from_min_extent(0, r1))
        return te.sum(x(i, r1, r2), [r1, r2])

    y = te.compute((4, 4), fcompute, name="y")

    @T.prim_func
    def expected(x: T.Buffer((4, 4, 4), "float32"), y: T.Buffer((4, 4), "float32")):
        T.func_attr({"tir.noalias": True})
        for i, j in T.grid(4, 4):
            with T.block("y_l1"):
                v_i, v_j = T.axis.remap("SS", [i, j])
                for rv in range(v_j):
                    with T.block("y_l2"):
                        v_i_1 = T.axis.spatial((v_i, v_i + 1), v_i)
                        v_j_1 = T.axis.spatial((v_j, v_j + 1), v_j)
                        v_rv = T.axis.reduce(v_j, rv)
                        with T.init():
                            y[v_i_1, v_j_1] = T.float32(0)
                        for rv_1 in range(v_rv):
                            with T.block("y"):
                                v_i_2 = T.axis.spatial((v_i_1, v_i_1 + 1), v_i_1)
                                v_j_2 = T.axis.spatial((v_j_1, v_j_1 + 1), v_j_1)
                                v_rv_1 = T.axis.reduce((v_rv, v_rv + 1), v_rv)
                                v_rv_2 = T.axis.reduce(v_rv, rv_1)
                                with T.init():
                                    y[v_i_2, v_j_2] = T.float32(0)
                                y[v_i_2, v_j_2] = y[v_i_2, v_j_2] + x[v_i_2, v_rv_1, v_rv_2]

    func = te.create_prim_func([x, y])
    assert_structural_equal(func.with_attr("global_symbol", "expected"), expected)


def test_direct_combination_of_expressions():
    A = te.placeholder((5,), name="A")
    B = te.placeholder((5,), name="B")
    C = te.compute((5,), lambda i: te.min(A[i], B[i]) + te.sum(A[i], B[i], 1.0), name="C")
    func = te.create_prim_func([A, B, C])
    a = np.array([1, 5, -2, 0, 3], "float32")
    b = np.array([2, 4, -3, 0, 9], "float32")
    assert_runs_like(func, [a, b, np.zeros(5, "float32")], [2], [np.minimum(a, b) + a + b + 1])


# -- misuse -----------------------------------------------------------------------------------
def test_reduction_axis_outside_a_reducer_is_refused():
    A = te.placeholder((4, 4), name="A")
    k = te.reduce_axis((0, 4), name="k")
    with pytest.raises(mlckit.TVMError, match=r"compute 'B'.*reduction axis 'k' is used outside"):
        te.compute((4,), lambda i: A[i, k], name="B")


def test_reduction_axis_not_listed_in_its_reducer_is_refused():
    A = te.placeholder((4, 4, 4), name="A")
    k = te.reduce_axis((0, 4), name="k")
    r = te.reduce_axis((0, 4), name="r")
    with pytest.raises(mlckit.TVMError, match=r"compute 'B'.*reduction axis 'r'"):
        te.compute((4,), lambda i: te.sum(A[i, k, r], axis=k), name="B")


def test_unused_reduction_axis_is_refused():
    A = te.placeholder((4, 4), name="A")
    k = te.reduce_axis((0, 4), name="k")
    with pytest.raises(mlckit.TVMError, match=r"compute 'B'.*reduction axis 'k' is not used"):
        te.compute((4,), lambda i: te.sum(A[i, 0], axis=k), name="B")


def test_reduction_inside_a_larger_expression_is_refused():
    A = te.placeholder((4, 4), name="A")
    k = te.reduce_axis((0, 4), name="k")
    with pytest.raises(mlckit.TVMError, match=r"compute 'B'.*te.sum.*must be the whole value"):
        te.compute((4,), lambda i: te.sum(A[i, k], axis=k) + 1, name="B")


def test_spatial_axis_as_reduction_axis_is_refused():
    A = te.placeholder((4, 4), name="A")
    i_axis = te.compute((4,), lambda i: A[i, 0]).op.axis[0]
    with pytest.raises(mlckit.TVMError, match=r"te.sum: axis i is not a reduction axis"):
        te.sum(A[0, 0], axis=i_axis)


def test_sum_without_axis_is_explained():
    A = te.placeholder((4,), name="A")
    with pytest.raises(mlckit.TVMError, match=r"te.sum needs axis="):
        te.sum(A[0])


def test_combiner_must_take_two_arguments():
    with pytest.raises(mlckit.TVMError, match="two arguments"):
        te.comm_reducer(lambda x: x, lambda t: 0)
