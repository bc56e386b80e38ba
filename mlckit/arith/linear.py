"""Structural keys and linear forms: what the analyzer, its constraints and its rewrite
rules share (below all three, so none reaches back into the analyzer for them)."""

from __future__ import annotations

from typing import Any

from mlckit.ir.node import Node
from mlckit.tir import expr as E
from mlckit.tir.expr import IntImm, Var


# -- structural keys (atoms are compared by structure, variables by identity) -----------------
def _key(e) -> Any:
    if isinstance(e, Var):
        return ("var", id(e))
    if isinstance(e, IntImm):
        return ("int", e.value)
    if isinstance(e, E.FloatImm):
        return ("float", e.value)
    if isinstance(e, list):
        return tuple(_key(x) for x in e)
    if isinstance(e, Node):
        parts: list = [type(e).__name__]
        for name in e.field_names():
            v = getattr(e, name)
            if name == "buffer":
                parts.append(id(v))
            elif name == "op":
                parts.append(getattr(v, "name", id(v)))
            else:
                parts.append(_key(v))
        return tuple(parts)
    return e


# -- linear forms -----------------------------------------------------------------------------
class _Lin:
    """``sum(coef * atom) + const``; ``terms`` maps an atom's key to ``[atom, coef]``."""

    __slots__ = ("terms", "const", "dtype")

    def __init__(self, dtype: str, terms: dict | None = None, const: int = 0):
        self.dtype = dtype
        self.terms: dict = terms if terms is not None else {}
        self.const = const

    def copy(self) -> _Lin:
        return _Lin(self.dtype, {k: [a, c] for k, (a, c) in self.terms.items()}, self.const)

    def add_term(self, atom, coef: int) -> None:
        if coef == 0:
            return
        k = _key(atom)
        if k in self.terms:
            self.terms[k][1] += coef
            if self.terms[k][1] == 0:
                del self.terms[k]
        else:
            self.terms[k] = [atom, coef]

    def iadd(self, other: _Lin, scale: int = 1) -> _Lin:
        for atom, coef in list(other.terms.values()):
            self.add_term(atom, coef * scale)
        self.const += other.const * scale
        return self

    def scaled(self, k: int) -> _Lin:
        out = _Lin(self.dtype)
        return out.iadd(self, k)

    def is_const(self) -> bool:
        return not self.terms
