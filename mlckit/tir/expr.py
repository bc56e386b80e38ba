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

from typing import Any

from mlckit.error import TVMValueError
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
    """Base of TIR expressions. Every PrimExpr has a ``dtype``; Python operators build new ones.

    >>> from mlckit import tir
    >>> x = tir.Var("x", "int32")
    >>> e = x * 2 + 1
    >>> isinstance(e, tir.PrimExpr), e, e.dtype
    (True, x * 2 + 1, 'int32')
    """

    __hash__ = object.__hash__
    __eq__ = ExprOp.__eq__


# -- leaves ------------------------------------------------------------------------------
@node
class IntImm(PrimExpr):
    """An integer (or bool) constant of a given dtype.

    >>> from mlckit import tir
    >>> c = tir.IntImm("int64", 3)
    >>> c, c.dtype, c.value
    (T.int64(3), 'int64', 3)
    """

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
    """A floating-point constant of a given dtype.

    >>> from mlckit import tir
    >>> c = tir.FloatImm("float32", 1.5)
    >>> c, c.value
    (T.float32(1.5), 1.5)
    """

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
    """A string constant (an argument of some intrinsics); its dtype is ``handle``.

    >>> from mlckit import tir
    >>> s = tir.StringImm("hello")
    >>> s, s.dtype
    ("hello", 'handle')
    """

    value: str

    @property
    def dtype(self) -> str:
        return "handle"

    def __eq__(self, other):
        if isinstance(other, str):  # as TVM: StringImm("a") == "a"
            return self.value == other
        return super().__eq__(other)

    __hash__ = PrimExpr.__hash__


@node
class Var(PrimExpr):
    """A scalar variable: loop variable, symbolic shape, block iterator, or a handle.

    >>> from mlckit import tir
    >>> i = tir.Var("i", "int32")
    >>> i, i.name, i.dtype, i + 1
    (i, 'i', 'int32', i + 1)
    """

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
    """A Var known to be non-negative (a symbolic size).

    >>> from mlckit import tir
    >>> n = tir.SizeVar("n", "int64")
    >>> n, n.dtype, isinstance(n, tir.Var)
    (n, 'int64', True)
    """

    __hash__ = PrimExpr.__hash__


# -- arithmetic ---------------------------------------------------------------------------
@node
class BinaryOpExpr(PrimExpr):
    """Base of the arithmetic nodes (``Add`` … ``Max``): operands ``a`` and ``b``, the dtype
    of ``a``.

    >>> from mlckit import tir
    >>> e = tir.Var("x", "int32") + 1
    >>> isinstance(e, tir.BinaryOpExpr), e.a, e.b
    (True, x, 1)
    """

    a: PrimExpr
    b: PrimExpr

    @property
    def dtype(self) -> str:
        return self.a.dtype

    __hash__ = PrimExpr.__hash__


_EXAMPLE = """

    >>> from mlckit import tir
    >>> x, y = tir.Var("x", "int32"), tir.Var("y", "int32")
    >>> {call}
    {shown}
    """


def _node_class(base: type, name: str, doc: str, call: str, shown: str) -> type:
    """A node class ``name`` deriving from ``base`` (the arithmetic and comparison families),
    its docstring ``doc`` followed by the example ``call`` printing ``shown``."""
    doc += _EXAMPLE.format(call=call, shown=shown)
    cls = type(name, (base,), {"__doc__": doc, "__hash__": PrimExpr.__hash__})
    cls.__module__ = __name__
    return node(cls)


def _binop(name: str, doc: str, shown: str) -> type:
    return _node_class(BinaryOpExpr, name, doc, f"tir.{name}(x, y), tir.{name}(x, y).dtype",
                       f"({shown}, 'int32')")


Add = _binop("Add", "a + b", "x + y")
Sub = _binop("Sub", "a - b", "x - y")
Mul = _binop("Mul", "a * b", "x * y")
Div = _binop("Div", "a / b (truncated for integers)", "T.Div(x, y)")
Mod = _binop("Mod", "truncated remainder of a / b", "T.truncmod(x, y)")
FloorDiv = _binop("FloorDiv", "a // b (rounds toward minus infinity)", "x // y")
FloorMod = _binop("FloorMod", "a % b (sign of b)", "x % y")
Min = _binop("Min", "min(a, b)", "T.min(x, y)")
Max = _binop("Max", "max(a, b)", "T.max(x, y)")


