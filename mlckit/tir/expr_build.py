"""Building TIR expressions, as TVM's operator functions: ``const`` / ``convert`` of Python
values, dtype promotion, constant folding and trivial identities (``x * 1`` is ``x``), and
the truth value of ``==`` / ``!=`` (reference equality, as TVM).

The classes are in ``mlckit.tir.expr``, which re-exports all of this (its public path).

Example::

    add(IntImm("int32", 2), 3)      # IntImm("int32", 5)
"""

from __future__ import annotations

import math
from typing import Any

from mlckit.error import TVMTypeError

from . import dtype as dt
from .expr import (
    EQ,
    GE,
    GT,
    LE,
    LT,
    NE,
    Add,
    And,
    Cast,
    Div,
    FloatImm,
    FloorDiv,
    FloorMod,
    IntImm,
    IterVar,
    Max,
    Min,
    Mod,
    Mul,
    Not,
    Or,
    PrimExpr,
    StringImm,
    Sub,
)


# -- truth value of == / != : reference equality, as TVM ------------------------------------
class EqualOp:
    """Deferred ``a == b``: a PrimExpr EQ node when used in IR, ``a is b`` when used in ``if``."""

    def __init__(self, a, b):
        self.a, self.b = a, b

    def __bool__(self):
        folded = _fold_constant_compare(self.a, self.b)
        return self.a is self.b if folded is None else folded

    def asobject(self) -> PrimExpr:
        return _compare(EQ, self.a, self.b)


class NotEqualOp(EqualOp):
    def __bool__(self):
        return not EqualOp.__bool__(self)

    def asobject(self) -> PrimExpr:
        return _compare(NE, self.a, self.b)


def _fold_constant_compare(a, b) -> bool | None:
    """``a == b`` when both are constants (``IntImm(128) == 128`` is True, as TVM folds it);
    None when either side is not a constant."""
    values = []
    for x in (a, b):
        if isinstance(x, (IntImm, FloatImm)):
            values.append(x.value)
        elif isinstance(x, (int, float)):
            values.append(x)
        else:
            return None
    return values[0] == values[1]


# -- conversion, promotion and constant folding --------------------------------------------
def const(value, dtype: str | None = None) -> PrimExpr:
    """A constant of ``dtype`` (inferred from the Python value when omitted).

    >>> from mlckit import tir
    >>> tir.const(3), tir.const(2.5), tir.const(1, "float16")
    (3, T.float32(2.5), T.float16(1.0))
    """
    if dtype is None:
        if isinstance(value, bool):
            dtype = "bool"
        elif isinstance(value, int):
            dtype = "int32" if -(2**31) <= value < 2**31 else "int64"
        else:
            dtype = "float32"
    dtype = dt.check_dtype(dtype)
    if dt.lanes(dtype) != 1:  # a vector constant: the value in every lane, as tvm::make_const
        from .expr_vector import Broadcast, lanes_expr  # the vector nodes need this module

        return Broadcast(const(value, dt.element_of(dtype)), lanes_expr(dt.lanes(dtype)))
    if dt.is_float(dtype):
        return FloatImm(dtype, value)
    return IntImm(dtype, value)


def convert(value, dtype: str | None = None) -> Any:
    """Turn a Python scalar into a PrimExpr constant; PrimExprs pass through.

    >>> from mlckit import tir
    >>> x = tir.Var("x", "int32")
    >>> tir.convert(5), tir.convert(1.5), tir.convert(x) is x
    (5, T.float32(1.5), True)
    """
    if isinstance(value, (EqualOp,)):
        return value.asobject()
    if isinstance(value, PrimExpr):
        return value
    if isinstance(value, IterVar):  # stands for its variable, as in TVM
        return value.var
    if isinstance(value, (bool, int, float)):
        if dtype is not None and dt.lanes(dtype) != 1:  # beside a vector: in every lane
            from .expr_vector import Broadcast, lanes_expr  # the vector nodes need this module

            return Broadcast(convert(value, dt.element_of(dtype)), lanes_expr(dt.lanes(dtype)))
        if dtype is not None and not isinstance(value, bool):
            if isinstance(value, float) and not dt.is_float(dtype):
                return const(value)
            return const(value, dtype)
        return const(value)
    if isinstance(value, str):
        return StringImm(value)
    if hasattr(value, "dtype") and hasattr(value, "item") and getattr(value, "shape", None) == ():
        return const(value.item(), str(value.dtype))  # a NumPy scalar
    return value


def _is_int_operand(x) -> bool:
    if isinstance(x, (bool, float)):
        return False
    if isinstance(x, int):
        return True
    dtype = getattr(x, "dtype", None)
    return isinstance(dtype, str) and (dt.is_int(dtype) or dtype.startswith("uint"))


