"""te.create_prim_func: the PrimFunc TVM v0.23 builds from tensor expressions, and it runs."""

import numpy as np
import pytest

import mlckit
from mlckit import te
from mlckit.ir import assert_structural_equal
from mlckit.script import tir as T

from ..kernels import mm_relu
from .common import LARGE, assert_runs_like


def course_mm_relu():
    A = te.placeholder((128, 128), "float32", name="A")
    B = te.placeholder((128, 128), "float32", name="B")
    k = te.reduce_axis((0, 128), "k")
    Y = te.compute((128, 128), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="Y")
    C = te.compute((128, 128), lambda i, j: te.max(Y[i, j], 0), name="C")
    return A, B, C


def te_matmul(A, B):
    """The course's te_matmul (chapter Integration)."""
    assert A.shape[1] == B.shape[0]
    n = A.shape[0]
    m = B.shape[1]
    k = te.reduce_axis((0, A.shape[1]), name="k")
    return te.compute((n, m), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="matmul")


def te_relu(A):
    return te.compute(A.shape, lambda *i: te.max(A(*i), 0), name="relu")


def test_course_mm_relu_equals_the_hand_written_module():
    A, B, C = course_mm_relu()
    te_func = te.create_prim_func([A, B, C]).with_attr({"global_symbol": "mm_relu"})
    assert_structural_equal(te_func, mm_relu)
    assert_structural_equal(mlckit.IRModule({"mm_relu": te_func}),
                            mlckit.IRModule({"mm_relu": mm_relu}))


def test_function_attributes_are_tvms():
    A, B, C = course_mm_relu()
    func = te.create_prim_func([A, B, C])
    assert func.attrs == {"global_symbol": "main", "tir.noalias": True}
    assert [p.name_hint for p in func.params] == ["var_A", "var_B", "var_C"]
    assert [b.name for b in func.buffer_map.values()] == ["A", "B", "C"]


def test_course_mm_relu_prints_as_tvm_does():
    A, B, C = course_mm_relu()
    text = te.create_prim_func([A, B, C]).script()
    assert text == '''# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32"), C: T.Buffer((128, 128), "float32")):
    T.func_attr({"tir.noalias": True})
    # with T.block("root"):
    Y = T.alloc_buffer((128, 128))
    for i, j, k in T.grid(128, 128, 128):
        with T.block("Y"):
            v_i, v_j, v_k = T.axis.remap("SSR", [i, j, k])
            T.reads(A[v_i, v_k], B[v_k, v_j])
            T.writes(Y[v_i, v_j])
            with T.init():
                Y[v_i, v_j] = T.float32(0.0)
            Y[v_i, v_j] = Y[v_i, v_j] + A[v_i, v_k] * B[v_k, v_j]
    for i, j in T.grid(128, 128):
        with T.block("C"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            T.reads(Y[v_i, v_j])
            T.writes(C[v_i, v_j])
            C[v_i, v_j] = T.max(Y[v_i, v_j], T.float32(0.0))'''


def test_course_mm_relu_runs():
    A, B, C = course_mm_relu()
    func = te.create_prim_func([A, B, C])
    rng = np.random.default_rng(0)
    a = rng.standard_normal((128, 128), dtype="float32")
    b = rng.standard_normal((128, 128), dtype="float32")
    c = np.zeros((128, 128), "float32")
    assert_runs_like(func, [a, b, c], [2], [np.maximum(a @ b, 0)], rtol=1e-4, atol=1e-4,
                     targets=LARGE)


def test_matmul_from_shapes_of_the_inputs():
    A = te.placeholder((16, 8), name="A", dtype="float32")
    B = te.placeholder((8, 4), name="B", dtype="float32")
    C = te_matmul(A, B)

    @T.prim_func
    def expected(A: T.Buffer((16, 8), "float32"), B: T.Buffer((8, 4), "float32"),
                 matmul: T.Buffer((16, 4), "float32")):
        T.func_attr({"tir.noalias": True})
        for i, j, k in T.grid(16, 4, 8):
            with T.block("matmul"):
                v_i, v_j, v_k = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    matmul[v_i, v_j] = T.float32(0)
                matmul[v_i, v_j] = matmul[v_i, v_j] + A[v_i, v_k] * B[v_k, v_j]

    func = te.create_prim_func([A, B, C])
    assert_structural_equal(func.with_attr("global_symbol", "expected"), expected)
    a = np.arange(128, dtype="float32").reshape(16, 8) / 100
    b = np.arange(32, dtype="float32").reshape(8, 4) / 10
    assert_runs_like(func, [a, b, np.zeros((16, 4), "float32")], [2], [a @ b])


