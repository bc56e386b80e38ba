"""TIR intrinsics: math functions and helpers callable in scripts as ``T.exp(x)`` etc."""

from __future__ import annotations

from mlckit.error import TVMTypeError, TVMValueError
from mlckit.ir.op import Op, register_op

from . import dtype as dt
from .expr import (
    Call,
    PrimExpr,
    Select,
    _match,
    cast,
    const,
    convert,
    floordiv,
    floormod,
    max_expr,
    min_expr,
    truncdiv,
    truncmod,
)

# Unary float intrinsics: one registered op each, named "tir.<name>".
UNARY_MATH = (
    "exp", "exp2", "exp10", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "tanh", "sigmoid",
    "erf", "fabs", "floor", "ceil", "round", "trunc", "nearbyint", "sin", "cos", "tan", "asin",
    "acos", "atan", "sinh", "cosh", "isnan", "isinf", "isfinite",
)
BINARY_MATH = ("pow", "atan2", "fmod", "hypot", "copysign", "nextafter")
PREDICATES = ("isnan", "isinf", "isfinite")

for _name in UNARY_MATH + BINARY_MATH + ("if_then_else",):
    register_op(f"tir.{_name}", num_inputs=3 if _name == "if_then_else" else None)


def call_intrin(dtype: str, name: str, *args) -> Call:
    """A call of the registered intrinsic ``name`` (``"tir.exp"``) returning ``dtype``.

    >>> from mlckit import tir
    >>> tir.call_intrin("float32", "tir.exp", tir.Var("x", "float32"))
    T.exp(x)
    """
    return Call(dtype, Op.get(name), [convert(a) for a in args])


register_op("tir.tvm_storage_sync")


def tvm_storage_sync(storage_scope: str, *args) -> Call:
    """``T.tvm_storage_sync("shared")``: every thread of a GPU block waits here until all
    have arrived and their shared-memory writes are visible (CUDA's ``__syncthreads()``).
    TVM 0.27 prints two more arguments (``T.bool(False), -1``); they are kept as given.

    Example::

        T.tvm_storage_sync("shared")     # between a cooperative fetch and its readers
    """
    return call_intrin("int32", "tir.tvm_storage_sync", storage_scope, *args)


def _float_arg(name: str, x) -> PrimExpr:
    x = convert(x)
    if not isinstance(x, PrimExpr):
        raise TVMTypeError(f"T.{name} expects a TIR expression, got {type(x).__name__}")
    return x


def _unary(name: str):
    def intrinsic(x):
        x = _float_arg(name, x)
        return call_intrin("bool" if name in PREDICATES else x.dtype, f"tir.{name}", x)

    intrinsic.__name__ = name
    result = "bool" if name in PREDICATES else "float32"
    intrinsic.__doc__ = (
        f"``T.{name}(x)``: the {name} intrinsic (``tir.{name}``).\n\n"
        f">>> from mlckit import tir\n>>> x = tir.Var(\"x\", \"float32\")\n"
        f">>> tir.{name}(x)\nT.{name}(x)\n>>> tir.{name}(x).dtype\n'{result}'\n")
    return intrinsic


def _binary(name: str):
    def intrinsic(x, y):
        x = _float_arg(name, x)
        y = convert(y, x.dtype)
        return call_intrin(x.dtype, f"tir.{name}", x, y)

    intrinsic.__name__ = name
    intrinsic.__doc__ = (
        f"``T.{name}(x, y)``: the {name} intrinsic (``tir.{name}``).\n\n"
        f">>> from mlckit import tir\n>>> x, y = tir.Var(\"x\", \"float32\"), tir.Var(\"y\", \"float32\")\n"
        f">>> tir.{name}(x, y)\nT.{name}(x, y)\n")
    return intrinsic


INTRINSICS = {name: _unary(name) for name in UNARY_MATH}
INTRINSICS.update({name: _binary(name) for name in BINARY_MATH})
globals().update(INTRINSICS)


def abs(x) -> PrimExpr:  # noqa: A001 - TVM's name
    """``|x|``: ``fabs`` for floats, a Select for integers (as TVM).

    >>> from mlckit import tir
    >>> tir.abs(tir.Var("x", "float32"))
    T.fabs(x)
    >>> tir.abs(tir.Var("n", "int32"))
    T.Select(n >= 0, n, n * -1)
    """
    x = _float_arg("abs", x)
    if dt.is_float(x.dtype):
        return call_intrin(x.dtype, "tir.fabs", x)
    if dt.is_uint(x.dtype):
        return x
    return Select(x >= 0, x, -x)


def if_then_else(cond, t, f, dtype: str | None = None) -> PrimExpr:
    """``cond ? t : f`` evaluating only the chosen side (``tir.if_then_else``); ``dtype``
    (as TVMScript's ``T.if_then_else(..., dtype="int32")``) converts literal branches.

    >>> from mlckit import tir
    >>> i = tir.Var("i", "int32")
    >>> tir.if_then_else(i < 4, 1.0, 0.0)
    T.if_then_else(i < 4, T.float32(1.0), T.float32(0.0))
    """
    t = convert(t, dtype)
    f = convert(f, getattr(t, "dtype", None))
    t = convert(t, getattr(f, "dtype", None))
    if isinstance(t, PrimExpr) and isinstance(f, PrimExpr) and t.dtype != f.dtype:
        t, f = _match(t, f)  # e.g. a float32x4 beside T.Broadcast(0, 4), as TVM matches them
    return call_intrin(t.dtype, "tir.if_then_else", convert(cond), t, f)