def _refuse_int_division(a, b) -> None:
    """``/`` on two integers is refused, as TVM refuses it: TIR has several integer
    divisions and Python's ``/`` names none of them (mlckit once printed truncation)."""
    if not (_is_int_operand(a) and _is_int_operand(b)):
        return
    dtype = next(x.dtype for x in (a, b) if hasattr(x, "dtype"))
    raise TVMTypeError(
        f"`{_operand_text(a)} / {_operand_text(b)}`: `/` on integers ({dtype}) is ambiguous, "
        "TIR has several integer divisions. Write `a // b` (floor division, T.floordiv), "
        "T.truncdiv(a, b) (rounding toward zero, as C) or T.Div(a, b) for TIR's Div; for a "
        "float result cast first: a.astype(\"float32\") / b")


def _operand_text(x) -> str:
    if not isinstance(x, PrimExpr):
        return repr(x)
    try:
        return x.script()
    except Exception:  # noqa: BLE001 - best effort for a message
        return type(x).__name__


def _match(a, b) -> tuple[PrimExpr, PrimExpr]:
    """Convert Python scalars to the other side's dtype, then promote to a common dtype."""
    if isinstance(a, PrimExpr) and not isinstance(b, PrimExpr):
        b = convert(b, a.dtype)
    elif isinstance(b, PrimExpr) and not isinstance(a, PrimExpr):
        a = convert(a, b.dtype)
    else:
        a, b = convert(a), convert(b)
    if not isinstance(a, PrimExpr) or not isinstance(b, PrimExpr):
        raise TVMTypeError(f"cannot combine {type(a).__name__} and {type(b).__name__} in a TIR expression")
    if a.dtype == b.dtype:
        return a, b
    a, b = _match_lanes(a, b)
    ta, tb = a.dtype, b.dtype
    if ta == tb:
        return a, b
    if dt.is_float(ta) and not dt.is_float(tb):
        return a, cast(b, ta)
    if dt.is_float(tb) and not dt.is_float(ta):
        return cast(a, tb), b
    if dt.bits(ta) >= dt.bits(tb):
        return a, cast(b, ta)
    return cast(a, tb), b


def _match_lanes(a, b) -> tuple[PrimExpr, PrimExpr]:
    """A scalar beside a vector is broadcast to its lanes, as TVM's BinaryOpMatchTypes."""
    la, lb = dt.lanes(a.dtype), dt.lanes(b.dtype)
    if la == lb:
        return a, b
    from .expr_vector import broadcast_to  # the vector nodes need this module's classes

    if la == 1:
        return broadcast_to(a, lb), b
    if lb == 1:
        return a, broadcast_to(b, la)
    raise TVMTypeError(f"cannot combine a {a.dtype} and a {b.dtype} vector: the lanes differ")


def _is_const(x, value=None) -> bool:
    return isinstance(x, (IntImm, FloatImm)) and (value is None or x.value == value)


