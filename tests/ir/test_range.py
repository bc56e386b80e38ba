"""``tvm.ir.Range``: TVM's interval from bounds, ``[begin, end)``, over TIR's Range node."""

import mlckit as tvm
from mlckit import tir
from mlckit.ir import assert_structural_equal
from mlckit.script import ir as I


def test_range_takes_begin_and_end_as_tvm_does():
    r = tvm.ir.Range(2, 8)
    assert (r.min.value, r.extent.value) == (2, 6)
    assert str(r) == "I.Range(2, 8)"


def test_one_bound_is_the_end_from_zero():
    r = tvm.ir.Range(5)
    assert (r.min.value, r.extent.value) == (0, 5)


def test_from_min_extent_takes_the_extent():
    r = tvm.ir.Range.from_min_extent(2, 8)
    assert (r.min.value, r.extent.value) == (2, 8)
    assert str(r) == "I.Range(2, 10)"


def test_symbolic_bounds_give_their_difference_unsimplified_as_tvm():
    n = tir.Var("n", "int32")
    assert_structural_equal(tvm.ir.Range(n, n + 4).extent, (n + 4) - n)
    assert tvm.ir.Range(0, n).extent is n


def test_every_range_node_is_an_ir_range():
    assert isinstance(tir.Range(0, 4), tvm.ir.Range)
    assert not isinstance(4, tvm.ir.Range)


def test_the_printed_range_evaluates_back_to_an_equal_range():
    r = tvm.ir.Range.from_min_extent(3, 4)
    assert_structural_equal(eval(str(r), {"I": I}), r)
