"""tir.functor: PyStmtExprVisitor / PyStmtExprMutator, dispatching to visit_<node>_."""

import numpy as np

from mlckit import tir
from mlckit.backend import lnumpy
from mlckit.script import tir as T
from mlckit.tir.functor import PyStmtExprMutator, PyStmtExprVisitor, mutator, visitor


@T.prim_func
def add_one(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = A[vi] + T.float32(1)


@visitor
class Counter(PyStmtExprVisitor):
    def __init__(self):
        self.stores = 0
        self.loads = []

    def visit_buffer_store_(self, op):
        self.stores += 1
        super().visit_buffer_store_(op)

    def visit_buffer_load_(self, op):
        self.loads.append(op.buffer.name)
        super().visit_buffer_load_(op)


def test_visitor_reaches_every_store_and_load_through_blocks_and_loops():
    v = Counter()
    v.visit_stmt(add_one.body)
    assert v.stores == 1
    assert v.loads == ["A"]


class SBlockNames(PyStmtExprVisitor):
    def __init__(self):
        self.names = []

    def visit_sblock_(self, op):  # TVM 0.27's name of visit_block_
        self.names.append(op.name_hint)
        super().visit_sblock_(op)


def test_visitor_accepts_tvm_027_block_method_names():
    v = SBlockNames()
    v.visit_stmt(add_one.body)
    assert v.names == ["root", "B"]


@mutator
class AddToSub(PyStmtExprMutator):
    def visit_add_(self, op):
        op = super().visit_add_(op)
        return tir.Sub(op.a, op.b)


def test_mutator_rewrites_and_the_result_runs():
    new = add_one.replace(body=AddToSub().visit_stmt(add_one.body))
    assert "B[vi] = A[vi] - T.float32(1.0)" in new.script()
    a = np.arange(8, dtype="float32")
    b = np.zeros(8, dtype="float32")
    lnumpy.build(new)(a, b)
    np.testing.assert_array_equal(b, a - 1)


def test_mutator_that_changes_nothing_returns_the_same_objects():
    assert PyStmtExprMutator().visit_stmt(add_one.body) is add_one.body