@node
class CmpExpr(BinaryOpExpr):
    """Base of the comparisons and logical connectives (``EQ`` … ``Or``): a ``bool``.

    >>> from mlckit import tir
    >>> e = tir.Var("x", "int32") < 4
    >>> isinstance(e, tir.CmpExpr), e, e.dtype
    (True, x < 4, 'bool')
    """

    @property
    def dtype(self) -> str:
        a = self.a  # an arithmetic node has its first operand's dtype: walk down without calls
        while isinstance(a, BinaryOpExpr) and not isinstance(a, CmpExpr):
            a = a.a
        dtype = a.dtype
        return "bool" if dtype in dt.DTYPES else dt.with_lanes("bool", dt.lanes(dtype))

    __hash__ = PrimExpr.__hash__


def _cmpop(name: str, doc: str, call: str, shown: str) -> type:
    return _node_class(CmpExpr, name, doc, f"{call}, {call}.dtype", f"({shown}, 'bool')")


EQ = _cmpop("EQ", "a == b", "tir.EQ(x, y)", "x == y")
NE = _cmpop("NE", "a != b", "tir.NE(x, y)", "x != y")
LT = _cmpop("LT", "a < b", "tir.LT(x, y)", "x < y")
LE = _cmpop("LE", "a <= b", "tir.LE(x, y)", "x <= y")
GT = _cmpop("GT", "a > b", "tir.GT(x, y)", "x > y")
GE = _cmpop("GE", "a >= b", "tir.GE(x, y)", "x >= y")
And = _cmpop("And", "a and b", "tir.And(x < y, y < 8)", "x < y and y < 8")
Or = _cmpop("Or", "a or b", "tir.Or(x < y, y < 8)", "x < y or y < 8")


@node
class Not(PrimExpr):
    """Logical negation of a ``bool`` expression.

    >>> from mlckit import tir
    >>> e = tir.Not(tir.Var("x", "int32") < 4)
    >>> e, e.dtype
    (not x < 4, 'bool')
    """

    a: PrimExpr

    @property
    def dtype(self) -> str:
        return self.a.dtype

    __hash__ = PrimExpr.__hash__


@node
class Select(PrimExpr):
    """``condition ? true_value : false_value`` (both sides evaluated).

    >>> from mlckit import tir
    >>> x = tir.Var("x", "int32")
    >>> tir.Select(x < 0, 0, x)
    T.Select(x < 0, 0, x)
    """

    condition: PrimExpr
    true_value: PrimExpr
    false_value: PrimExpr

    @property
    def dtype(self) -> str:
        return self.true_value.dtype

    __hash__ = PrimExpr.__hash__


@node
class Cast(PrimExpr):
    """``value`` converted to ``dtype``.

    >>> from mlckit import tir
    >>> e = tir.Cast("float32", tir.Var("x", "int32"))
    >>> e, e.dtype
    (T.Cast("float32", x), 'float32')
    """

    dtype: str
    value: PrimExpr

    def __post_init__(self):
        self.dtype = dt.check_dtype(self.dtype)

    __hash__ = PrimExpr.__hash__


@node
class Let(PrimExpr):
    """``body`` with ``var`` bound to ``value``.

    >>> from mlckit import tir
    >>> x, y = tir.Var("x", "int32"), tir.Var("y", "int32")
    >>> tir.Let(y, x + 1, y * 2)
    T.Let(y * 2, where={y: x + 1})
    """

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
    """A call of an intrinsic op (``T.exp(x)`` is ``Call("float32", Op("tir.exp"), [x])``).

    >>> from mlckit import tir
    >>> e = tir.exp(tir.Var("f", "float32"))
    >>> type(e).__name__, e, e.op.name, e.dtype
    ('Call', T.exp(f), 'tir.exp', 'float32')
    """

    dtype: str
    op: Any
    args: list

    def __post_init__(self):
        self.dtype = dt.check_dtype(self.dtype)
        self.args = list(self.args)

    __hash__ = PrimExpr.__hash__


