"""Simplifying vector expressions: scalar parts simplified, ramps and broadcasts combined (each
expected result is what TVM 0.27's StmtSimplify prints for the same input)."""

from __future__ import annotations

import pytest

import mlckit as tvm
from mlckit import arith, tir
from mlckit.script import tir as T

i = tir.Var("i", "int32")
x = tir.Var("x", "float32")


@pytest.mark.parametrize("before, after", [
    (tir.Ramp(tir.Add(i * 4, tir.IntImm("int32", 0)), 1, 4), tir.Ramp(i * 4, 1, 4)),
    (tir.Add(tir.Ramp(8, 1, 4), tir.Broadcast(4, 4)), tir.Ramp(12, 1, 4)),
    (tir.Add(tir.Ramp(0, 1, 4), tir.Ramp(0, 1, 4)), tir.Ramp(0, 2, 4)),
    (tir.Sub(tir.Broadcast(i, 4), tir.Ramp(0, 1, 4)), tir.Ramp(i, -1, 4)),
    (tir.Mul(tir.Ramp(i, 1, 4), tir.Broadcast(2, 4)), tir.Ramp(i * 2, 2, 4)),
    (tir.Add(tir.Broadcast(x, 4), tir.Broadcast(tir.FloatImm("float32", 1.0), 4)),
     tir.Broadcast(x + tir.FloatImm("float32", 1.0), 4)),
])
def test_ramps_and_broadcasts_combine(before, after):
    tvm.ir.assert_structural_equal(arith.Analyzer().simplify(before), after)


VS4 = tir.vscale() * 4


@pytest.mark.parametrize("before, after", [
    (tir.Add(tir.Ramp(8, 1, VS4), tir.Broadcast(4, VS4)), tir.Ramp(12, 1, VS4)),
    (tir.Mul(tir.Ramp(i, 1, VS4), tir.Broadcast(2, VS4)), tir.Ramp(i * 2, 2, VS4)),
    (tir.Add(tir.Broadcast(i, VS4), tir.Broadcast(1, VS4)), tir.Broadcast(i + 1, VS4)),
])
def test_scalable_ramps_and_broadcasts_combine_by_the_same_rules(before, after):
    tvm.ir.assert_structural_equal(arith.Analyzer().simplify(before), after)


def test_the_simplify_pass_reaches_inside_vectors():
    @T.prim_func(private=True)
    def before(A: T.Buffer((64,), "float32"), x: T.float32):
        A[T.Ramp(T.Add(4, 0), 1, 4)] = (T.Broadcast(x, 4) + T.Broadcast(T.float32(1), 4)
                                        + A[T.Ramp(4, 1, 4)])
        A[T.Ramp(8, 1, 4) + T.Broadcast(4, 4)] = A[T.Ramp(0, 1, 4) + T.Ramp(0, 1, 4)]

    @T.prim_func(private=True)
    def expected(A: T.Buffer((64,), "float32"), x: T.float32):
        A[4:8] = T.Broadcast(x + T.float32(1), 4) + A[T.Ramp(4, 1, 4)]
        A[12:16] = A[T.Ramp(0, 2, 4)]

    after = tvm.tir.transform.Simplify()(tvm.IRModule({"main": before}))["main"]
    tvm.ir.assert_structural_equal(after, expected)
