"""TIR expressions (``PrimExpr``) with Python operators, as in TVM.

``x + 1`` on a PrimExpr builds ``Add(x, IntImm(x.dtype, 1))``; constants fold
(``IntImm 2 + 3`` is ``IntImm 5``) and trivial identities simplify (``x * 1`` is ``x``),
as TVM's operator functions do.  ``a == b`` builds an ``EQ`` node whose truth value is
reference equality, so Vars work as dict keys.

Example::

    i = Var("i", "int32")
    e = i * 4 + 1          # Add(Mul(i, 4), 1)
"""

from __future__ import annotations

import math
from typing import Any

from mlckit.error import TVMTypeError, TVMValueError
from mlckit.ir.node import Node, node

from . import dtype as dt


class ExprOp:
    """Python operators for PrimExprs (mixed into PrimExpr)."""

    def __add__(self, other):
        return add(self, other)

    def __radd__(self, other):
        return add(other, self)

    def __sub__(self, other):
        return sub(self, other)

    def __rsub__(self, other):
        return sub(other, self)

    def __mul__(self, other):
        return mul(self, other)

    def __rmul__(self, other):
        return mul(other, self)

    def __truediv__(self, other):
        _refuse_int_division(self, other)
        return _binary(Div, self, other)

    def __rtruediv__(self, other):
        _refuse_int_division(other, self)
        return _binary(Div, other, self)

    def __floordiv__(self, other):
        return floordiv(self, other)

    def __rfloordiv__(self, other):
        return floordiv(other, self)

    def __mod__(self, other):
        return floormod(self, other)

    def __rmod__(self, other):
        return floormod(other, self)

    def __neg__(self):
        return mul(self, const(-1, self.dtype))

    def __lt__(self, other):
        return _compare(LT, self, other)

    def __le__(self, other):
        return _compare(LE, self, other)

    def __gt__(self, other):
        return _compare(GT, self, other)

    def __ge__(self, other):
        return _compare(GE, self, other)

    def __eq__(self, other):
        return EqualOp(self, other)

    def __ne__(self, other):
        return NotEqualOp(self, other)

    def __and__(self, other):
        return logical_and(self, other)

    def __rand__(self, other):
        return logical_and(other, self)

    def __or__(self, other):
        return logical_or(self, other)

    def __ror__(self, other):
        return logical_or(other, self)

    def __invert__(self):
        return logical_not(self)

    def __bool__(self):
        raise TVMValueError(
            f"cannot use the truth value of the TIR expression `{self!r}` in Python: "
            "use T.if_then_else / T.Select, or `if` inside a script"
        )

    __hash__ = object.__hash__

    def astype(self, dtype: str) -> PrimExpr:
        return cast(self, dtype)


@node
class PrimExpr(ExprOp, Node):
    """Base of TIR expressions. Every PrimExpr has a ``dtype``."""

    __hash__ = object.__hash__
    __eq__ = ExprOp.__eq__


# -- leaves ------------------------------------------------------------------------------
@node
class IntImm(PrimExpr):
    dtype: str
    value: int

    def __post_init__(self):
        self.dtype = dt.check_dtype(self.dtype)
        self.value = bool(self.value) if self.dtype == "bool" else int(self.value)

    def __bool__(self):
        return self.value != 0

    def __int__(self):
        return int(self.value)

    def __index__(self):
        return int(self.value)

    __hash__ = PrimExpr.__hash__


@node
class FloatImm(PrimExpr):
    dtype: str
    value: float

    def __post_init__(self):
        self.dtype = dt.check_dtype(self.dtype)
        self.value = float(self.value)

    def __float__(self):
        return self.value

    __hash__ = PrimExpr.__hash__


@node
class StringImm(PrimExpr):
    value: str

    @property
    def dtype(self) -> str:
        return "handle"

    __hash__ = PrimExpr.__hash__


@node
class Var(PrimExpr):
    """A scalar variable: loop variable, symbolic shape, block iterator, or a handle."""

    name_hint: str = "v"
    dtype: str = "int32"

    _is_var = True
    _eq_ignore = ("name_hint",)

    def __post_init__(self):
        self.dtype = dt.check_dtype(self.dtype)

    @property
    def name(self) -> str:
        return self.name_hint

    __hash__ = PrimExpr.__hash__


@node
class SizeVar(Var):
    """A Var known to be non-negative (a symbolic size)."""

    __hash__ = PrimExpr.__hash__


# -- arithmetic ---------------------------------------------------------------------------
@node
class BinaryOpExpr(PrimExpr):
    a: PrimExpr
    b: PrimExpr

    @property
    def dtype(self) -> str:
        return self.a.dtype

    __hash__ = PrimExpr.__hash__


def _node_class(base: type, name: str, doc: str) -> type:
    """A node class ``name`` deriving from ``base`` (the arithmetic and comparison families)."""
    cls = type(name, (base,), {"__doc__": doc, "__hash__": PrimExpr.__hash__})
    cls.__module__ = __name__
    return node(cls)


def _binop(name: str, doc: str) -> type:
    return _node_class(BinaryOpExpr, name, doc)


Add = _binop("Add", "a + b")
Sub = _binop("Sub", "a - b")
Mul = _binop("Mul", "a * b")
Div = _binop("Div", "a / b (truncated for integers)")
Mod = _binop("Mod", "truncated remainder of a / b")
FloorDiv = _binop("FloorDiv", "a // b (rounds toward minus infinity)")
FloorMod = _binop("FloorMod", "a % b (sign of b)")
Min = _binop("Min", "min(a, b)")
Max = _binop("Max", "max(a, b)")


