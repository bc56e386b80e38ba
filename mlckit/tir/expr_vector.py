"""TIR vector expressions, as TVM has them: ``Ramp`` (lanes base, base + stride, …) and
``Broadcast`` (one value in every lane).  Their dtype has lanes (``"int32x4"``); a buffer
indexed by a ramp loads and stores that many elements at once, which is what
``tir.transform.VectorizeLoop`` makes of a ``T.vectorized`` loop::

    for j in T.vectorized(4):                 A[T.Ramp(i * 4, 1, 4)] = (
        A[i * 4 + j] = B[i * 4 + j] * 2.0  ──►     B[T.Ramp(i * 4, 1, 4)] * T.Broadcast(T.float32(2), 4))

Example::

    r = Ramp(0, 1, 4)                   # int32x4: 0, 1, 2, 3
    b = Broadcast(FloatImm("float32", 1.0), 4)   # float32x4: 1, 1, 1, 1
"""

from __future__ import annotations

from mlckit.error import TVMValueError
from mlckit.ir.node import node
from mlckit.ir.op import register_op

from . import dtype as dt
from .expr import Call, IntImm, PrimExpr, convert

__all__ = ["Broadcast", "Ramp", "broadcast_to", "lanes_of", "vscale"]


def _check_lanes(what: str, lanes) -> int:
    if isinstance(lanes, IntImm):
        lanes = lanes.value
    if not isinstance(lanes, int) or isinstance(lanes, bool):
        raise TVMValueError(
            f"{what}: lanes must be a constant integer, got {lanes!r} (scalable vectors with "
            "T.vscale() are not supported by mlckit)")
    if lanes < 1:
        raise TVMValueError(f"{what}: lanes must be at least 1, got {lanes}")
    return lanes


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
    lanes: int

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
        return dt.with_lanes(self.base.dtype, self.lanes)

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
    lanes: int

    def __post_init__(self):
        self.value = convert(self.value)
        self.lanes = _check_lanes("T.Broadcast", self.lanes)
        _check_scalar("T.Broadcast", "value", self.value)

    @property
    def dtype(self) -> str:
        return dt.with_lanes(self.value.dtype, self.lanes)

    __hash__ = PrimExpr.__hash__


def lanes_of(e) -> int:
    """The number of lanes of an expression (1 for a scalar or a Python number)."""
    dtype = getattr(e, "dtype", None)
    return dt.lanes(dtype) if isinstance(dtype, str) else 1


def broadcast_to(e: PrimExpr, lanes: int) -> PrimExpr:
    """``e`` with ``lanes`` lanes: itself when it has them, a Broadcast of a scalar (TVM's
    ``BroadcastTo`` in the vectorizer and its operators)."""
    have = lanes_of(e)
    if have == lanes:
        return e
    if isinstance(e, Broadcast) and lanes % e.lanes == 0:
        return Broadcast(e.value, lanes)
    if have != 1:
        raise TVMValueError(f"cannot broadcast a {e.dtype} vector to {lanes} lanes")
    return Broadcast(e, lanes)


def vscale() -> PrimExpr:
    """``T.vscale()``, the lane multiplier of Arm's scalable vectors (SVE), as
    ``tvm.tir.vscale``.  mlckit builds the call, so that code naming it loads, and refuses
    to vectorize with it (a clear error from ``VectorizeLoop``).

    >>> from mlckit import tir
    >>> tir.vscale() * 4
    T.vscale() * 4
    """
    return Call("int32", register_op("tir.vscale"), [])
