"""T.compute sugar expands to the loop nest a learner would write by hand."""

import pytest

import mlckit
from mlckit.ir import assert_structural_equal
from mlckit.script import tir as T


def test_elementwise_compute_equals_the_written_out_block():
    @T.prim_func
    def sugar(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4, 8), "float32"),
              C: T.Buffer((4, 8), "float32")):
        T.compute("C", C, lambda i, j: A[i, j] + B[i, j])

    @T.prim_func
    def written(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4, 8), "float32"),
                C: T.Buffer((4, 8), "float32")):
        for i, j in T.grid(4, 8):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = A[vi, vj] + B[vi, vj]

    assert_structural_equal(sugar.with_attr("global_symbol", "f"),
                            written.with_attr("global_symbol", "f"))
    assert "for i, j in T.grid(4, 8):" in sugar.script()


def test_reduction_compute_sums_with_an_init_block():
    @T.prim_func
    def sugar(A: T.Buffer((4, 6), "float32"), B: T.Buffer((6, 5), "float32"),
              Y: T.Buffer((4, 5), "float32")):
        T.compute("Y", Y, lambda i, j, k: A[i, k] * B[k, j], reduce=[6])

    @T.prim_func
    def written(A: T.Buffer((4, 6), "float32"), B: T.Buffer((6, 5), "float32"),
                Y: T.Buffer((4, 5), "float32")):
        for i, j, k in T.grid(4, 5, 6):
            with T.block("Y"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    Y[vi, vj] = T.float32(0)
                Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]

    assert_structural_equal(sugar.with_attr("global_symbol", "f"),
                            written.with_attr("global_symbol", "f"))


def test_compute_with_the_wrong_number_of_indices_is_a_located_error():
    text = '''
@T.prim_func
def f(A: T.Buffer((4, 4), "float32"), C: T.Buffer((4, 4), "float32")):
    T.compute("C", C, lambda i: A[i, i])
'''
    with pytest.raises(mlckit.DiagnosticError, match="takes 1 argument") as err:
        mlckit.script.from_source(text)
    assert err.value.line == 4