@node
class CmpExpr(BinaryOpExpr):
    @property
    def dtype(self) -> str:
        return "bool"

    __hash__ = PrimExpr.__hash__


def _cmpop(name: str, doc: str) -> type:
    return _node_class(CmpExpr, name, doc)


EQ = _cmpop("EQ", "a == b")
NE = _cmpop("NE", "a != b")
LT = _cmpop("LT", "a < b")
LE = _cmpop("LE", "a <= b")
GT = _cmpop("GT", "a > b")
GE = _cmpop("GE", "a >= b")
And = _cmpop("And", "a and b")
Or = _cmpop("Or", "a or b")


@node
class Not(PrimExpr):
    a: PrimExpr

    @property
    def dtype(self) -> str:
        return "bool"

    __hash__ = PrimExpr.__hash__


@node
class Select(PrimExpr):
    """``condition ? true_value : false_value`` (both sides evaluated)."""

    condition: PrimExpr
    true_value: PrimExpr
    false_value: PrimExpr

    @property
    def dtype(self) -> str:
        return self.true_value.dtype

    __hash__ = PrimExpr.__hash__


@node
class Cast(PrimExpr):
    dtype: str
    value: PrimExpr

    def __post_init__(self):
        self.dtype = dt.check_dtype(self.dtype)

    __hash__ = PrimExpr.__hash__


@node
class Let(PrimExpr):
    """``body`` with ``var`` bound to ``value``."""

    var: Var
    value: PrimExpr
    body: PrimExpr

    _def_fields = ("var",)
    _eq_order = ("value", "var", "body")

    @property
    def dtype(self) -> str:
        return self.body.dtype

    __hash__ = PrimExpr.__hash__


@node
class Call(PrimExpr):
    """A call of an intrinsic op (``T.exp(x)`` is ``Call("float32", Op("tir.exp"), [x])``)."""

    dtype: str
    op: Any
    args: list

    def __post_init__(self):
        self.dtype = dt.check_dtype(self.dtype)
        self.args = list(self.args)

    __hash__ = PrimExpr.__hash__


@node
class BufferLoad(PrimExpr):
    """``buffer[indices]``."""

    buffer: Any
    indices: list

    def __post_init__(self):
        self.indices = list(self.indices)

    @property
    def dtype(self) -> str:
        return self.buffer.dtype

    __hash__ = PrimExpr.__hash__


# -- loop ranges and iterators --------------------------------------------------------------
@node
class Range(Node):
    """The half-open interval ``[min, min + extent)``."""

    min: PrimExpr
    extent: PrimExpr

    def __post_init__(self):
        self.min = convert(self.min)
        self.extent = convert(self.extent, getattr(self.min, "dtype", None))

    @staticmethod
    def from_min_extent(min_value, extent) -> Range:
        return Range(min_value, extent)


class IterVarType:
    """Kinds of block iterators and thread axes, with TVM's numbering."""

    DataPar = 0
    ThreadIndex = 1
    CommReduce = 2
    Ordered = 3
    Opaque = 4


@node
class IterVar(ExprOp, Node):
    """A block iterator (``dom``, ``var``, kind) or a thread axis (``thread_tag``).

    In an expression an IterVar stands for its ``var``, as in TVM: with
    ``k = te.reduce_axis((0, 16), "k")``, ``A[i, k]`` and ``k * 2`` use ``k.var``."""

    dom: Range
    var: Var
    iter_type: int
    thread_tag: str = ""

    _def_fields = ("var",)

    __hash__ = object.__hash__
    __eq__ = ExprOp.__eq__

    def __bool__(self):  # an object, not a condition
        return True

    @property
    def dtype(self) -> str:
        return self.var.dtype


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
    """A constant of ``dtype`` (inferred from the Python value when omitted)."""
    if dtype is None:
        if isinstance(value, bool):
            dtype = "bool"
        elif isinstance(value, int):
            dtype = "int32" if -(2**31) <= value < 2**31 else "int64"
        else:
            dtype = "float32"
    dtype = dt.check_dtype(dtype)
    if dt.is_float(dtype):
        return FloatImm(dtype, value)
    return IntImm(dtype, value)


def convert(value, dtype: str | None = None) -> Any:
    """Turn a Python scalar into a PrimExpr constant; PrimExprs pass through."""
    if isinstance(value, (EqualOp,)):
        return value.asobject()
    if isinstance(value, PrimExpr):
        return value
    if isinstance(value, IterVar):  # stands for its variable, as in TVM
        return value.var
    if isinstance(value, (bool, int, float)):
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
    ta, tb = a.dtype, b.dtype
    if dt.is_float(ta) and not dt.is_float(tb):
        return a, cast(b, ta)
    if dt.is_float(tb) and not dt.is_float(ta):
        return cast(a, tb), b
    if dt.bits(ta) >= dt.bits(tb):
        return a, cast(b, ta)
    return cast(a, tb), b


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
    return _binary(FloorDiv, a, b)


def floormod(a, b) -> PrimExpr:
    return _binary(FloorMod, a, b)


def truncdiv(a, b) -> PrimExpr:
    return _binary(Div, a, b)


def truncmod(a, b) -> PrimExpr:
    return _binary(Mod, a, b)


def min_expr(a, b) -> PrimExpr:
    return _binary(Min, a, b)


def max_expr(a, b) -> PrimExpr:
    return _binary(Max, a, b)


def _as_bool(x) -> PrimExpr:
    x = convert(x)
    if isinstance(x, PrimExpr) and x.dtype != "bool":
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
    """``value`` converted to ``dtype`` (constants are converted directly)."""
    dtype = dt.check_dtype(dtype)
    value = convert(value)
    if value.dtype == dtype:
        return value
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