def test_rank_polymorphic_relu_names_its_indices_i0_i1():
    X2 = te.placeholder((10, 20), name="X1", dtype="float32")
    Y2 = te_relu(X2)

    @T.prim_func
    def expected(X1: T.Buffer((10, 20), "float32"), relu: T.Buffer((10, 20), "float32")):
        T.func_attr({"tir.noalias": True})
        for i0, i1 in T.grid(10, 20):
            with T.block("relu"):
                v_i0, v_i1 = T.axis.remap("SS", [i0, i1])
                relu[v_i0, v_i1] = T.max(X1[v_i0, v_i1], T.float32(0))

    func = te.create_prim_func([X2, Y2])
    assert_structural_equal(func.with_attr("global_symbol", "expected"), expected)
    assert "for i0, i1 in T.grid(10, 20):" in func.script()
    x = np.linspace(-1, 1, 200, dtype="float32").reshape(10, 20)
    assert_runs_like(func, [x, np.zeros_like(x)], [1], [np.maximum(x, 0)])


def test_rank_polymorphic_relu_on_one_dimension():
    X1 = te.placeholder((10,), name="X1", dtype="float32")
    func = te.create_prim_func([X1, te_relu(X1)])

    @T.prim_func
    def expected(X1: T.Buffer((10,), "float32"), relu: T.Buffer((10,), "float32")):
        T.func_attr({"tir.noalias": True})
        for i0 in range(10):
            with T.block("relu"):
                v_i0 = T.axis.spatial(10, i0)
                relu[v_i0] = T.max(X1[v_i0], T.float32(0))

    assert_structural_equal(func.with_attr("global_symbol", "expected"), expected)


def test_intermediate_left_out_of_the_arguments_becomes_alloc_buffer():
    A = te.placeholder((128, 128), name="A", dtype="float32")
    B = te.placeholder((128, 128), name="B", dtype="float32")
    C = te_matmul(A, B)
    D = te_relu(C)

    @T.prim_func
    def expected(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32"),
                 relu: T.Buffer((128, 128), "float32")):
        T.func_attr({"tir.noalias": True})
        matmul = T.alloc_buffer((128, 128))
        for i, j, k in T.grid(128, 128, 128):
            with T.block("matmul"):
                v_i, v_j, v_k = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    matmul[v_i, v_j] = T.float32(0)
                matmul[v_i, v_j] = matmul[v_i, v_j] + A[v_i, v_k] * B[v_k, v_j]
        for i0, i1 in T.grid(128, 128):
            with T.block("relu"):
                v_i0, v_i1 = T.axis.remap("SS", [i0, i1])
                relu[v_i0, v_i1] = T.max(matmul[v_i0, v_i1], T.float32(0))

    func = te.create_prim_func([A, B, D])
    assert_structural_equal(func.with_attr("global_symbol", "expected"), expected)


def test_intermediate_in_the_arguments_is_a_parameter():
    A = te.placeholder((8, 8), name="A", dtype="float32")
    B = te.placeholder((8, 8), name="B", dtype="float32")
    C = te_matmul(A, B)
    D = te_relu(C)
    func = te.create_prim_func([A, B, C, D])
    assert [b.name for b in func.buffer_map.values()] == ["A", "B", "matmul", "relu"]
    assert func.body.block.alloc_buffers == []
    a = np.linspace(-1, 1, 64, dtype="float32").reshape(8, 8)
    b = a.T.copy()
    zeros = np.zeros((8, 8), "float32")
    assert_runs_like(func, [a, b, zeros, zeros], [2, 3], [a @ b, np.maximum(a @ b, 0)])


def test_argument_order_is_the_parameter_order():
    A = te.placeholder((4,), name="A")
    B = te.compute((4,), lambda i: A[i] * 2, name="B")
    func = te.create_prim_func([B, A])
    assert [b.name for b in func.buffer_map.values()] == ["B", "A"]
    a = np.arange(4, dtype="float32")
    assert_runs_like(func, [np.zeros(4, "float32"), a], [0], [a * 2])