def _fold(cls, a, b):
    """TVM's TryConstFold: fold constants and trivial identities; None if nothing to do."""
    ca, cb = _is_const(a), _is_const(b)
    is_int = dt.is_int(a.dtype) or a.dtype == "bool"
    if ca and cb:
        x, y = a.value, b.value
        if cls is Add:
            return const(x + y, a.dtype)
        if cls is Sub:
            return const(x - y, a.dtype)
        if cls is Mul:
            return const(x * y, a.dtype)
        if cls is FloorDiv and y != 0:
            return const(x // y if is_int else float(math.floor(x / y)), a.dtype)
        if cls is FloorMod and y != 0 and is_int:
            return const(x % y, a.dtype)
        if cls is Min:
            return const(min(x, y), a.dtype)
        if cls is Max:
            return const(max(x, y), a.dtype)
    if cls is Add:
        if _is_const(b, 0):
            return a
        if _is_const(a, 0):
            return b
    if cls is Sub and _is_const(b, 0):
        return a
    if cls is Mul:
        if _is_const(b, 1):
            return a
        if _is_const(a, 1):
            return b
        if is_int and (_is_const(a, 0) or _is_const(b, 0)):
            return const(0, a.dtype)
    if cls in (FloorDiv, Div) and is_int and _is_const(b, 1):
        return a
    if cls is FloorMod and is_int and _is_const(b, 1):
        return const(0, a.dtype)
    return None


def _binary(cls, a, b) -> PrimExpr:
    a, b = _match(a, b)
    folded = _fold(cls, a, b)
    return folded if folded is not None else cls(a, b)


def _compare(cls, a, b) -> PrimExpr:
    a, b = _match(a, b)
    if _is_const(a) and _is_const(b):
        x, y = a.value, b.value
        result = {EQ: x == y, NE: x != y, LT: x < y, LE: x <= y, GT: x > y, GE: x >= y}.get(cls)
        if result is not None:
            return IntImm("bool", result)
    return cls(a, b)


def add(a, b) -> PrimExpr:
    return _binary(Add, a, b)


def sub(a, b) -> PrimExpr:
    return _binary(Sub, a, b)


def mul(a, b) -> PrimExpr:
    return _binary(Mul, a, b)


def floordiv(a, b) -> PrimExpr:
    """``a // b`` rounded toward minus infinity (a ``FloorDiv``; constants fold).

    >>> from mlckit import tir
    >>> tir.floordiv(tir.Var("x", "int32"), 4), tir.floordiv(-7, 2)
    (x // 4, -4)
    """
    return _binary(FloorDiv, a, b)


def floormod(a, b) -> PrimExpr:
    """``a % b`` with the sign of ``b`` (a ``FloorMod``; constants fold).

    >>> from mlckit import tir
    >>> tir.floormod(tir.Var("x", "int32"), 4), tir.floormod(-7, 2)
    (x % 4, 1)
    """
    return _binary(FloorMod, a, b)


def truncdiv(a, b) -> PrimExpr:
    """``a / b`` rounded toward zero, as C does (a ``Div``).

    >>> from mlckit import tir
    >>> tir.truncdiv(tir.Var("x", "int32"), 4)
    T.Div(x, 4)
    """
    return _binary(Div, a, b)


def truncmod(a, b) -> PrimExpr:
    """The remainder of ``truncdiv``, with the sign of ``a`` (a ``Mod``).

    >>> from mlckit import tir
    >>> tir.truncmod(tir.Var("x", "int32"), 4)
    T.truncmod(x, 4)
    """
    return _binary(Mod, a, b)


def min_expr(a, b) -> PrimExpr:
    return _binary(Min, a, b)


def max_expr(a, b) -> PrimExpr:
    return _binary(Max, a, b)


def _as_bool(x) -> PrimExpr:
    x = convert(x)
    if isinstance(x, PrimExpr) and not dt.is_bool(x.dtype):  # bool or boolx4
        raise TVMTypeError(f"a logical operator needs bool operands, got {x.dtype}")
    return x


def logical_and(a, b) -> PrimExpr:
    a, b = _as_bool(a), _as_bool(b)
    if _is_const(a):
        return b if a.value else a
    if _is_const(b):
        return a if b.value else b
    return And(a, b)


def logical_or(a, b) -> PrimExpr:
    a, b = _as_bool(a), _as_bool(b)
    if _is_const(a):
        return a if a.value else b
    if _is_const(b):
        return b if b.value else a
    return Or(a, b)


def logical_not(a) -> PrimExpr:
    a = _as_bool(a)
    if _is_const(a):
        return IntImm("bool", not a.value)
    return Not(a)


def cast(value, dtype: str) -> PrimExpr:
    """``value`` converted to ``dtype`` (constants are converted directly).

    >>> from mlckit import tir
    >>> x = tir.Var("x", "int32")
    >>> tir.cast(x, "float32"), tir.cast(3, "float32"), tir.cast(x, "int32") is x
    (T.Cast("float32", x), T.float32(3.0), True)
    """
    dtype = dt.check_dtype(dtype)
    value = convert(value)
    if value.dtype == dtype:
        return value
    n = dt.lanes(value.dtype)
    if n != 1 and dt.lanes(dtype) == 1:
        dtype = dt.with_lanes(dtype, n)  # a vector converts lane by lane, as tvm::cast
        if value.dtype == dtype:
            return value
    from .expr_vector import Broadcast, lanes_expr  # the vector nodes need this module

    if n == 1 and dt.lanes(dtype) != 1:  # a scalar into every lane, as tvm::cast
        return Broadcast(cast(value, dt.element_of(dtype)), lanes_expr(dt.lanes(dtype)))
    if isinstance(value, Broadcast):  # cast the one value, as tvm::cast
        return Broadcast(cast(value.value, dt.element_of(dtype)), value.lanes)
    if _is_const(value):
        v = value.value
        if dt.is_float(dtype):
            return FloatImm(dtype, float(v))
        if dtype == "bool":
            return IntImm("bool", bool(v))
        if isinstance(v, float):
            return IntImm(dtype, int(v))
        return IntImm(dtype, v)
    return Cast(dtype, value)
