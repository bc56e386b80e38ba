"""TIR vector expressions, as TVM has them: ``Ramp`` (lanes base, base + stride, …) and
``Broadcast`` (one value in every lane).  Their dtype has lanes (``"int32x4"``); a buffer
indexed by a ramp loads and stores that many elements at once, which is what
``tir.transform.VectorizeLoop`` makes of a ``T.vectorized`` loop::

    for j in T.vectorized(4):                 A[T.Ramp(i * 4, 1, 4)] = (
        A[i * 4 + j] = B[i * 4 + j] * 2.0  ──►     B[T.Ramp(i * 4, 1, 4)] * T.Broadcast(T.float32(2), 4))

A scalable vector (Arm SVE) has ``T.vscale() * k`` lanes, a multiple of ``k`` known only when
the program runs: ``T.Ramp(0, 1, T.vscale() * 4)`` has dtype ``"int32xvscalex4"``.  Its
``lanes`` field is that expression (``4 * T.vscale()`` is stored as ``T.vscale() * 4``, as
TVM does); a fixed vector's is an int.

Example::

    r = Ramp(0, 1, 4)                   # int32x4: 0, 1, 2, 3
    b = Broadcast(FloatImm("float32", 1.0), 4)   # float32x4: 1, 1, 1, 1
    s = Ramp(0, 1, vscale() * 4)        # int32xvscalex4
"""

from __future__ import annotations

from mlckit.error import TVMNotImplementedError, TVMValueError
from mlckit.ir.node import node
from mlckit.ir.op import register_op

from . import dtype as dt
from .expr import Call, IntImm, Mul, PrimExpr, convert

__all__ = ["Broadcast", "Ramp", "broadcast_to", "check_fixed_lanes", "is_vscale", "lanes_expr",
           "lanes_of", "vscale", "vscale_factor_of"]


def is_vscale(e) -> bool:
    """Whether ``e`` is the call ``T.vscale()``."""
    return isinstance(e, Call) and getattr(e.op, "name", None) == "tir.vscale"


def vscale_factor_of(lanes) -> int | None:
    """``k`` when ``lanes`` is ``T.vscale() * k`` or ``k * T.vscale()`` (TVM's
    ``arith::ExtractVscaleFactor``); None otherwise."""
    if isinstance(lanes, Mul):
        for a, b in ((lanes.a, lanes.b), (lanes.b, lanes.a)):
            if is_vscale(a) and isinstance(b, IntImm):
                return b.value
    return None


def lanes_expr(n: int):
    """The ``lanes`` field for ``n`` lanes as ``dtype.lanes`` counts them: ``n`` itself, or
    ``T.vscale() * k`` for ``n == -k`` (a scalable vector)."""
    return n if n > 0 else Mul(vscale(), IntImm("int32", -n))


def _check_lanes(what: str, lanes):
    """``lanes`` as the node keeps it: an int, or ``T.vscale() * k`` for a scalable vector."""
    if isinstance(lanes, IntImm):
        lanes = lanes.value
    if isinstance(lanes, PrimExpr):
        factor = vscale_factor_of(lanes)
        if factor is None or factor < 1:
            raise TVMValueError(
                f"{what}: lanes must be a constant integer or T.vscale() * k (a scalable "
                f"vector), got {lanes!r}")
        return lanes_expr(-factor)
    if not isinstance(lanes, int) or isinstance(lanes, bool):
        raise TVMValueError(f"{what}: lanes must be a constant integer, got {lanes!r}")
    if lanes < 1:
        raise TVMValueError(f"{what}: lanes must be at least 1, got {lanes}")
    return lanes


def _lanes_code(lanes) -> int:
    """The lanes of a node's ``lanes`` field as ``dtype.lanes`` counts them (-k if scalable)."""
    return lanes if isinstance(lanes, int) else -vscale_factor_of(lanes)


def _check_scalar(what: str, field: str, value: PrimExpr) -> None:
    if dt.lanes(value.dtype) != 1:
        raise TVMValueError(f"{what}: its {field} must be a scalar, got a {value.dtype} vector")