def all(*args) -> PrimExpr:  # noqa: A001 - TVM's name
    """``args[0] and args[1] and ...`` (TVM's ``tir.all``): every condition holds.

    >>> from mlckit import tir
    >>> i, j = tir.Var("i", "int32"), tir.Var("j", "int32")
    >>> tir.all(i < 4, j < 8)
    i < 4 and j < 8
    """
    if not args:
        raise TVMValueError("tir.all needs at least one condition")
    result = convert(args[0])
    for a in args[1:]:
        result = result & a
    return result


def any(*args) -> PrimExpr:  # noqa: A001 - TVM's name
    """``args[0] or args[1] or ...`` (TVM's ``tir.any``): some condition holds.

    >>> from mlckit import tir
    >>> i, j = tir.Var("i", "int32"), tir.Var("j", "int32")
    >>> tir.any(i < 0, j < 0)
    i < 0 or j < 0
    """
    if not args:
        raise TVMValueError("tir.any needs at least one condition")
    result = convert(args[0])
    for a in args[1:]:
        result = result | a
    return result


def power(x, y) -> PrimExpr:
    """``x ** y`` (TVM's ``tir.power``, the ``tir.pow`` intrinsic).

    >>> from mlckit import tir
    >>> tir.power(tir.Var("x", "float32"), 2)
    T.pow(x, T.float32(2.0))
    """
    return INTRINSICS["pow"](x, y)


def div(a, b) -> PrimExpr:
    """``a / b``: true division for floats, truncating for integers (TVM's ``tir.div``).

    >>> from mlckit import tir
    >>> tir.div(tir.Var("n", "int32"), 2)
    T.Div(n, 2)
    """
    return truncdiv(a, b)


def indexdiv(a, b) -> PrimExpr:
    """Division of non-negative indices (TVM's ``tir.indexdiv``: a floordiv).

    >>> from mlckit import tir
    >>> tir.indexdiv(tir.Var("i", "int32"), 4)
    i // 4
    """
    return floordiv(a, b)


def indexmod(a, b) -> PrimExpr:
    """Remainder of non-negative indices (TVM's ``tir.indexmod``: a floormod).

    >>> from mlckit import tir
    >>> tir.indexmod(tir.Var("i", "int32"), 4)
    i % 4
    """
    return floormod(a, b)


def min_value(dtype: str) -> PrimExpr:
    """The smallest value of ``dtype`` as a constant.

    >>> from mlckit import tir
    >>> tir.min_value("int8")
    T.int8(-128)
    """
    return const(dt.min_value(dt.check_dtype(dtype)), dtype)


def max_value(dtype: str) -> PrimExpr:
    """The largest value of ``dtype`` as a constant.

    >>> from mlckit import tir
    >>> tir.max_value("uint8")
    T.uint8(255)
    """
    return const(dt.max_value(dt.check_dtype(dtype)), dtype)


def min(a, b) -> PrimExpr:  # noqa: A001 - TVM's name
    """The smaller of two expressions (``T.min`` in TVMScript).

    >>> from mlckit import tir
    >>> x = tir.Var("x", "int32")
    >>> tir.min(x, 4)
    T.min(x, 4)
    """
    return min_expr(a, b)


def max(a, b) -> PrimExpr:  # noqa: A001 - TVM's name
    """The larger of two expressions (``T.max`` in TVMScript).

    >>> from mlckit import tir
    >>> x = tir.Var("x", "float32")
    >>> tir.max(x, tir.const(0, "float32"))
    T.max(x, T.float32(0.0))
    """
    return max_expr(a, b)


__all__ = [
    "abs", "all", "any", "call_intrin", "cast", "div", "floordiv", "floormod", "if_then_else",
    "indexdiv", "indexmod", "max", "max_value", "min", "min_value", "power", "truncdiv",
    "truncmod", *INTRINSICS, "tvm_storage_sync",
]


# -- hints to the simplifier, and shifts ------------------------------------------------------
for _name in ("likely", "assume", "shift_left", "shift_right"):
    register_op(f"tir.{_name}")


def likely(cond) -> PrimExpr:
    """``cond``, marked as the likely outcome (``tir.likely``): a hint for loop partitioning.

    >>> from mlckit import tir
    >>> tir.likely(tir.Var("i", "int32") < 4)
    T.likely(i < 4)
    """
    cond = convert(cond)
    return call_intrin(cond.dtype, "tir.likely", cond)


def assume(cond) -> PrimExpr:
    """A fact the simplifier may use from here on (``tir.assume``), written
    ``T.evaluate(T.assume(n == 0))``; it computes nothing.

    >>> from mlckit import tir
    >>> tir.assume(tir.Var("n", "int32") == 0)
    T.assume(n == 0)
    """
    return call_intrin("bool", "tir.assume", convert(cond))


def _shift(name: str, x, y) -> PrimExpr:
    # a Python int takes the other operand's type, as in any binary TIR op
    x = convert(x, getattr(y, "dtype", None))
    y = convert(y, x.dtype)
    if not (dt.is_int(x.dtype) or dt.is_uint(x.dtype)):
        raise TVMTypeError(f"T.{name} shifts integers, got {x.dtype}")
    return call_intrin(x.dtype, f"tir.{name}", x, y)


def shift_left(x, y) -> PrimExpr:
    """``x << y`` on integers (``tir.shift_left``).

    >>> from mlckit import tir
    >>> tir.shift_left(1, tir.Var("i", "int32"))
    T.shift_left(1, i)
    """
    return _shift("shift_left", x, y)


def shift_right(x, y) -> PrimExpr:
    """``x >> y`` on integers (``tir.shift_right``).

    >>> from mlckit import tir
    >>> tir.shift_right(tir.Var("i", "int32"), 2)
    T.shift_right(i, 2)
    """
    return _shift("shift_right", x, y)


__all__ += ["assume", "likely", "shift_left", "shift_right"]
