"""Every PrimFunc te builds prints as TVMScript that parses back to the same function."""

import pytest

from mlckit import te, tir

from ..script.roundtrip import assert_roundtrip
from .test_create_prim_func import course_mm_relu
from .test_reduce import argmax_workload


def multi_output():
    n = te.var("n")
    A = te.placeholder((n, 4), name="A")
    B0, B1 = te.compute((n, 4), lambda i, j: (A[i, j] + 2, A[i, j] * 3), name="B")
    return [A, B0, B1]


def layout_free():
    k = te.reduce_axis((0, 16), "k")
    A = te.placeholder((16, 16), name="A")
    B = te.placeholder((16, 16), name="B")
    C = te.compute((16, 16), lambda x, y: te.sum(A[x, k] * B[y, k], axis=k), name="C",
                   attrs={"layout_free_placeholders": [B]})
    D = te.compute((16, 16), lambda x, y: C[x, y] + 1, name="D",
                   attrs={"layout_free_placeholders": [C]})
    return [A, B, D]


def nested_domain():
    x = te.placeholder((4, 4, 4), "float32", "x")

    def fcompute(i, j):
        r1 = te.reduce_axis(tir.Range.from_min_extent(0, j))
        r2 = te.reduce_axis(tir.Range.from_min_extent(0, r1))
        return te.sum(x(i, r1, r2), [r1, r2])

    return [x, te.compute((4, 4), fcompute, name="y")]


def zero_dim():
    a = te.placeholder((), name="a", dtype="int32")
    return [a, te.compute((), lambda: a() * 2, name="c")]


def masked_sum():
    A = te.placeholder((6, 6), name="A")
    k = te.reduce_axis((0, 6), name="k")
    return [A, te.compute((6,), lambda i: te.sum(A[i, k], axis=k, where=k <= i), name="B")]


WORKLOADS = {
    "mm_relu": lambda: list(course_mm_relu()),
    "argmax": lambda: list(argmax_workload()),
    "multi_output": multi_output,
    "layout_free": layout_free,
    "nested_domain": nested_domain,
    "zero_dim": zero_dim,
    "masked_sum": masked_sum,
}


@pytest.mark.parametrize("name", sorted(WORKLOADS))
@pytest.mark.parametrize("index_dtype", [None, "int64"])
def test_created_functions_round_trip(name, index_dtype):
    assert_roundtrip(te.create_prim_func(WORKLOADS[name](), index_dtype_override=index_dtype))