def test_symbolic_shapes_become_match_buffer_variables():
    n = te.var("n")
    m = te.var("m")
    A = te.placeholder((n, m), name="A")
    B = te.compute((n, m), lambda i, j: A[i, j] * 2 + 1, name="B")

    @T.prim_func
    def expected(var_A: T.handle, var_B: T.handle):
        T.func_attr({"tir.noalias": True})
        n, m = T.int32(), T.int32()
        A = T.match_buffer(var_A, (n, m))
        B = T.match_buffer(var_B, (n, m))
        for i, j in T.grid(n, m):
            with T.block("B"):
                v_i, v_j = T.axis.remap("SS", [i, j])
                B[v_i, v_j] = A[v_i, v_j] * T.float32(2) + T.float32(1)

    func = te.create_prim_func([A, B])
    assert_structural_equal(func.with_attr("global_symbol", "expected"), expected)
    a = np.arange(15, dtype="float32").reshape(3, 5)
    assert_runs_like(func, [a, np.zeros_like(a)], [1], [a * 2 + 1])


def test_symbolic_matmul_reduces_over_a_symbolic_extent():
    n, k_len = te.var("n"), te.var("k")
    A = te.placeholder((n, k_len), name="A")
    B = te.placeholder((k_len, 4), name="B")
    C = te_matmul(A, B)
    func = te.create_prim_func([A, B, C])
    a = np.arange(6, dtype="float32").reshape(2, 3)
    b = np.arange(12, dtype="float32").reshape(3, 4)
    assert_runs_like(func, [a, b, np.zeros((2, 4), "float32")], [2], [a @ b])


def test_scalar_parameters_come_after_the_tensors():
    n = te.var("n")
    A = te.placeholder((8,), name="A")
    B = te.compute((8,), lambda i: A[i] + te.const(1, "float32") * n.astype("float32"),
                   name="B")
    func = te.create_prim_func([A, B, n])
    assert func.params[2] is n


def test_multiple_outputs_share_one_loop_nest_with_a_block_each():
    n, m = te.var("n"), te.var("m")
    A0 = te.placeholder((m, n), name="A0")
    A1 = te.placeholder((m, n), name="A1")
    B0, B1 = te.compute((m, n), lambda i, j: (A0[i, j] + 2, A1[i, j] * 3), name="B")

    @T.prim_func
    def expected(a0: T.handle, a1: T.handle, b0: T.handle, b1: T.handle):
        T.func_attr({"tir.noalias": True})
        m, n = T.int32(), T.int32()
        A0 = T.match_buffer(a0, (m, n))
        A1 = T.match_buffer(a1, (m, n))
        B0 = T.match_buffer(b0, (m, n))
        B1 = T.match_buffer(b1, (m, n))
        for i0, i1 in T.grid(m, n):
            with T.block("B_v0"):
                i, j = T.axis.remap("SS", [i0, i1])
                B0[i, j] = A0[i, j] + 2.0
            with T.block("B_v1"):
                i, j = T.axis.remap("SS", [i0, i1])
                B1[i, j] = A1[i, j] * 3.0

    func = te.create_prim_func([A0, A1, B0, B1])
    assert_structural_equal(func.with_attr("global_symbol", "expected"), expected)
    a0 = np.arange(6, dtype="float32").reshape(2, 3)
    a1 = a0 + 10
    z = np.zeros((2, 3), "float32")
    assert_runs_like(func, [a0, a1, z, z], [2, 3], [a0 + 2, a1 * 3])


def test_zero_dim_compute_gets_a_dummy_iterator():
    a = te.placeholder((), name="a", dtype="int32")
    b = te.placeholder((), name="b", dtype="int32")
    c = te.compute(a.shape, lambda *i: a(*i) + b(*i), name="c")

    @T.prim_func
    def expected(a: T.Buffer((), "int32"), b: T.Buffer((), "int32"), c: T.Buffer((), "int32")):
        T.func_attr({"tir.noalias": True})
        with T.block("root"):
            T.reads()
            T.writes()
            with T.block("c"):
                vi = T.axis.spatial(1, 0)
                T.reads(a[()], b[()])
                T.writes(c[()])
                c[()] = a[()] + b[()]

    func = te.create_prim_func([a, b, c])
    assert_structural_equal(func.with_attr("global_symbol", "expected"), expected)
    results = [np.array(3, "int32"), np.array(4, "int32"), np.array(0, "int32")]
    assert_runs_like(func, results, [2], [np.array(7, "int32")])


def test_scalar_compute_read_with_no_index():
    A = te.placeholder((11,), name="A")
    B = te.compute((), lambda: 2.0, name="B")
    C = te.compute((11,), lambda x: A[x] + B(), name="C")
    func = te.create_prim_func([C, A])
    a = np.arange(11, dtype="float32")
    assert_runs_like(func, [np.zeros(11, "float32"), a], [0], [a + 2])


