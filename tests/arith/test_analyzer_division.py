"""Floor division and modulo by a constant: the terms whose coefficient the divisor divides
leave the division, as TVM's simplifier writes it (``(vi * 6 + vj) // 2`` is
``vi * 3 + vj // 2``, exact for any integers), the constant staying inside a division and
taken modulo the divisor inside a modulo; the value is unchanged."""

import itertools

import pytest

from mlckit.arith import Analyzer
from mlckit.arith.analyzer import substitute
from mlckit.tir import floordiv, floormod
from mlckit.tir.expr import IntImm, Range, Var

vi, vj, vk = (Var(name, "int32") for name in ("vi", "vj", "vk"))

# (expression, as TVM 0.27's Analyzer.simplify prints it)
CASES = [
    (floordiv(vi * 6 + vj, 2), "vi * 3 + vj // 2"),
    (floordiv(vi * 6 + vj + 7, 2), "vi * 3 + (vj + 7) // 2"),
    (floormod(vi * 6 + vj + 7, 2), "(vj + 1) % 2"),
    (floordiv(vi * 4 + vj * 3, 2), "vi * 2 + vj * 3 // 2"),
    (floordiv(vi * 6 + vj * 2 + vk, 3), "vi * 2 + (vj * 2 + vk) // 3"),
    (floormod(vi * 6 + vj * 2 + vk, 3), "(vj * 2 + vk) % 3"),
    (floordiv(vi * 6 + vj * 4 + vk + 5, 2), "vi * 3 + vj * 2 + (vk + 5) // 2"),
    (floordiv(vi * -6 + vj, 2), "vj // 2 - vi * 3"),
    (floormod(vi * -6 + vj, 2), "vj % 2"),
    (floormod(vj + 7, 2), "(vj + 1) % 2"),
    # nothing the divisor divides: the division stays whole
    (floordiv(vj + 7, 2), "(vj + 7) // 2"),
    (floordiv(vi * 6 + vj * 2, 4), "(vi * 6 + vj * 2) // 4"),
    (floormod(vi * 6 + vj * 3, 4), "(vi * 6 + vj * 3) % 4"),
    # all of it divided: a sum without division
    (floordiv(vi * 6 + 7, 3), "vi * 2 + 2"),
    (floormod(vi * 6 + 7, 3), "1"),
]


@pytest.mark.parametrize(("expr", "tvm"), CASES, ids=[t for _, t in CASES])
def test_multiples_of_the_divisor_leave_the_division_as_in_tvm(expr, tvm):
    assert str(Analyzer().simplify(expr)) == tvm


@pytest.mark.parametrize(("expr", "_tvm"), CASES, ids=[t for _, t in CASES])
def test_the_simplified_division_has_the_same_value(expr, _tvm):
    simplified = Analyzer().simplify(expr)
    for values in itertools.product(range(-7, 8), repeat=3):
        binding = {v: IntImm("int32", x) for v, x in zip((vi, vj, vk), values)}
        want = Analyzer().simplify(substitute(expr, binding))
        got = Analyzer().simplify(substitute(simplified, binding))
        assert isinstance(want, IntImm) and isinstance(got, IntImm)
        assert got.value == want.value, (values, str(simplified))


def test_bounds_that_keep_the_rest_in_one_quotient_still_remove_the_division():
    ana = Analyzer()
    ana.bind(vj, Range(IntImm("int32", 0), IntImm("int32", 2)))
    assert str(ana.simplify(floordiv(vi * 6 + vj, 2))) == "vi * 3"
    assert str(ana.simplify(floormod(vi * 6 + vj, 2))) == "vj"
