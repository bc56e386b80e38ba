"""The TIR IRBuilder: the other statements (``T.Assert``, ``T.LetStmt``, ``T.Let``, ``T.While``,
``T.If`` / ``T.Then`` / ``T.Else``, ``T.attr``, ``T.decl_buffer``, ``T.allocate``, thread
launches, ``T.buffer_store``, ``T.evaluate``)."""

from __future__ import annotations

from typing import Any

from mlckit.arith.analyzer import Analyzer
from mlckit.error import TVMIndexError, TVMTypeError, TVMValueError
from mlckit.tir import dtype as dt
from mlckit.tir import expr as E
from mlckit.tir import stmt as S
from mlckit.tir.buffer import Buffer
from mlckit.tir.expr import IterVar, IterVarType, PrimExpr, Range, Var, convert
from mlckit.tir.expr_vector import Ramp, vscale_factor_of

from ..base import IRBuilder, IRBuilderError
from .frames import (
    AllocateFrame,
    AssertFrame,
    AttrFrame,
    DeclBufferFrame,
    ElseFrame,
    IfFrame,
    LaunchThreadFrame,
    LetFrame,
    PrimFuncFrame,
    ThenFrame,
    WhileFrame,
    add_to_parent,
    current_span,
)
from .func import _buffer_decl, _shape


# -- other statements -------------------------------------------------------------------------------
def Assert(condition, message) -> AssertFrame:  # noqa: N802 - TVM's name
    """``assert cond, "message"`` as a frame."""
    if isinstance(condition, bool):
        condition = E.IntImm("bool", condition)
    return AssertFrame(convert(condition), E.StringImm(str(message)))


def LetStmt(value, type_annotation=None, *, var: Var | None = None) -> LetFrame:  # noqa: N802
    """Bind a new variable: ``with T.LetStmt(x + 1) as y:``."""
    value = convert(value)
    if var is None:
        if type_annotation is not None:
            if callable(type_annotation):
                type_annotation = type_annotation()
            dtype = getattr(type_annotation, "dtype", type_annotation)
        else:
            dtype = value.dtype
        var = Var("v", dtype, span=current_span())
    value = convert(value, var.dtype)
    return LetFrame(var, value)


def Let(expr, where: dict) -> PrimExpr:  # noqa: N802 - TVM's name
    """A let *expression*: ``T.Let(x + 1, where={x: 2})``."""
    if len(where) != 1:
        raise TVMValueError("T.Let binds exactly one variable")
    (var, value), = where.items()
    return E.Let(var, convert(value, var.dtype), convert(expr))


def let(v: Var, value, body=None):
    """Deprecated TVM form: ``T.let(v, value)`` (a LetStmt frame) or with ``body`` (an expr)."""
    if body is None:
        return LetFrame(v, convert(value, v.dtype))
    return E.Let(v, convert(value, v.dtype), convert(body))


def While(condition) -> WhileFrame:  # noqa: N802 - TVM's name
    """A while loop frame."""
    if isinstance(condition, bool):
        condition = E.IntImm("bool", condition)
    return WhileFrame(convert(condition))


def If(condition) -> IfFrame:  # noqa: N802 - TVM's name
    """``with T.If(cond): with T.Then(): ... with T.Else(): ...``."""
    if isinstance(condition, bool):
        condition = E.IntImm("bool", condition)
    return IfFrame(convert(condition))


def Then() -> ThenFrame:  # noqa: N802 - TVM's name
    return ThenFrame()


def Else() -> ElseFrame:  # noqa: N802 - TVM's name
    return ElseFrame()


def attr(node: Any, attr_key: str, value) -> AttrFrame:
    """An AttrStmt frame."""
    return AttrFrame(convert(node), attr_key, convert(value))


def decl_buffer(shape, dtype="float32", data=None, strides=None, elem_offset=None,
                scope="global", align=0, offset_factor=0, buffer_type="",
                axis_separators=None) -> DeclBufferFrame:
    """``with T.decl_buffer((16,), "float32") as buf:`` (allocates unless ``data`` is given)."""
    buf = _buffer_decl(shape, dtype, "", data, strides, elem_offset, scope, align,
                       offset_factor, buffer_type, axis_separators)
    return DeclBufferFrame(buf, allocated=data is not None)


def allocate(extents, dtype, scope="global", condition=None, annotations=None) -> AllocateFrame:
    """A low-level allocation frame (``with T.allocate([16], "float32") as ptr:``)."""
    if condition is None or isinstance(condition, bool):
        condition = E.IntImm("bool", True if condition is None else condition)
    return AllocateFrame(_shape(extents), dt.check_dtype(dtype), scope, condition,
                         dict(annotations or {}))