def test_block_names_are_made_unique():
    A = te.placeholder((16, 16), name="A")
    B = te.compute((16, 16), lambda x, y: A[x, y] * 2, name="main")
    C = te.compute((16, 16), lambda x, y: B[x, y] + 1, name="main")
    func = te.create_prim_func([A, C])
    sch = mlckit.tir.Schedule(func)
    assert sch.get(sch.get_block("main")).name_hint == "main"
    assert sch.get(sch.get_block("main_1")).name_hint == "main_1"


def test_data_dependent_access():
    A = te.placeholder((10,), name="A")
    B = te.placeholder((10,), name="B", dtype="int32")
    C = te.compute((10,), lambda i: A[B[i]])
    func = te.create_prim_func([C, A, B])
    a = np.arange(10, dtype="float32") * 3
    b = np.array([9, 0, 1, 1, 5, 2, 3, 8, 7, 4], "int32")
    assert_runs_like(func, [np.zeros(10, "float32"), a, b], [0], [a[b]])


def test_padding_with_if_then_else_puts_comparisons_in_tvms_form():
    A = te.placeholder((2, 3, 5, 5), name="A")
    Apad = te.compute(
        (2, 3, 7, 7),
        lambda nn, cc, yy, xx: te.if_then_else(
            mlckit.tir.all(yy >= 1, yy - 1 < 5, xx >= 1, xx - 1 < 5),
            A[nn, cc, yy - 1, xx - 1], 0.0),
        name="Apad",
    )

    @T.prim_func
    def expected(A: T.Buffer((2, 3, 5, 5), "float32"), Apad: T.Buffer((2, 3, 7, 7), "float32")):
        T.func_attr({"tir.noalias": True})
        for nn, cc, yy, xx in T.grid(2, 3, 7, 7):
            with T.block("Apad"):
                v_nn, v_cc, v_yy, v_xx = T.axis.remap("SSSS", [nn, cc, yy, xx])
                Apad[v_nn, v_cc, v_yy, v_xx] = T.if_then_else(
                    1 <= v_yy and v_yy < 6 and 1 <= v_xx and v_xx < 6,
                    A[v_nn, v_cc, v_yy - 1, v_xx - 1], T.float32(0))

    func = te.create_prim_func([A, Apad])
    assert_structural_equal(func.with_attr("global_symbol", "expected"), expected)
    a = np.arange(150, dtype="float32").reshape(2, 3, 5, 5)
    want = np.pad(a, ((0, 0), (0, 0), (1, 1), (1, 1)))
    assert_runs_like(func, [a, np.zeros_like(want)], [1], [want])


def test_dtype_promotion_follows_tvms_binary_rules():
    A = te.placeholder((4,), "int32", name="A")
    H = te.placeholder((4,), "float64", name="H")
    S = te.placeholder((4,), "int8", name="S")
    B = te.compute((4,), lambda i: A[i] * 0.5 + H[i].astype("float32"), name="B")
    C = te.compute((4,), lambda i: H[i] + 1, name="C")
    D = te.compute((4,), lambda i: S[i] + A[i], name="D")
    assert (B.dtype, C.dtype, D.dtype) == ("float32", "float64", "int32")

    @T.prim_func
    def expected(A: T.Buffer((4,), "int32"), H: T.Buffer((4,), "float64"),
                 S: T.Buffer((4,), "int8"), B: T.Buffer((4,), "float32"),
                 C: T.Buffer((4,), "float64"), D: T.Buffer((4,), "int32")):
        T.func_attr({"tir.noalias": True})
        for i in range(4):
            with T.block("B"):
                v_i = T.axis.spatial(4, i)
                B[v_i] = T.Cast("float32", A[v_i]) * T.float32(0.5) + T.Cast("float32", H[v_i])
        for i in range(4):
            with T.block("C"):
                v_i = T.axis.spatial(4, i)
                C[v_i] = H[v_i] + T.float64(1)
        for i in range(4):
            with T.block("D"):
                v_i = T.axis.spatial(4, i)
                D[v_i] = T.Cast("int32", S[v_i]) + A[v_i]

    func = te.create_prim_func([A, H, S, B, C, D])
    assert_structural_equal(func.with_attr("global_symbol", "expected"), expected)
    a = np.array([1, 2, 3, 4], "int32")
    h = np.array([0.5, 1.5, -2, 8], "float64")
    s8 = np.array([-128, 5, 127, 0], "int8")
    assert_runs_like(func, [a, h, s8, np.zeros(4, "float32"), np.zeros(4), np.zeros(4, "int32")],
                     [3, 4, 5], [a * 0.5 + h, h + 1, s8.astype("int32") + a])


