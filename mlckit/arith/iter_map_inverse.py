"""Inverting an iterator map: TVM's ``arith.InverseAffineIterMap``.

An iterator map (:func:`~mlckit.arith.iter_affine_map.detect_iter_map`) writes each index as
a sum of splits of marks.  Given the values the indices take, the inverse writes each
iterator back in them: every sum hands its value to its splits (a sum of several splits is
a mixed-radix number: ``value // scale % extent`` each, the outermost without the ``%``),
and every split hands ``value * lower_factor`` to its mark, where the parts of one iterator
add up.  ``compute_inline`` and ``reverse_compute_inline`` use it to read a store at
``B[v0 // 4, v1, v0 % 4]`` (a packed layout) as a function of the place it stores to.

Example::

    sums = detect_iter_map([vi // 4, vj, vi % 4], {vi: Range(0, 8), vj: Range(0, 6)})
    inverse_affine_iter_map(sums, [p0, p1, p2])
    # {vi: p0 * 4 + p2, vj: p1}
"""

from __future__ import annotations

from mlckit.tir import expr as E
from mlckit.tir.expr import IntImm, PrimExpr, Var

from .iter_affine_map import detect_iter_map
from .iter_map_nodes import IterSplit, IterSum, Unsupported


def inverse_affine_iter_map(sums: list[IterSum], outputs: list[PrimExpr]) -> dict:
    """The iterators of ``sums`` (Var -> PrimExpr) as functions of ``outputs``, the values
    the sums take; an iterator no sum uses is absent.  Raises ``Unsupported`` when a sum of
    several splits is not a mixed-radix number (TVM checks the same)."""
    order = _reverse_topological(sums)
    backprop: dict[int, PrimExpr] = {id(node): None for node in order}
    for s, out in zip(sums, outputs):
        backprop[id(s)] = out
    inverse: dict = {}
    for node in order:
        value = backprop[id(node)]
        if value is None:
            continue
        if isinstance(node, IterSum):
            _to_splits(node, value, backprop)
        else:
            _to_mark(node, E.mul(value, _const(value, node.lower_factor)), backprop, inverse)
    return inverse


def invert(indices, input_iters: dict, outputs) -> dict | None:
    """The iterators of ``input_iters`` (Var -> Range) written in ``outputs``, the values
    ``indices`` take, when the indices are a one-to-one affine map of them; None when they
    are not (or are outside this port)."""
    try:
        sums = detect_iter_map(list(indices), input_iters, bijective=True)
        return inverse_affine_iter_map(sums, list(outputs)) if sums is not None else None
    except Unsupported:
        return None


def _const(like: PrimExpr, value: int) -> IntImm:
    return IntImm(like.dtype, value)


def _accumulate(table: dict, key, value: PrimExpr) -> None:
    table[key] = value if table.get(key) is None else E.add(table[key], value)


def _to_splits(node: IterSum, value: PrimExpr, backprop: dict) -> None:
    value = E.sub(value, node.base)
    if len(node.args) == 1:
        split = node.args[0]
        if abs(split.scale) != 1:
            raise Unsupported(f"a sum of one split of scale {split.scale}")
        _accumulate(backprop, id(split), E.mul(value, _const(value, split.scale)))
        return
    expected = node.args[-1].scale if node.args else 1
    for split in reversed(node.args):
        if split.scale != expected:
            raise Unsupported("a sum whose splits are not a mixed-radix number")
        expected *= split.extent
    for k, split in enumerate(node.args):
        part = E.floordiv(value, _const(value, split.scale))
        if k > 0:  # the outermost part spans its whole extent: no modulo
            part = E.floormod(part, _const(value, split.extent))
        _accumulate(backprop, id(split), part)


def _to_mark(split: IterSplit, value: PrimExpr, backprop: dict, inverse: dict) -> None:
    source = split.source.source
    if isinstance(source, IterSum):
        _accumulate(backprop, id(source), value)
    elif isinstance(source, Var):
        _accumulate(inverse, source, value)
    elif isinstance(source, E.Sub) and isinstance(source.a, Var):  # var - min
        _accumulate(inverse, source.a, E.add(value, source.b))
    else:
        raise Unsupported(f"a mark of {source}")


def _reverse_topological(sums: list[IterSum]) -> list:
    """Every sum and split, each before the nodes it hands its value to."""
    post: list = []
    seen: set = set()

    def visit(node) -> None:
        if id(node) in seen:
            return
        seen.add(id(node))
        if isinstance(node, IterSum):
            for split in node.args:
                visit(split)
        elif isinstance(node.source.source, IterSum):
            visit(node.source.source)
        post.append(node)

    for s in sums:
        visit(s)
    return post[::-1]
