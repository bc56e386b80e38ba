"""Small Relax helpers shared by ops, the IRBuilder and the parser."""

from __future__ import annotations

from typing import Any

from mlckit.error import TVMTypeError
from mlckit.tir.expr import FloatImm, IntImm, PrimExpr
from mlckit.tir.expr import StringImm as TirStringImm

from .expr import Expr, PrimValue, StringImm, Tuple


def convert_to_expr(value: Any) -> Expr:
    """A Relax expression from a Python value, as TVM's ``relax.utils.convert_to_expr``.

    Expr → itself; int → ``PrimValue`` int64; float → ``PrimValue`` float64; PrimExpr →
    ``PrimValue``; str → ``StringImm``; tuple/list → ``Tuple`` of converted fields::

        convert_to_expr((x, 2))   # Tuple([x, PrimValue(IntImm("int64", 2))])
    """
    if isinstance(value, Expr):
        return value
    if isinstance(value, bool) or isinstance(value, int):
        return PrimValue(IntImm("int64", int(value)))
    if isinstance(value, float):
        return PrimValue(FloatImm("float64", value))
    if isinstance(value, TirStringImm):
        raise TVMTypeError("cannot convert a tir.StringImm to a Relax expression: it could be a "
                        "relax StringImm (R.str) or a PrimValue")
    if isinstance(value, PrimExpr):
        return PrimValue(value)
    if isinstance(value, str):
        return StringImm(value)
    if isinstance(value, (tuple, list)):
        return Tuple([convert_to_expr(v) for v in value])
    if hasattr(value, "asobject"):  # tir EqualOp (a == b)
        return convert_to_expr(value.asobject())
    raise TVMTypeError(f"cannot convert {value!r} (a {type(value).__name__}) to a Relax expression")