def test_layout_free_placeholder_that_is_a_parameter_becomes_a_function_attribute():
    k = te.reduce_axis((0, 128), "k")
    A = te.placeholder((128, 128), name="A")
    B = te.placeholder((128, 128), name="B")
    C = te.compute((128, 128), lambda x, y: te.sum(A[x, k] * B[y, k], axis=k), name="C",
                   attrs={"layout_free_placeholders": [B]})
    D = te.compute((128, 128), lambda x, y: C[x, y] + 1, name="D",
                   attrs={"layout_free_placeholders": [C]})

    @T.prim_func
    def expected(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32"),
                 D: T.Buffer((128, 128), "float32")):
        T.func_attr({"global_symbol": "main", "tir.noalias": True, "layout_free_buffers": [1]})
        C = T.alloc_buffer([128, 128], dtype="float32")
        for i0, i1, i2 in T.grid(128, 128, 128):
            with T.block("C"):
                x, y, k = T.axis.remap("SSR", [i0, i1, i2])
                with T.init():
                    C[x, y] = T.float32(0)
                C[x, y] = C[x, y] + A[x, k] * B[y, k]
        for i0, i1 in T.grid(128, 128):
            with T.block("D"):
                T.block_attr({"layout_free_placeholders": [C]})
                x, y = T.axis.remap("SS", [i0, i1])
                D[x, y] = C[x, y] + T.float32(1)

    func = te.create_prim_func([A, B, D])
    assert_structural_equal(func, expected)


def test_index_dtype_override_makes_every_index_int64():
    k = te.reduce_axis((0, 128), "k")
    A = te.placeholder((128, 128), name="A")
    B = te.placeholder((128, 128), name="B")
    C = te.compute((128, 128), lambda x, y: te.sum(A[x, k] * B[y, k], axis=k), name="C")

    @T.prim_func
    def expected(A: T.Buffer((T.int64(128), T.int64(128)), "float32"),
                 B: T.Buffer((T.int64(128), T.int64(128)), "float32"),
                 C: T.Buffer((T.int64(128), T.int64(128)), "float32")):
        T.func_attr({"global_symbol": "main", "tir.noalias": True})
        for i0, j0, k0 in T.grid(T.int64(128), T.int64(128), T.int64(128)):
            with T.block("C"):
                i, j, k = T.axis.remap("SSR", [i0, j0, k0])
                with T.init():
                    C[i, j] = 0.0
                C[i, j] += A[i, k] * B[j, k]

    func = te.create_prim_func([A, B, C], index_dtype_override="int64")
    assert_structural_equal(func, expected)
    a = np.eye(128, dtype="float32")
    b = np.arange(128 * 128, dtype="float32").reshape(128, 128) / 1000
    assert_runs_like(func, [a, b, np.zeros((128, 128), "float32")], [2], [a @ b.T],
                     rtol=1e-4, targets=LARGE)


def test_index_dtype_override_casts_index_values_back():
    A = te.placeholder((6,), "int32", name="A")
    B = te.compute((6,), lambda i: A[i] + i, name="B")
    func = te.create_prim_func([A, B], index_dtype_override="int64")
    loop = func.body.block.body
    assert loop.loop_var.dtype == "int64"
    store = loop.body.block.body
    assert store.value.dtype == "int32"
    a = np.arange(6, dtype="int32") * 10
    assert_runs_like(func, [a, np.zeros(6, "int32")], [1], [a + np.arange(6)])


def test_int64_symbolic_size_gives_int64_loops():
    n = te.var("n", "int64")
    A = te.placeholder((n,), name="A")
    B = te.compute(A.shape, lambda *i: A(*i) + 1, name="B")
    loop = te.create_prim_func([A, B]).body.block.body
    assert (loop.loop_var.dtype, loop.min.dtype, loop.extent.dtype) == ("int64",) * 3


def test_placeholder_missing_from_the_arguments_is_named():
    A = te.placeholder((4,), name="A")
    W = te.placeholder((4,), name="W")
    B = te.compute((4,), lambda i: A[i] * W[i], name="B")
    with pytest.raises(mlckit.TVMError, match=r"placeholder 'W' is read.*arguments are \[A, B\]"):
        te.create_prim_func([A, B])


def test_arguments_must_be_tensors_or_vars():
    A = te.placeholder((4,), name="A")
    with pytest.raises(mlckit.TVMError, match="argument 1 must be a te.Tensor or a tir.Var"):
        te.create_prim_func([A, "B"])


def test_a_single_tensor_is_accepted():
    B = te.compute((4,), lambda i: i * 2, name="B")
    func = te.create_prim_func(B)
    assert_runs_like(func, [np.zeros(4, "int32")], [0], [np.arange(4, dtype="int32") * 2])
