"""Detection of an iterator map: TVM's IterMapRewriter (without padding), which rewrites
index expressions into ``IterSum``s of ``IterSplit``s and fuses sums into marks (see
:mod:`mlckit.arith.iter_affine_map`).
"""

from __future__ import annotations

from mlckit.tir import expr as E
from mlckit.tir.expr import IntImm, PrimExpr, Var

from .iter_map_nodes import (
    IterMark,
    IterSplit,
    IterSum,
    Unsupported,
    _int,
    _is_iter,
    _NotAMap,
    _to_sum,
    _uses,
)


class _Rewriter:
    """Rewrites index expressions into IterSums (TVM's IterMapRewriter, without padding)."""

    def __init__(self, input_iters: dict, simplify_trivial: bool):
        self.var_map: dict[int, object] = {}
        for var, rng in input_iters.values():
            mn, ext = _int(rng.min), _int(rng.extent)
            if simplify_trivial and ext == 1:
                self.var_map[id(var)] = IterSum([], IntImm(var.dtype, mn))
            elif mn == 0:
                self.var_map[id(var)] = IterSplit(IterMark(var, ext))
            else:
                mark = IterMark(E.sub(var, IntImm(var.dtype, mn)), ext)
                self.var_map[id(var)] = IterSum([IterSplit(mark)], IntImm(var.dtype, mn))
        # flattened form of a fused sum -> (its mark, offset); structured -> flattened form
        self.sum_fuse: dict[tuple, tuple[IterMark, int]] = {}
        self.flattened: dict[tuple, IterSum] = {}
        self.constrained: list[IterSum] = []

    # expressions -> iterator expressions
    def visit(self, e):
        if isinstance(e, Var):
            return self.var_map.get(id(e), e)
        if isinstance(e, IntImm):
            return e
        if isinstance(e, (E.Add, E.Sub)):
            a, b = self.visit(e.a), self.visit(e.b)
            if not _is_iter(a) and not _is_iter(b):
                return E.add(a, b) if isinstance(e, E.Add) else E.sub(a, b)
            sign = 1 if isinstance(e, E.Add) else -1
            ret = _to_sum(a, e.dtype)
            if not _is_iter(b):
                ret.base = E.add(ret.base, b) if sign > 0 else E.sub(ret.base, b)
            else:
                rhs = _to_sum(b, e.dtype)
                for arg in rhs.args:
                    _add_split(ret, arg, sign)
                ret.base = E.add(ret.base, rhs.base) if sign > 0 else E.sub(ret.base, rhs.base)
            return ret
        if isinstance(e, E.Mul):
            a, b = self.visit(e.a), self.visit(e.b)
            if not _is_iter(a) and not _is_iter(b):
                return E.mul(a, b)
            if _is_iter(a) and _is_iter(b):
                raise _NotAMap("product of two iterators")
            if not _is_iter(a):
                a, b = b, a
            c = _int(b)
            if c == 0:
                return IntImm(e.dtype, 0)
            if isinstance(a, IterSplit):
                return a.copy(scale=a.scale * c)
            return IterSum([s.copy(scale=s.scale * c) for s in a.args], E.mul(a.base, b))
        if isinstance(e, (E.FloorDiv, E.FloorMod)):
            a, b = self.visit(e.a), self.visit(e.b)
            if not _is_iter(a) and not _is_iter(b):
                return E.floordiv(a, b) if isinstance(e, E.FloorDiv) else E.floormod(a, b)
            if _is_iter(b):
                raise _NotAMap("division by an iterator")
            c = _int(b)
            if c <= 0:
                raise Unsupported("non-positive divisor")
            if c == 1:
                return a if isinstance(e, E.FloorDiv) else IntImm(e.dtype, 0)
            dividend = self._preprocess_dividend(a, e.dtype)
            split, base = dividend.args[0], _int(dividend.base)
            if isinstance(e, E.FloorDiv):
                return self._split_floordiv(split, base, c, e.dtype)
            return self._split_floormod(split, base, c, e.dtype)
        if _uses(e, self.var_map):
            raise _NotAMap(f"{type(e).__name__} of an iterator")
        return e

    def _preprocess_dividend(self, a, dtype) -> IterSum:
        if isinstance(a, IterSplit):
            return IterSum([a], IntImm(dtype, 0))
        if not a.args:
            raise Unsupported("dividend without iterators")
        if len(a.args) == 1:
            return a
        fused = self.try_fuse(a, allow_early_skip=True)
        if fused is None:
            raise _NotAMap("the dividend is not a single fused iterator")
        return fused

    @staticmethod
    def _check_no_padding(split: IterSplit, base: int, c: int) -> None:
        if base % c != 0 or split.extent % c != 0:
            raise Unsupported("the division needs padding")

    def _split_floordiv(self, lhs: IterSplit, base: int, c: int, dtype):
        if lhs.scale != 1:
            if lhs.scale % c == 0 and base == 0:
                return lhs.copy(scale=lhs.scale // c)
            if lhs.scale % c == 0 and base % c == 0:
                return IterSum([lhs.copy(scale=lhs.scale // c)], IntImm(dtype, base // c))
            if c % lhs.scale == 0 and base % lhs.scale == 0:
                base, c = base // lhs.scale, c // lhs.scale
                lhs = lhs.copy(scale=1)
            else:
                raise _NotAMap("the scale and the divisor do not divide")
        self._check_no_padding(lhs, base, c)
        new = IterSplit(lhs.source, lhs.lower_factor * c, lhs.extent // c, lhs.scale)
        return new if base // c == 0 else IterSum([new], IntImm(dtype, base // c))

    def _split_floormod(self, lhs: IterSplit, base: int, c: int, dtype):
        if lhs.scale != 1:
            if lhs.scale % c == 0 and base % c == 0:
                return IntImm(dtype, 0)
            if c % lhs.scale == 0 and base % lhs.scale == 0:
                base, c = base // lhs.scale, c // lhs.scale
            else:
                raise _NotAMap("the scale and the divisor do not divide")
        self._check_no_padding(lhs, base, c)
        return IterSplit(lhs.source, lhs.lower_factor, c, lhs.scale)

    # fusing a sum into one iterator
    def try_fuse(self, expr: IterSum, allow_early_skip: bool) -> IterSum | None:
        """``x1*c1 + ... + xn*cn + base`` as one mark ``(x1*s1 + ... + xn) * cn + base``
        (the splits must tile it: each scale is the product of the extents below)."""
        combined = _combine_same_source(expr)
        if combined is not None:
            expr = combined
            if len(expr.args) <= 1 and allow_early_skip:
                return expr
        args = expr.args
        visited = [False] * len(args)
        base_index = _find_base(args, visited, None)
        if base_index == -1:
            return None
        base_scale = args[base_index].scale
        flattened, grouped = [], []
        extra_base, tail_extent, expected = 0, 0, base_scale
        first_unit = next((i for i, a in enumerate(args) if a.extent == 1), len(args))
        i = 0
        while i < len(args):
            pos = base_index if i == 0 else _find_exact_scale(args, visited, expected, None,
                                                              -1, first_unit)
            exact = pos != -1
            matched_scale = expected
            if pos == -1 and base_scale == 1:
                pos, matched_scale = _find_smaller_closest(args, visited, expected)
            if pos == -1:
                return None
            constraint = None
            for it in self.constrained:
                if args[pos].key(False) == it.args[-1].key(False):
                    if constraint is None or len(constraint.args) < len(it.args):
                        constraint = it
            if constraint is not None:
                for c in reversed(constraint.args):
                    k = next((k for k, a in enumerate(args) if not visited[k]
                              and a.key(False) == c.key(False)
                              and c.scale * matched_scale == a.scale), None)
                    if k is None:
                        return None
                    visited[k] = True
                    flattened.append(args[k])
                mark, offset = self.sum_fuse[constraint.key()]
                grouped.append(IterSplit(mark, scale=matched_scale // base_scale))
                extra_base += offset * matched_scale
                if not exact:
                    tail_extent += expected - matched_scale
                expected = mark.extent * matched_scale
                i += len(constraint.args)
            else:
                visited[pos] = True
                arg = args[pos].copy(scale=args[pos].scale // base_scale)
                flattened.append(arg)
                grouped.append(arg)
                if not exact:
                    tail_extent += expected - matched_scale
                expected = args[pos].extent * matched_scale
                i += 1
        dtype = expr.base.dtype
        zero = IntImm(dtype, 0)
        flat = IterSum(flattened[::-1], zero)
        structured = IterSum(grouped[::-1], zero)
        new_base = E.add(expr.base, IntImm(dtype, extra_base))
        known = self.sum_fuse.get(flat.key())
        if known is not None:
            mark, offset = known
            if extra_base != offset * base_scale:
                return None
            return IterSum([IterSplit(mark, scale=base_scale)], new_base)
        mark = IterMark(structured, int(expected / base_scale) + tail_extent)
        self.sum_fuse[flat.key()] = (mark, extra_base)
        self.flattened[structured.key()] = flat
        return IterSum([IterSplit(mark, scale=base_scale)], new_base)

    def rewrite(self, e: PrimExpr) -> IterSum:
        s = _to_sum(self.visit(e), e.dtype)
        if not s.args:
            return s
        fused = self.try_fuse(s, allow_early_skip=True)
        if fused is None:
            raise _NotAMap(f"{e} is not a fused iterator")
        return fused

    def add_constraint(self, e: PrimExpr, lower: int | None, upper: int | None) -> None:
        """``lower <= e < upper``: ``e`` becomes a mark of its own with that range."""
        s = _to_sum(self.visit(e), e.dtype)
        base = _int(s.base)
        s.base = IntImm(e.dtype, 0)
        lower = None if lower is None else lower - base
        upper = None if upper is None else upper - base
        fused = self.try_fuse(s, allow_early_skip=False)
        if fused is None or fused.args[0].scale != 1:
            raise _NotAMap(f"the constraint on {e} is not a fused iterator")
        structured = fused.args[0].source.source
        flat = self.flattened[structured.key()]
        mark, offset = self.sum_fuse[flat.key()]
        lo, hi = offset, offset + mark.extent
        delta = 0
        if lower is not None:
            delta = max(lower, lo) - lo
            lo = max(lower, lo)
        if upper is not None:
            hi = min(upper, hi)
        if delta != 0:
            del self.flattened[structured.key()]
            structured = IterSum(structured.args, E.sub(structured.base, IntImm(e.dtype, delta)))
            self.flattened[structured.key()] = flat
        self.sum_fuse[flat.key()] = (IterMark(structured, hi - lo), lo)
        self.constrained.append(flat)

    def constraints_nested(self) -> bool:
        """Any two constrained sums are disjoint or one contains the other."""
        for i, a in enumerate(self.constrained):
            for b in self.constrained[i + 1:]:
                keys = {s.key() for s in b.args}
                found = [s.key() in keys for s in a.args]
                if any(found) and not all(found):
                    return False
        return True


def _add_split(lhs: IterSum, rhs: IterSplit, sign: int) -> None:
    for i, arg in enumerate(lhs.args):
        if arg.source is rhs.source and arg.lower_factor == rhs.lower_factor \
                and arg.extent == rhs.extent:
            lhs.args[i] = rhs.copy(scale=arg.scale + sign * rhs.scale)
            return
    lhs.args.append(rhs if sign > 0 else rhs.copy(scale=-rhs.scale))


def _find_base(args, skip, source, rbegin: int = -1) -> int:
    """The unvisited split with the smallest scale (a unit-extent one on ties)."""
    rbegin = len(args) - 1 if rbegin == -1 else rbegin
    best = -1
    for i in range(rbegin, -1, -1):
        if skip[i] or (source is not None and args[i].source is not source):
            continue
        if best == -1 or args[i].scale < args[best].scale:
            best = i
        elif args[i].scale == args[best].scale and args[i].extent == 1 \
                and args[best].extent != 1:
            best = i
    return best


def _find_exact_scale(args, skip, scale, source, rbegin: int = -1, first_unit: int = 0) -> int:
    """The split with exactly ``scale``, searched from the end; unit extents first."""
    rbegin = len(args) - 1 if rbegin == -1 else rbegin
    matched = -1
    for j in range(rbegin, -1, -1):
        if skip[j] or (source is not None and args[j].source is not source):
            continue
        if args[j].scale == scale:
            if args[j].extent == 1:
                return j
            if matched == -1:
                matched = j
            if j <= first_unit:
                return matched
    return matched


def _find_smaller_closest(args, skip, scale) -> tuple[int, int]:
    matched, matched_scale = -1, None
    for j in range(len(args) - 1, -1, -1):
        if skip[j]:
            continue
        cur = args[j].scale
        if scale - cur >= 0 and cur >= 0 and (matched == -1 or matched_scale < cur):
            matched, matched_scale = j, cur
    return matched, matched_scale


def _combine_same_source(expr: IterSum) -> IterSum | None:
    """``x // (c*s) % m * s + x // c % s`` is ``x // c % (m*s)``: merge neighbouring splits of
    one mark (None when no mark appears twice)."""
    counts: dict[int, int] = {}
    for a in expr.args:
        counts[id(a.source)] = counts.get(id(a.source), 0) + 1
    if all(n == 1 for n in counts.values()):
        return None
    args = expr.args
    visited = [False] * len(args)
    first_unit = next((i for i, a in enumerate(args) if a.extent == 1), len(args))
    out = []
    rend = len(args) - 1
    while rend >= 0:
        if visited[rend]:
            rend -= 1
            continue
        if counts[id(args[rend].source)] == 1:
            out.append(args[rend])
            visited[rend] = True
            rend -= 1
            continue
        k = _find_base(args, visited, args[rend].source, rend)
        visited[k] = True
        rhs = args[k]
        while True:
            k = _find_exact_scale(args, visited, rhs.extent * rhs.scale, rhs.source, rend,
                                  first_unit)
            if k == -1 or args[k].lower_factor != rhs.lower_factor * rhs.extent:
                break
            visited[k] = True
            rhs = rhs.copy(extent=args[k].extent * rhs.extent)
        out.append(rhs)
    return IterSum(out[::-1], expr.base)
