"""The TIR IRBuilder: loops (``T.serial``, ``T.parallel``, ``T.vectorized``, ``T.unroll``,
``T.thread_binding``, ``T.grid``, and ``range`` in scripts)."""

from __future__ import annotations

from mlckit.error import TVMTypeError, TVMValueError
from mlckit.tir import dtype as dt
from mlckit.tir import expr as E
from mlckit.tir import stmt as S
from mlckit.tir.expr import IterVar, IterVarType, PrimExpr, Range, Var, convert

from .frames import (
    ForFrame,
    current_span,
)


# -- loops ----------------------------------------------------------------------------------------
def _start_stop(start, stop):
    if stop is None:
        stop = start
        start = E.IntImm(start.dtype, 0) if hasattr(start, "dtype") else 0
    start, stop = convert(start), convert(stop)
    for v in (start, stop):
        if not isinstance(v, PrimExpr) or not dt.is_int(v.dtype):
            raise TVMTypeError(f"loop bounds must be integers, got {v!r}")
    if start.dtype != stop.dtype:
        start, stop = E._match(start, stop)
    return start, stop


def _for(kind: S.ForKind, start, stop, annotations, thread=None) -> ForFrame:
    start, stop = _start_stop(start, stop)
    extent = E.sub(stop, start)
    var = Var("v", start.dtype, span=current_span())

    def make(vars_, doms, body, span):
        binding = None
        if kind == S.ForKind.THREAD_BINDING:
            binding = IterVar(None, Var("iter", start.dtype), IterVarType.ThreadIndex, thread)
        return S.For(vars_[0], doms[0].min, doms[0].extent, kind, body, binding,
                     dict(annotations or {}), span=span)

    return ForFrame([var], [Range(start, extent)], make)


def _check_step(step):
    if step is not None and not (isinstance(step, int) and step == 1):
        raise TVMValueError("mlckit loops have unit steps only")


def serial(start, stop=None, *, annotations=None, step=None) -> ForFrame:
    """A serial loop: ``for i in T.serial(128):`` (``range(128)`` means the same)."""
    _check_step(step)
    return _for(S.ForKind.SERIAL, start, stop, annotations)


def parallel(start, stop=None, *, annotations=None, step=None) -> ForFrame:
    """A parallel loop: ``for i in T.parallel(128):``."""
    _check_step(step)
    return _for(S.ForKind.PARALLEL, start, stop, annotations)


def vectorized(start, stop=None, *, annotations=None, step=None) -> ForFrame:
    """A vectorized loop: ``for i in T.vectorized(4):``."""
    _check_step(step)
    return _for(S.ForKind.VECTORIZED, start, stop, annotations)


def unroll(start, stop=None, *, annotations=None, step=None) -> ForFrame:
    """An unrolled loop: ``for i in T.unroll(4):``."""
    _check_step(step)
    return _for(S.ForKind.UNROLLED, start, stop, annotations)


def thread_binding(start, stop=None, thread: str | None = None, *, annotations=None) -> ForFrame:
    """A loop bound to a GPU thread axis: ``for tx in T.thread_binding(32, thread="threadIdx.x"):``."""
    if thread is None:
        if not isinstance(stop, str):
            raise TVMValueError("T.thread_binding needs a thread, e.g. thread=\"threadIdx.x\"")
        thread, stop = stop, None
    return _for(S.ForKind.THREAD_BINDING, start, stop, annotations, thread)


def grid(*extents) -> ForFrame:
    """Nested serial loops: ``for i, j, k in T.grid(128, 128, 128):``."""
    if not extents:
        raise TVMValueError("T.grid needs at least one extent")
    vars_, doms = [], []
    for extent in extents:
        extent = convert(extent)
        if not isinstance(extent, PrimExpr) or not dt.is_int(extent.dtype):
            raise TVMTypeError(f"T.grid extents must be integers, got {extent!r}")
        vars_.append(Var("v", extent.dtype, span=current_span()))
        doms.append(Range(E.IntImm(extent.dtype, 0), extent))

    def make(vs, ds, body, span):
        for v, d in reversed(list(zip(vs, ds))):
            body = S.For(v, d.min, d.extent, S.ForKind.SERIAL, body, span=span)
        return body

    return ForFrame(vars_, doms, make)


def range_sugar(start, stop=None, step=None, *, annotations=None) -> ForFrame:
    """``range(...)`` inside a TIR script: a serial loop (positive literal step only)."""
    if step is not None:
        if not isinstance(step, int) or step <= 0:
            raise TVMValueError(f"range() in TIR needs a positive literal step, got {step}")
    return serial(start, stop, annotations=annotations, step=step)


