"""mlckit.arith.Analyzer: comparisons proved from bound (possibly symbolic) ranges; linear
forms of integer expressions."""

from mlckit.arith import Analyzer
from mlckit.tir import expr as E
from mlckit.tir.expr import IntImm, Range, Var


def _c(v):
    return IntImm("int64", v)


def _is_true(e):
    return isinstance(e, IntImm) and e.dtype == "bool" and e.value


def test_symbolic_loop_bound_proves_comparisons():
    # for i in range(n): i < n although neither has a constant upper bound (TVM proves it
    # from the loop's range: CanProve with kSymbolicBound / transitive comparisons)
    n, i = Var("n", "int64"), Var("i", "int64")
    ana = Analyzer()
    ana.bind(i, Range(_c(0), n))
    assert _is_true(ana.simplify(E.LT(i, n)))
    assert _is_true(ana.simplify(E.GE(n, i + _c(1))))
    assert ana.can_prove(E.LE(i, n))
    assert ana.can_prove(E.NE(i, n))
    assert isinstance(ana.simplify(E.EQ(i, n)), IntImm) and not ana.simplify(E.EQ(i, n)).value
    # not provable: stays as it is
    assert not ana.can_prove(E.LT(i + _c(1), n))
    assert not ana.can_prove(E.LT(i, n - _c(1)))


def test_symbolic_bound_keeps_tail_predicate():
    # the tail check of a split by 4 of a loop of extent n cannot be proved
    n, i0, i1 = Var("n", "int64"), Var("i0", "int64"), Var("i1", "int64")
    ana = Analyzer()
    ana.bind(i0, Range(_c(0), E.FloorDiv(n + _c(3), _c(4))))
    ana.bind(i1, Range(_c(0), _c(4)))
    assert not ana.can_prove(E.LT(i0 * _c(4) + i1, n))


def test_nested_symbolic_ranges():
    # j in [i, n) with i in [0, n): j < n
    n, i, j = Var("n", "int64"), Var("i", "int64"), Var("j", "int64")
    ana = Analyzer()
    ana.bind(i, Range(_c(0), n))
    ana.bind(j, Range(i, n - i))
    assert ana.can_prove(E.LT(j, n))
    assert ana.can_prove(E.GE(j, _c(0)))


def test_linear_terms_expand_products_of_sums():
    i, j = Var("i", "int64"), Var("j", "int64")
    terms, const = Analyzer().linear_terms((i * 32 + j) * 512 + 3 - j)
    assert [(atom.name_hint, coef) for atom, coef in terms] == [("i", 16384), ("j", 511)]
    assert const == 3


def test_a_comparison_keeps_its_constant_on_the_constant_side():
    # as TVM's rewrite rules: 0 <= h - 1 is 1 <= h, h - 1 < 4 is h < 5
    h = Var("h", "int32")
    ana = Analyzer()
    assert str(ana.simplify(E.LE(_i32(0), h - 1))) == "1 <= h"
    assert str(ana.simplify(E.LT(h - 1, _i32(4)))) == "h < 5"
    assert str(ana.simplify(E.LT(h, _i32(4)))) == "h < 4"


def test_a_unit_range_is_its_minimum_when_asked():
    # TVM's Analyzer::Bind: n of range(1) is 0 (opt-in: compute_at compares with TVM)
    n, i = Var("n", "int32"), Var("i", "int32")
    ana = Analyzer(unit_ranges_as_constants=True)
    ana.bind(n, Range(_i32(0), _i32(1)))
    assert str(ana.simplify(n * 8 + i)) == "i"
    plain = Analyzer()
    plain.bind(n, Range(_i32(0), _i32(1)))
    assert str(plain.simplify(n * 8 + i)) == "n * 8 + i"


def _i32(v):
    return IntImm("int32", v)
