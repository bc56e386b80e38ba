"""The nodes of an iterator map (see :mod:`mlckit.arith.iter_affine_map`): ``IterMark``,
``IterSplit``, ``IterSum``, and the two ways detection gives up.
"""

from __future__ import annotations

from mlckit.tir.expr import IntImm, PrimExpr


class Unsupported(Exception):
    """Outside this port (symbolic scales, padded divisions): fall back."""


class _NotAMap(Exception):
    """The expressions are not an iterator map: TVM leaves them unsimplified."""


class IterMark:
    """An iterator ``source`` (a Var, ``var - min`` or an IterSum) over ``[0, extent)``."""

    def __init__(self, source, extent: int):
        self.source = source
        self.extent = extent


class IterSplit:
    """``source // lower_factor % extent * scale``."""

    __slots__ = ("source", "lower_factor", "extent", "scale")

    def __init__(self, source: IterMark, lower_factor: int = 1, extent: int | None = None,
                 scale: int = 1):
        self.source = source
        self.lower_factor = lower_factor
        self.extent = source.extent if extent is None else extent
        self.scale = scale

    def copy(self, **changes) -> IterSplit:
        out = IterSplit(self.source, self.lower_factor, self.extent, self.scale)
        for k, v in changes.items():
            setattr(out, k, v)
        return out

    def key(self, with_scale: bool = True) -> tuple:
        return (id(self.source), self.lower_factor, self.extent,
                self.scale if with_scale else None)


class IterSum:
    """``sum(args) + base``; ``base`` is a PrimExpr free of iterators."""

    def __init__(self, args: list[IterSplit], base: PrimExpr):
        self.args = args
        self.base = base

    def key(self) -> tuple:
        return (_const_key(self.base),) + tuple(a.key() for a in self.args)


def _const_key(e):
    return e.value if isinstance(e, IntImm) else ("expr", id(e))


def _int(e) -> int:
    if isinstance(e, IntImm):
        return int(e.value)
    raise Unsupported(f"non-constant {e}")


def _is_iter(x) -> bool:
    return isinstance(x, (IterSplit, IterSum))


def _to_sum(x, dtype: str) -> IterSum:
    if isinstance(x, IterSum):
        return IterSum(list(x.args), x.base)
    if isinstance(x, IterSplit):
        return IterSum([x], IntImm(dtype, 0))
    return IterSum([], x)


def _uses(e, var_ids) -> bool:
    from mlckit.arith.analyzer import uses_var

    return uses_var(e, lambda v: id(v) in var_ids)
