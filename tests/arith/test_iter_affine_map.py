"""iter_map_simplify: block bindings printed back from their iterator map, as TVM 0.27's
``arith.IterMapSimplify`` prints them (the expected forms are TVM's)."""

from mlckit.arith.iter_affine_map import detect_iter_map, iter_map_simplify
from mlckit.ir import assert_structural_equal
from mlckit.tir import expr as E
from mlckit.tir.expr import IntImm, Range, Var


def iters(*specs):
    """Loop variables and their ranges from ``("i", 4), ("j", 8), ...``."""
    vs = [Var(name, "int32") for name, _ in specs]
    return vs, {v: Range(IntImm("int32", 0), IntImm("int32", n)) for v, (_, n) in zip(vs, specs)}

def test_a_split_binding_is_the_flattened_sum():
    (i0, i1), dom = iters(("i_0", 4), ("i_1", 4))
    (out,) = iter_map_simplify([i0 * 4 + i1], dom)
    assert_structural_equal(out, i0 * 4 + i1)

def test_a_predicate_keeps_its_sum_together():
    # re-splitting i_0 of ``for i_0, i_1 in T.grid(3, 4)`` (extent 10) by 2: TVM writes
    # (i_0_0 * 2 + i_0_1) * 4 + i_1, the guarded i_0 as one term
    (a, b, c), dom = iters(("i_0_0", 2), ("i_0_1", 2), ("i_1", 4))
    pred = E.logical_and(E.LT((a * 2 + b) * 4 + c, IntImm("int32", 10)),
                         E.LT(a * 2 + b, IntImm("int32", 3)))
    (out,) = iter_map_simplify([(a * 2 + b) * 4 + c], dom, pred)
    assert_structural_equal(out, (a * 2 + b) * 4 + c)
    assert str(out) == "(i_0_0 * 2 + i_0_1) * 4 + i_1"

def test_a_nested_predicate_groups_the_inner_split():
    # k (6) split [None, 2, 2], then k_1 split [4, None]: TVM's k_0 * 4 + (k_1_0 + k_1_1) * 2 + k_2
    (k0, k10, k11, k2), dom = iters(("k_0", 2), ("k_1_0", 4), ("k_1_1", 1), ("k_2", 2))
    k1 = k10 + k11
    pred = E.logical_and(E.LT((k0 * 2 + k1) * 2 + k2, IntImm("int32", 6)),
                         E.LT(k1, IntImm("int32", 2)))
    (out,) = iter_map_simplify([k0 * 4 + k1 * 2 + k2], dom, pred)
    assert str(out) == "k_0 * 4 + (k_1_0 + k_1_1) * 2 + k_2"

def test_fused_divisions_stay_divisions_of_the_fused_sum():
    (f0, f1, f2, f3), dom = iters(("f_0", 16), ("f_1", 8), ("f_2", 4), ("f_3", 2))
    fused = ((f0 * 8 + f1) * 4 + f2) * 2 + f3
    out = iter_map_simplify([E.floordiv(fused, 64), E.floormod(fused, 64)], dom)
    assert [str(e) for e in out] == ["(f_0 * 64 + f_1 * 8 + f_2 * 2 + f_3) // 64",
                                     "(f_0 * 64 + f_1 * 8 + f_2 * 2 + f_3) % 64"]

def test_bindings_that_are_no_iterator_map_are_left_as_they_are():
    # i // 2 and i % 4 overlap (they share i's bit 1): TVM keeps both expressions
    (i,), dom = iters(("i", 8))
    values = [E.floordiv(i, 2), E.floormod(i, 4) + 0 * i]
    assert detect_iter_map(values, dom) is None
    out = iter_map_simplify(values, dom)
    assert all(a is b for a, b in zip(out, values))


def test_symbolic_extents_are_left_to_the_caller():
    n = Var("n", "int32")
    i = Var("i", "int32")
    assert iter_map_simplify([i * 2], {i: Range(IntImm("int32", 0), n)}) is None