def env_thread(thread_tag: str, dtype: str = "int32") -> Var:
    """A GPU thread variable for ``T.launch_thread``."""
    frame = IRBuilder.find_frame(PrimFuncFrame) if IRBuilder.is_in_scope() else None
    if frame is None:
        raise IRBuilderError("T.env_thread can only be used inside a PrimFunc")
    iv = IterVar(None, Var("", dtype), IterVarType.ThreadIndex, thread_tag)
    frame.env_threads[iv.var] = iv
    return iv.var


def launch_thread(thread, extent) -> LaunchThreadFrame:
    """``with T.launch_thread("threadIdx.x", 32) as tx:`` (an AttrStmt "thread_extent")."""
    extent = convert(extent)
    if isinstance(thread, str):
        thread = env_thread(thread, extent.dtype)
    frame = IRBuilder.find_frame(PrimFuncFrame) if IRBuilder.is_in_scope() else None
    if frame is None or thread not in frame.env_threads:
        raise IRBuilderError("T.launch_thread needs a thread tag or a T.env_thread variable")
    iv = frame.env_threads[thread]
    if iv.dom is None:
        iv.dom = Range(E.IntImm(extent.dtype, 0), extent)
    key = "virtual_thread" if iv.thread_tag == "vthread" else "thread_extent"
    return LaunchThreadFrame(iv, extent, key)


def buffer_store(buffer: Buffer, value, indices, predicate=None) -> None:
    """``buffer[indices] = value`` (the value is cast to the buffer's dtype, as TVM does)."""
    if not isinstance(buffer, Buffer):
        raise TVMTypeError(f"cannot store into a {type(buffer).__name__}: only buffers can be "
                        "assigned with [...]")
    if not isinstance(indices, (list, tuple)):
        indices = [indices]
    indices = list(indices)
    indices = [_slice_as_ramp(buffer, i) if isinstance(i, slice) else i for i in indices]
    if len(indices) != len(buffer.shape):
        raise TVMIndexError(f"buffer {buffer.name!r} has {len(buffer.shape)} dimension(s) but is "
                         f"indexed with {len(indices)} index(es)")
    index_dtype = next((dt.element_of(i.dtype) for i in indices if isinstance(i, PrimExpr)),
                       None)
    indices = [convert(i, index_dtype) for i in indices]
    if isinstance(value, bool) and buffer.dtype == "bool":
        value = E.IntImm("bool", value)
    value = convert(value, buffer.dtype)
    if not isinstance(value, PrimExpr):
        raise TVMTypeError(f"cannot store a {type(value).__name__} into buffer {buffer.name!r}")
    if dt.element_of(value.dtype) != dt.element_of(buffer.dtype):
        value = E.cast(value, dt.with_lanes(buffer.dtype, dt.lanes(value.dtype)))
    index_lanes = 1
    for i in indices:
        index_lanes *= dt.lanes(i.dtype)
    if dt.lanes(value.dtype) != index_lanes * dt.lanes(buffer.dtype):
        raise TVMValueError(
            f"storing a {value.dtype} value into buffer {buffer.name!r} at indices of "
            f"{index_lanes} lane(s): the lanes must match (use T.Broadcast(value, lanes) for "
            "one value in every lane)")
    add_to_parent(S.BufferStore(buffer, value, indices, span=current_span()))


def _slice_as_ramp(buffer: Buffer, index: slice) -> PrimExpr:
    """``A[b:e:s] = v`` stores the lanes ``T.Ramp(b, s, (e - b) // s)``, as TVM parses it."""
    start = convert(0 if index.start is None else index.start)
    step = convert(1 if index.step is None else index.step, start.dtype)
    if index.stop is None:
        raise TVMValueError(f"storing to {buffer.name}[{index.start}:]: a vector store needs "
                            "the slice's end")
    lanes = Analyzer().simplify(E.floordiv(E.sub(index.stop, start), step))
    if vscale_factor_of(lanes):  # T.vscale() * k: a scalable vector store
        return Ramp(start, step, lanes)
    if not isinstance(lanes, E.IntImm) or lanes.value < 1:
        raise TVMValueError(f"storing to a slice of buffer {buffer.name!r}: its length "
                            f"({lanes}) must be a positive constant (or T.vscale() * k), the "
                            "lanes of a vector store")
    return Ramp(start, step, lanes.value)


def evaluate(value) -> None:
    """An expression statement: ``T.evaluate(0)``."""
    if isinstance(value, str):
        value = E.StringImm(value)
    if isinstance(value, bool):
        value = E.IntImm("bool", value)
    add_to_parent(S.Evaluate(convert(value), span=current_span()))


