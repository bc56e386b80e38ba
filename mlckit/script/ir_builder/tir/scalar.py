"""The TIR IRBuilder: scalar types (``T.int32()`` is a new Var, ``T.int32(x)`` a cast),
``T.handle``, ``T.var`` and ``T.meta_var``."""

from __future__ import annotations

from typing import Any

from mlckit.tir import expr as E
from mlckit.tir.expr import Var

from .frames import (
    current_span,
)


# -- scalar types: T.int32() is a new Var, T.int32(x) a cast -------------------------------------
def _scalar(dtype: str):
    def make(expr=None, *, is_size_var: bool = False):
        if expr is None:
            cls = E.SizeVar if is_size_var else Var
            return cls("", dtype, span=current_span())
        if isinstance(expr, str):
            expr = float(expr)
        return E.cast(expr, dtype)

    make.__name__ = dtype
    make.__qualname__ = dtype
    make.__doc__ = (f"``T.{dtype}()`` is a new {dtype} variable (a symbolic size or a scalar "
                    f"parameter); ``T.{dtype}(x)`` converts ``x`` to {dtype}.")
    make.dtype = dtype
    return make


int8, int16, int32, int64 = (_scalar(t) for t in ("int8", "int16", "int32", "int64"))
uint8, uint16, uint32, uint64 = (_scalar(t) for t in ("uint8", "uint16", "uint32", "uint64"))
float16, float32, float64 = (_scalar(t) for t in ("float16", "float32", "float64"))
boolean = _scalar("bool")


def handle(dtype: str | None = None, storage_scope: str = "global", *,
           is_size_var: bool = False) -> Var:
    """A pointer parameter: ``def f(a: T.handle): A = T.match_buffer(a, (n,))``."""
    cls = E.SizeVar if is_size_var else Var
    return cls("", "handle", span=current_span())


handle.dtype = "handle"


def var(dtype: str, name: str = "") -> Var:
    """A new Var of ``dtype`` (TVM's deprecated ``T.var``)."""
    return Var(name, dtype)


class meta_var:  # noqa: N801 - TVM's name
    """A Python value kept by the parser, never turned into IR: ``x = T.meta_var(3)``."""

    def __init__(self, value: Any):
        self.value = value

    def __iter__(self):
        return (meta_var(v) for v in self.value)

