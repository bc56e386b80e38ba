"""What the Analyzer knows inside ``constraint_scope``: bounds, (in)equalities, literals,
disjunctions, and (when enabled) transitive inequalities.  Each expected result is what TVM
0.27's Analyzer gives in the same ``ConstraintContext`` (checked with TVM 0.27), except where
a test says otherwise."""

from __future__ import annotations

import pytest

import mlckit as tvm
from mlckit import arith, tir

i, j, k, n = (tir.Var(name, "int32") for name in "ijkn")
c = tir.Var("c", "bool")


def _lt(a, b):
    return tir.LT(tir.convert(a), tir.convert(b))


def _le(a, b):
    return tir.LE(tir.convert(a), tir.convert(b))


def _eq(a, b):
    return tir.EQ(tir.convert(a), tir.convert(b))


def _ne(a, b):
    return tir.NE(tir.convert(a), tir.convert(b))


def _same(a, b):
    tvm.ir.assert_structural_equal(a, b)


def test_a_bound_from_a_scope_holds_only_inside_it():
    ana = arith.Analyzer()
    with ana.constraint_scope(_lt(i, 3)):
        assert ana.can_prove(_lt(i, 5))
        assert ana.simplify(tir.floordiv(i, 4) + 0) is not None
        assert ana.const_int_bound(i).max_value == 2
    assert not ana.can_prove(_lt(i, 5))


def test_a_fractional_bound_rounds_to_the_integers():
    # stronger than TVM's ConstraintContext, which leaves min(1, n) here (its Simplify gets
    # the same result for buffer shapes through MarkGlobalNonNegValue); valid for all n
    ana = arith.Analyzer()
    with ana.constraint_scope(tir.GE(n * 32 - 1, 0)):       # n >= 1/32, so n >= 1
        assert ana.const_int_bound(n).min_value == 1
        _same(ana.simplify(tir.Min(tir.convert(1), n)), tir.convert(1))


def test_an_equality_decides_offsets_of_itself():
    ana = arith.Analyzer()
    with ana.constraint_scope(_eq(i, n)):
        assert ana.can_prove(_lt(i, n + 1))
        assert ana.can_prove(_eq(n, i))
        _same(ana.simplify(_ne(i, n)), tir.IntImm("bool", False))


def test_an_inequation_decides_equality_both_ways():
    ana = arith.Analyzer()
    with ana.constraint_scope(_ne(i, n)):
        _same(ana.simplify(_eq(n, i)), tir.IntImm("bool", False))
        _same(ana.simplify(_le(i, n)), _lt(i, n))


@pytest.mark.parametrize("known, question, answer", [
    (_le(i, 0), _le(0, i), _eq(i, 0)),
    (_le(i, 0), _ne(i, 0), _lt(i, 0)),
    (_le(i, j), _le(j, i), _eq(j, i)),
    (_ne(i, j), _le(j, i), _lt(j, i)),
])
def test_what_is_known_narrows_a_comparison(known, question, answer):
    ana = arith.Analyzer()
    with ana.constraint_scope(known):
        _same(ana.simplify(question), answer)


def test_a_boolean_variable_is_a_literal():
    ana = arith.Analyzer()
    with ana.constraint_scope(c):
        _same(ana.simplify(c), tir.IntImm("bool", True))
        _same(ana.simplify(tir.Not(c)), tir.IntImm("bool", False))
    _same(ana.simplify(c), c)


def test_a_known_or_gives_its_other_side_once_one_side_fails():
    ana = arith.Analyzer()
    with ana.constraint_scope(tir.Or(_lt(i, 0), _lt(j, 6))):
        assert not ana.can_prove(_lt(j, 6))
        with ana.constraint_scope(_eq(i, 1)):
            assert ana.can_prove(_lt(j, 6))


def test_the_negation_of_an_and_is_known_in_an_else():
    ana = arith.Analyzer()
    cond = tir.And(_eq(i, 1), _le(6, j))
    with ana.constraint_scope(tir.Not(cond)):
        _same(ana.simplify(cond), tir.IntImm("bool", False))


@pytest.mark.parametrize("known, question, provable", [
    (tir.And(_lt(i, j), _lt(j, k)), _lt(i, k), True),
    (tir.And(_le(i, j), _eq(j, k)), _le(i, k), True),
    (tir.And(_le(i, j), _eq(j, k)), _eq(i, k), False),
    (tir.And(_eq(i, j), _ne(j, k)), _ne(i, k), True),
    (tir.And(_lt(i, j + 5), _lt(j, k + 7)), _lt(i, k + 11), True),
    (tir.And(_lt(i, j + 5), _lt(j, k + 7)), _lt(i, k + 10), False),
])
def test_transitive_inequalities(known, question, provable):
    ana = arith.Analyzer()
    with ana.constraint_scope(known):
        assert not ana.can_prove(question)            # off by default, as in TVM
    ana.transitively_prove_inequalities = True
    with ana.constraint_scope(known):
        assert ana.can_prove(question) is provable


def test_a_condition_reading_memory_is_not_learned():
    A = tir.decl_buffer((1,), "int32", name="A")
    load = tir.BufferLoad(A, [tir.convert(0)])
    ana = arith.Analyzer()
    with ana.constraint_scope(_eq(load, n)):
        assert not ana.can_prove(_eq(load, n))


def test_and_of_ors_multiplies_out_and_merges_groups():
    ana = arith.Analyzer()
    ana.convert_boolean_to_and_of_ors = True
    b = [tir.Var(f"b{x}", "bool") for x in range(3)]
    _same(ana.simplify(tir.Or(b[0], tir.And(b[1], b[2]))),
          tir.And(tir.Or(b[0], b[1]), tir.Or(b[0], b[2])))
    before = tir.Or(_eq(j, 0), tir.Or(_eq(k, 20), _ne(k, 30)))
    _same(ana.simplify(before), tir.Or(_eq(j, 0), _ne(k, 30)))


def test_a_long_chain_of_conditions_is_learned_and_used():
    vs = [tir.Var(f"v{x}", "int32") for x in range(30)]
    chain = _lt(vs[-1], 5)
    for v in reversed(vs[:-1]):
        chain = tir.And(_lt(v, 5), chain)
    ana = arith.Analyzer()
    with ana.constraint_scope(tir.Not(chain)):        # some v >= 5
        assert not ana.can_prove(_lt(vs[3], 5))
        _same(ana.simplify(chain), tir.IntImm("bool", False))