@node
class BufferLoad(PrimExpr):
    """``buffer[indices]``.

    >>> from mlckit import tir
    >>> A = tir.decl_buffer((4, 8), "float32", name="A")
    >>> i = tir.Var("i", "int32")
    >>> load = tir.BufferLoad(A, [i, 0])
    >>> load, load.dtype
    (A[i, 0], 'float32')
    """

    buffer: Any
    indices: list

    def __post_init__(self):
        self.indices = list(self.indices)
        # a ramp index (A[T.Ramp(0, 1, 4)]) loads as many lanes as it has, as TVM; counted
        # once here: dtype is read often, and an index's dtype walks down its expression
        n = 1
        for index in self.indices:
            n *= dt.lanes(index.dtype) if isinstance(index, PrimExpr) else 1
        self._index_lanes = n

    @property
    def dtype(self) -> str:
        if self._index_lanes == 1:
            return self.buffer.dtype
        return dt.with_lanes(self.buffer.dtype, self._index_lanes)

    __hash__ = PrimExpr.__hash__


# -- loop ranges and iterators --------------------------------------------------------------
@node
class Range(Node):
    """The half-open interval ``[min, min + extent)``.

    >>> from mlckit import tir
    >>> r = tir.Range(0, 8)
    >>> r, r.min, r.extent
    (I.Range(0, 8), 0, 8)
    """

    min: PrimExpr
    extent: PrimExpr

    def __post_init__(self):
        self.min = convert(self.min)
        self.extent = convert(self.extent, getattr(self.min, "dtype", None))

    @staticmethod
    def from_min_extent(min_value, extent) -> Range:
        return Range(min_value, extent)


class _ByBounds(type):
    # calls build a Range from bounds; isinstance checks see every Range
    def __call__(cls, begin, end=None, span=None) -> Range:
        if end is None:
            begin, end = 0, begin
        begin = convert(begin)
        end = convert(end, begin.dtype)
        zero = isinstance(begin, IntImm) and begin.value == 0
        if isinstance(begin, IntImm) and isinstance(end, IntImm):
            extent = IntImm(begin.dtype, end.value - begin.value)
        else:
            extent = end if zero else end - begin
        return Range(begin, extent, span=span)

    def __instancecheck__(cls, obj) -> bool:
        return isinstance(obj, Range)


class RangeByBounds(metaclass=_ByBounds):
    """TVM's ``tvm.ir.Range(begin, end)``: the interval ``[begin, end)`` (``Range(n)`` is
    ``[0, n)``), built as a :class:`Range` node of ``min`` and ``extent``.  mlckit's own
    ``tir.Range(min, extent)`` is the node's field order; TVM has no ``tvm.tir.Range``.

    >>> import mlckit as tvm
    >>> r = tvm.ir.Range(2, 8)
    >>> r, r.min, r.extent, isinstance(r, tvm.ir.Range)
    (I.Range(2, 8), 2, 6, True)
    """

    from_min_extent = staticmethod(Range.from_min_extent)


class IterVarType:
    """Kinds of block iterators and thread axes, with TVM's numbering.

    >>> from mlckit import tir
    >>> tir.IterVarType.DataPar, tir.IterVarType.CommReduce
    (0, 2)
    """

    DataPar = 0
    ThreadIndex = 1
    CommReduce = 2
    Ordered = 3
    Opaque = 4


@node
class IterVar(ExprOp, Node):
    """A block iterator (``dom``, ``var``, kind) or a thread axis (``thread_tag``).

    In an expression an IterVar stands for its ``var``, as in TVM: with
    ``k = te.reduce_axis((0, 16), "k")``, ``A[i, k]`` and ``k * 2`` use ``k.var``.

    >>> from mlckit import tir
    >>> k = tir.IterVar(tir.Range(0, 16), tir.Var("k", "int32"), tir.IterVarType.CommReduce)
    >>> k.var, k.dom, k * 2
    (k, I.Range(0, 16), k * 2)
    """

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


# The builders (conversion, promotion, constant folding) live in expr_build, which needs the
# classes above; the operators of ExprOp call them, and this is their public path.
from .expr_build import (  # noqa: E402, F401 - re-exported
    EqualOp,
    NotEqualOp,
    _binary,
    _compare,
    _match,
    _refuse_int_division,
    add,
    cast,
    const,
    convert,
    floordiv,
    floormod,
    logical_and,
    logical_not,
    logical_or,
    max_expr,
    min_expr,
    mul,
    sub,
    truncdiv,
    truncmod,
)