@node
class Ramp(PrimExpr):
    """The vector ``base, base + stride, …, base + (lanes - 1) * stride``, as ``tvm.tir.Ramp``.

    >>> from mlckit import tir
    >>> r = tir.Ramp(tir.Var("i", "int32") * 4, 1, 4)
    >>> r, r.dtype
    (T.Ramp(i * 4, 1, 4), 'int32x4')
    """

    base: PrimExpr
    stride: PrimExpr
    lanes: int | PrimExpr

    def __post_init__(self):
        self.base = convert(self.base)
        self.stride = convert(self.stride, self.base.dtype)
        self.lanes = _check_lanes("T.Ramp", self.lanes)
        _check_scalar("T.Ramp", "base", self.base)
        _check_scalar("T.Ramp", "stride", self.stride)
        if self.base.dtype != self.stride.dtype:
            raise TVMValueError(f"T.Ramp: base ({self.base.dtype}) and stride "
                                f"({self.stride.dtype}) must have one dtype")

    @property
    def dtype(self) -> str:
        return dt.with_lanes(self.base.dtype, _lanes_code(self.lanes))

    __hash__ = PrimExpr.__hash__


@node
class Broadcast(PrimExpr):
    """``value`` in each of ``lanes`` lanes, as ``tvm.tir.Broadcast``.

    >>> from mlckit import tir
    >>> b = tir.Broadcast(tir.FloatImm("float32", 1.0), 4)
    >>> b, b.dtype
    (T.Broadcast(T.float32(1.0), 4), 'float32x4')
    """

    value: PrimExpr
    lanes: int | PrimExpr

    def __post_init__(self):
        self.value = convert(self.value)
        self.lanes = _check_lanes("T.Broadcast", self.lanes)
        _check_scalar("T.Broadcast", "value", self.value)

    @property
    def dtype(self) -> str:
        return dt.with_lanes(self.value.dtype, _lanes_code(self.lanes))

    __hash__ = PrimExpr.__hash__


def lanes_of(e) -> int:
    """The number of lanes of an expression (1 for a scalar or a Python number)."""
    dtype = getattr(e, "dtype", None)
    return dt.lanes(dtype) if isinstance(dtype, str) else 1


def broadcast_to(e: PrimExpr, lanes: int) -> PrimExpr:
    """``e`` with ``lanes`` lanes (-k: ``T.vscale() * k``): itself when it has them, a
    Broadcast of a scalar (TVM's ``BroadcastTo`` in the vectorizer and its operators)."""
    have = lanes_of(e)
    if have == lanes:
        return e
    if isinstance(e, Broadcast) and have > 0 and lanes > 0 and lanes % have == 0:
        return Broadcast(e.value, lanes)
    if have != 1:
        raise TVMValueError(f"cannot broadcast a {e.dtype} vector to "
                            f"{dt.with_lanes(e.dtype, lanes)}")
    return Broadcast(e, lanes_expr(lanes))


def vscale() -> PrimExpr:
    """``T.vscale()``, the lane multiplier of Arm's scalable vectors (SVE), as
    ``tvm.tir.vscale``: ``T.vscale() * 4`` lanes of float32 fill one SVE register.
    ``VectorizeLoop`` vectorizes a loop of that extent when the target has SVE; mlckit's
    backends refuse scalable vectors.

    >>> from mlckit import tir
    >>> tir.vscale() * 4
    T.vscale() * 4
    """
    return Call("int32", register_op("tir.vscale"), [])


def check_fixed_lanes(func, name: str) -> None:
    """Refuse ``func`` (a PrimFunc named ``name``) if it uses scalable vectors: mlckit's
    backends write code for a fixed number of lanes, so a ``T.vscale()`` or a
    ``float32xvscalex4`` value (what ``VectorizeLoop`` makes for an SVE target) stops the
    build with this TVMError rather than reaching them.

    Example::

        check_fixed_lanes(func, "main")     # before a backend compiles func
    """
    from .traversal import post_order_visit  # traversal builds on this module's nodes

    found = []

    def visit(x):
        if not found and isinstance(x, PrimExpr) and (is_vscale(x) or dt.is_scalable(x.dtype)):
            found.append(x)

    post_order_visit(func.body, visit)
    if found:
        what = "T.vscale()" if is_vscale(found[0]) else (
            f"{found[0].script()} of dtype {found[0].dtype}")
        raise TVMNotImplementedError(
            f"cannot build {name!r}: it uses scalable vectors ({what}), and mlckit's "
            "backends need a fixed number of lanes; "
            "vectorize for a target without SVE, or with a constant extent such as "
            "T.vectorized(4)")
