"""te.create_prim_func: the PrimFunc TVM v0.23 builds from tensor expressions, and it runs."""

import numpy as np

import mlckit
from mlckit import te
from mlckit.ir import assert_structural_equal
from mlckit.script import tir as T

from ..kernels import mm_relu
from .common import assert_runs_like


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
    assert_runs_like(func, [a, b, c], [2], [np.maximum(a @ b, 0)], rtol=1e-4, atol=1e-4)


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
