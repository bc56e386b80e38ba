"""Elementwise math on tensors (TVM's ``topi.exp``, ``topi.sqrt``, ``topi.clip``...).

Each is one ``te.compute`` named ``compute`` with the ``elemwise`` tag and indices
``i0, i1, ...``, exactly as TVM's Python topi writes them::

    B = topi.exp(A)       # B[i0, i1] = T.exp(A[i0, i1])

``log``, ``log2``, ``log10``, ``sqrt`` and ``rsqrt`` of an integer tensor first cast it to
``float32`` (a second compute), as TVM does.
"""

from __future__ import annotations

from mlckit import te
from mlckit.error import TVMTypeError
from mlckit.tir import op as tir_op
from mlckit.tir.expr import PrimExpr, Select, const
from mlckit.tir.expr import cast as _cast_expr

from . import tag as _tag
from .utils import compute_ax


def _tensor(op_name: str, x) -> te.Tensor:
    if not isinstance(x, te.Tensor):
        raise TVMTypeError(f"topi.{op_name}: x must be a te.Tensor, got {type(x).__name__}")
    return x


def _example(op_name: str, body: str, dtype: str = "float32") -> str:
    """The docstring example of an elementwise op: what its compute holds."""
    return (f">>> from mlckit import te, topi\n"
            f">>> A = te.placeholder((2, 3), \"float32\", name=\"A\")\n"
            f">>> B = topi.{op_name}(A)\n>>> B.shape, B.dtype\n([2, 3], '{dtype}')\n"
            f">>> B.op.body[0]\n{body}\n")


def _elementwise(op_name: str, scalar_fn, doc: str, body: str | None = None):
    def op(x: te.Tensor) -> te.Tensor:
        x = _tensor(op_name, x)
        with te.tag_scope(_tag.ELEMWISE):
            return te.compute(x.shape, lambda *i: scalar_fn(x(*i)))

    op.__name__ = op_name
    dtype = "bool" if op_name.startswith("is") else "float32"
    op.__doc__ = (f"{doc} of each element (TVM's ``topi.{op_name}``).\n\n"
                  + _example(op_name, body or f"T.{op_name}(A[i0, i1])", dtype))
    return op


def _to_float32_if_int(x: te.Tensor, tag: str) -> te.Tensor:
    if x.dtype.startswith("int"):
        return te.compute(x.shape, lambda *i: x(*i).astype("float32"), tag=tag)
    return x


def _float_only(op_name: str, scalar_fn, doc: str, scoped: bool):
    """log/sqrt: integers are cast to float32 first; TVM tags log's cast compute ``""`` and
    sqrt's ``elemwise`` (sqrt's whole body runs in a tag scope, log passes the tag)."""

    def op(x: te.Tensor) -> te.Tensor:
        x = _tensor(op_name, x)
        if scoped:
            with te.tag_scope(_tag.ELEMWISE):
                x = _to_float32_if_int(x, "")
                return te.compute(x.shape, lambda *i: scalar_fn(x(*i)))
        x = _to_float32_if_int(x, "")
        return te.compute(x.shape, lambda *i: scalar_fn(x(*i)), tag=_tag.ELEMWISE)

    op.__name__ = op_name
    op.__doc__ = (f"{doc} of each element (TVM's ``topi.{op_name}``); an integer tensor is "
                  f"cast to float32 first.\n\n" + _example(op_name, f"T.{op_name}(A[i0, i1])"))
    return op


identity = _elementwise("identity", lambda v: v, "A copy", body="A[i0, i1]")
negative = _elementwise("negative", lambda v: -v, "The negation", body="A[i0, i1] * T.float32(-1.0)")
exp = _elementwise("exp", tir_op.exp, "The exponential")
erf = _elementwise("erf", tir_op.erf, "The error function")
tanh = _elementwise("tanh", tir_op.tanh, "The hyperbolic tangent")
tan = _elementwise("tan", tir_op.tan, "The tangent")
cos = _elementwise("cos", tir_op.cos, "The cosine")
cosh = _elementwise("cosh", tir_op.cosh, "The hyperbolic cosine")
sin = _elementwise("sin", tir_op.sin, "The sine")
sinh = _elementwise("sinh", tir_op.sinh, "The hyperbolic sine")
acos = _elementwise("acos", tir_op.acos, "The arc cosine")
asin = _elementwise("asin", tir_op.asin, "The arc sine")
atan = _elementwise("atan", tir_op.atan, "The arc tangent")
floor = _elementwise("floor", tir_op.floor, "The floor")
ceil = _elementwise("ceil", tir_op.ceil, "The ceiling")
trunc = _elementwise("trunc", tir_op.trunc, "The integer part")
abs = _elementwise("abs", tir_op.abs, "The absolute value", body="T.fabs(A[i0, i1])")  # noqa: A001 - TVM's name
isnan = _elementwise("isnan", tir_op.isnan, "Whether NaN")
isfinite = _elementwise("isfinite", tir_op.isfinite, "Whether finite")
isinf = _elementwise("isinf", tir_op.isinf, "Whether infinite")
round = _elementwise("round", tir_op.round, "The nearest integer")  # noqa: A001 - TVM's name
sigmoid = _elementwise("sigmoid", tir_op.sigmoid, "The logistic sigmoid")
log = _float_only("log", tir_op.log, "The natural logarithm", scoped=False)
log2 = _float_only("log2", tir_op.log2, "The base-2 logarithm", scoped=False)
log10 = _float_only("log10", tir_op.log10, "The base-10 logarithm", scoped=False)
sqrt = _float_only("sqrt", tir_op.sqrt, "The square root", scoped=True)
rsqrt = _float_only("rsqrt", tir_op.rsqrt, "The reciprocal square root", scoped=True)


def sign(x: te.Tensor) -> te.Tensor:
    """-1, 0 or 1 by the sign of each element (TVM's ``topi.sign``, compute ``T_sign``).

    >>> from mlckit import te, topi
    >>> A = te.placeholder((4,), "float32", name="A")
    >>> topi.sign(A).op.name
    'T_sign'
    """
    x = _tensor("sign", x)
    zero, one, minus_one = const(0, x.dtype), const(1, x.dtype), const(-1, x.dtype)

    def rule(i):
        v = x(*i)
        return Select(v > zero, one, Select(v < zero, minus_one, zero))

    return compute_ax(x.shape, rule, "T_sign", _tag.ELEMWISE)


def clip(x: te.Tensor, a_min, a_max) -> te.Tensor:
    """Each element limited to ``[a_min, a_max]`` (TVM's ``topi.clip``).

    Example::

        B = topi.clip(A, 0.0, 6.0)     # relu6
    """
    x = _tensor("clip", x)

    def bound(value, limit):
        if isinstance(limit, PrimExpr):
            return _cast_expr(limit, value.dtype)
        return const(limit, value.dtype)

    with te.tag_scope(_tag.ELEMWISE):
        return te.compute(
            x.shape,
            lambda *i: tir_op.max(tir_op.min(x(*i), bound(x(*i), a_max)), bound(x(*i), a_min)),
        )


def cast(x, dtype: str):
    """``x`` converted to ``dtype``: a compute for a tensor, a Cast for a scalar (TVM's
    ``topi.cast``).

    Example::

        B = topi.cast(A, "float16")
    """
    if isinstance(x, te.Tensor):
        return te.compute(x.shape, lambda *i: x(*i).astype(dtype), tag=_tag.ELEMWISE)
    return _cast_expr(x, dtype)
