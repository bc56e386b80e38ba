"""inverse_affine_iter_map: iterators written back in the values of their map (TVM's
arith.InverseAffineIterMap), and detect_iter_map(bijective=True) accepting only one-to-one
maps."""

import itertools

import pytest

from mlckit.arith.iter_affine_map import detect_iter_map
from mlckit.arith.iter_map_inverse import inverse_affine_iter_map, invert
from mlckit.tir import expr as E
from mlckit.tir.expr import IntImm, Range, Var
from mlckit.tir.traversal import substitute


def i32(v):
    return IntImm("int32", v)


vi, vj = Var("vi", "int32"), Var("vj", "int32")
DOMS = {vi: Range(i32(0), i32(8)), vj: Range(i32(0), i32(6))}
P = [Var(f"p{k}", "int32") for k in range(3)]


def _value(e, env):
    out = substitute(e, {v: i32(x) for v, x in env.items()})
    from mlckit.arith import Analyzer

    return int(Analyzer().simplify(out).value)


MAPS = {
    "packed": [E.floordiv(vi, i32(4)), vj, E.floormod(vi, i32(4))],
    "unit and permuted": [i32(0), vj, vi],
    "fused": [E.add(E.mul(vi, i32(6)), vj)],
    "fused across a split": [E.add(E.mul(vi, i32(2)), E.floordiv(vj, i32(3))),
                             E.floormod(vj, i32(3))],
}


@pytest.mark.parametrize("name", list(MAPS))
def test_the_inverse_gives_back_every_point(name):
    indices = MAPS[name]
    sums = detect_iter_map(indices, DOMS, bijective=True)
    inverse = inverse_affine_iter_map(sums, P[:len(indices)])
    assert set(inverse) == {vi, vj}
    assert {str(k): str(v) for k, v in invert(indices, DOMS, P[:len(indices)]).items()} == \
        {str(k): str(v) for k, v in inverse.items()}
    for x, y in itertools.product(range(8), range(6)):
        outputs = {p: _value(e, {vi: x, vj: y}) for p, e in zip(P, indices)}
        assert (_value(inverse[vi], outputs), _value(inverse[vj], outputs)) == (x, y)


def test_the_inverse_of_a_packed_layout_as_tvm_writes_it():
    sums = detect_iter_map(MAPS["packed"], DOMS, bijective=True)
    inverse = inverse_affine_iter_map(sums, P)
    assert str(inverse[vi]) == "p2 + p0 * 4" and inverse[vj] is P[1]


@pytest.mark.parametrize("indices", [
    [E.floordiv(vi, i32(2)), vj],       # vi // 2: two values of vi to one place
    [vi],                               # vj unused: six points to one place
], ids=["coarser", "unused iterator"])
def test_a_map_that_is_not_one_to_one_is_not_bijective(indices):
    assert detect_iter_map(indices, DOMS) is not None  # still surjective
    assert detect_iter_map(indices, DOMS, bijective=True) is None
    assert invert(indices, DOMS, P[:len(indices)]) is None
