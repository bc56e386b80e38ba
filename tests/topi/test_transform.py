"""topi layout transforms and matmul: TVM's TIR and NumPy's results."""

import numpy as np
import pytest

import mlckit
from mlckit import te, tir, topi
from mlckit.ir import assert_structural_equal
from mlckit.script import tir as T

from ..te.common import assert_runs_like


def arange(shape, dtype="float32"):
    return np.arange(int(np.prod(shape)), dtype=dtype).reshape(shape)


def test_transpose_of_a_matrix_is_tvms_t_transpose():
    A = te.placeholder((2, 3), name="A")
    B = topi.transpose(A)

    @T.prim_func
    def expected(A: T.Buffer((2, 3), "float32"), T_transpose: T.Buffer((3, 2), "float32")):
        T.func_attr({"tir.noalias": True})
        for ax0, ax1 in T.grid(3, 2):
            with T.block("T_transpose"):
                v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
                T_transpose[v_ax0, v_ax1] = A[v_ax1, v_ax0]

    func = te.create_prim_func([A, B])
    assert_structural_equal(func.with_attr("global_symbol", "expected"), expected)
    assert B.op.tag == "injective"


@pytest.mark.parametrize("axes", [None, (0, 2, 1), (2, 0, 1), (-1, 0, 1)])
def test_transpose_runs_like_numpy(axes):
    A = te.placeholder((2, 3, 4), name="A")
    B = topi.transpose(A, axes)
    a = arange((2, 3, 4))
    want = np.transpose(a, axes)
    assert_runs_like(te.create_prim_func([A, B]), [a, np.zeros(want.shape, "float32")], [1],
                     [want])


def test_reshape_matches_tvms_index_arithmetic():
    """TVM's own test: reshape (2, 4) -> (4, 2) with int64 indices."""
    A = te.placeholder((tir.IntImm("int64", 2), tir.IntImm("int64", 4)), name="A")
    B = topi.reshape(A, (4, 2))

    @T.prim_func
    def expected(A: T.Buffer((T.int64(2), T.int64(4)), "float32"),
                 T_reshape: T.Buffer((T.int64(4), T.int64(2)), "float32")):
        T.func_attr({"global_symbol": "main", "tir.noalias": True})
        for i0, i1 in T.grid(T.int64(4), T.int64(2)):
            with T.block("T_reshape"):
                ax0, ax1 = T.axis.remap("SS", [i0, i1])
                T_reshape[ax0, ax1] = A[(ax0 * T.int64(2) + ax1) % T.int64(8) // T.int64(4),
                                        (ax0 * T.int64(2) + ax1) % T.int64(4)]

    func = te.create_prim_func([A, B], index_dtype_override="int64")
    assert_structural_equal(func, expected)
    a = arange((2, 4))
    assert_runs_like(func, [a, np.zeros((4, 2), "float32")], [1], [a.reshape(4, 2)])


@pytest.mark.parametrize("src, dst", [((2, 3, 4), (6, 4)), ((6, 4), (2, 2, 6)), ((5,), (5, 1)),
                                      ((2, 3), (6,))])
def test_reshape_runs_like_numpy(src, dst):
    A = te.placeholder(src, name="A")
    B = topi.reshape(A, dst)
    a = arange(src)
    assert_runs_like(te.create_prim_func([A, B]), [a, np.zeros(dst, "float32")], [1],
                     [a.reshape(dst)])


def test_reshape_with_the_wrong_element_count_is_refused():
    A = te.placeholder((2, 3), name="A")
    with pytest.raises(mlckit.TVMError, match=r"cannot reshape 'A' \(2, 3\) \(6 elements\) to "
                                              r"\(4, 2\) \(8 elements\)"):
        topi.reshape(A, (4, 2))
    with pytest.raises(mlckit.TVMError, match="does not infer -1"):
        topi.reshape(A, (-1,))


def test_expand_dims_and_squeeze():
    A = te.placeholder((3, 4), name="A")
    B = topi.expand_dims(A, 1, 2)
    assert [int(s) for s in B.shape] == [3, 1, 1, 4] and B.op.name == "T_expand_dims"
    C = topi.squeeze(B)
    D = topi.squeeze(B, [1])
    assert [int(s) for s in C.shape] == [3, 4] and [int(s) for s in D.shape] == [3, 1, 4]
    a = arange((3, 4))
    func = te.create_prim_func([A, B, C, D])
    assert_runs_like(func, [a, np.zeros((3, 1, 1, 4), "float32"), np.zeros((3, 4), "float32"),
                            np.zeros((3, 1, 4), "float32")], [1, 2, 3],
                     [a[:, None, None, :], a, a[:, None, :]])


def test_matmul_is_tvms_t_matmul():
    A = te.placeholder((4, 3), name="A")
    B = te.placeholder((3, 5), name="B")
    C = topi.matmul(A, B)
    assert (C.op.name, C.op.tag) == ("T_matmul", "matmul")

    @T.prim_func
    def expected(A: T.Buffer((4, 3), "float32"), B: T.Buffer((3, 5), "float32"),
                 T_matmul: T.Buffer((4, 5), "float32")):
        T.func_attr({"tir.noalias": True})
        for ax0, ax1, k in T.grid(4, 5, 3):
            with T.block("T_matmul"):
                v_ax0, v_ax1, v_k = T.axis.remap("SSR", [ax0, ax1, k])
                with T.init():
                    T_matmul[v_ax0, v_ax1] = T.float32(0)
                T_matmul[v_ax0, v_ax1] = T_matmul[v_ax0, v_ax1] + A[v_ax0, v_k] * B[v_k, v_ax1]

    func = te.create_prim_func([A, B, C])
    assert_structural_equal(func.with_attr("global_symbol", "expected"), expected)


@pytest.mark.parametrize("transp_a, transp_b", [(False, False), (True, False), (False, True),
                                                (True, True)])
def test_matmul_transposes_run_like_numpy(transp_a, transp_b):
    a = arange((3, 4)) / 10
    b = arange((4, 5)) / 10
    a_in = a.T.copy() if transp_a else a
    b_in = b.T.copy() if transp_b else b
    A = te.placeholder(a_in.shape, name="A")
    B = te.placeholder(b_in.shape, name="B")
    C = topi.matmul(A, B, transp_a, transp_b)
    assert_runs_like(te.create_prim_func([A, B, C]), [a_in, b_in, np.zeros((3, 5), "float32")],
                     [2], [a @ b], rtol=1e-5)


def test_matmul_refuses_mismatched_reduction():
    A = te.placeholder((4, 3), name="A")
    B = te.placeholder((5, 5), name="B")
    with pytest.raises(mlckit.TVMError, match=r"topi.matmul: the reduction dimensions differ"):
        topi.matmul(A, B)


def test_transpose_refuses_a_non_permutation():
    A = te.placeholder((2, 3), name="A")
    with pytest.raises(mlckit.TVMError, match=r"not a permutation"):
        topi.transpose(A, (0, 0))
    with pytest.raises(mlckit.TVMError, match=r"axis=2 is invalid"):
        topi.transpose(A, (0, 2))
