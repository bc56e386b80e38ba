"""The TIR IRBuilder: blocks (``T.block``, ``T.init``, ``T.where``, ``T.reads`` / ``T.writes``,
``T.block_attr``, ``T.alloc_buffer``) and block iterators (``T.axis.spatial`` / ``reduce`` /
``remap``)."""

from __future__ import annotations

from mlckit.arith import Analyzer
from mlckit.error import TVMTypeError, TVMValueError
from mlckit.tir import dtype as dt
from mlckit.tir import expr as E
from mlckit.tir.buffer import Buffer, BufferRegion
from mlckit.tir.expr import IterVar, IterVarType, PrimExpr, Range, Var, convert

from ..base import IRBuilder, IRBuilderError
from . import frames
from .frames import (
    BlockFrame,
    BlockInitFrame,
    ForFrame,
    PrimFuncFrame,
    current_span,
)
from .func import _buffer_decl, _region_from_load


# -- blocks -------------------------------------------------------------------------------------
def block(name: str = "", no_realize: bool = False) -> BlockFrame:
    """Open a block: ``with T.block("C"):``."""
    if not isinstance(name, str):
        raise TVMTypeError(f"a block name must be a string, got {type(name).__name__}")
    return BlockFrame(name, no_realize)


sblock = block


def init() -> BlockInitFrame:
    """The initialisation of a reduction block: ``with T.init(): C[vi, vj] = 0.0``."""
    return BlockInitFrame()


def where(predicate) -> None:
    """Predicate of a block: it runs only where ``predicate`` holds (after a split)."""
    frame = frames._block_frame("T.where")
    if isinstance(predicate, bool) or (isinstance(predicate, int) and predicate in (0, 1)):
        predicate = E.IntImm("bool", bool(predicate))
    predicate = convert(predicate)
    if not isinstance(predicate, PrimExpr):
        raise TVMTypeError(f"T.where expects a boolean expression, got {type(predicate).__name__}")
    if frame.predicate is not None:
        raise TVMValueError(f"block {frame.name!r} already has a T.where predicate")
    frame.predicate = predicate


def _regions(method: str, slices) -> list:
    if len(slices) == 1 and isinstance(slices[0], (list, tuple)):
        slices = slices[0]
    out = []
    for s in slices:
        if isinstance(s, BufferRegion):
            out.append(s)
        elif isinstance(s, E.BufferLoad):
            out.append(_region_from_load(s))
        else:
            raise TVMTypeError(f"{method} expects buffer regions like A[vi, 0:4], got "
                            f"{type(s).__name__}")
    return out


def reads(*buffer_slices) -> None:
    """Declare the regions a block reads: ``T.reads(A[vi, vk], B[vk, vj])``."""
    frame = frames._block_frame("T.reads")
    if frame.reads is not None:
        raise TVMValueError(f"block {frame.name!r} already has T.reads")
    frame.reads = _regions("T.reads", buffer_slices)


def writes(*buffer_slices) -> None:
    """Declare the regions a block writes: ``T.writes(C[vi, vj])``."""
    frame = frames._block_frame("T.writes")
    if frame.writes is not None:
        raise TVMValueError(f"block {frame.name!r} already has T.writes")
    frame.writes = _regions("T.writes", buffer_slices)


def block_attr(attrs: dict) -> None:
    """Annotate the block: ``T.block_attr({"meta_schedule.tiling_structure": "SSRSRS"})``."""
    frame = frames._block_frame("T.block_attr")
    merged = dict(frame.annotations or {})
    for key, value in attrs.items():
        if key in merged and isinstance(merged[key], dict) and isinstance(value, dict):
            merged[key] = {**merged[key], **value}
        elif key in merged and merged[key] != value:
            raise TVMValueError(f"block annotation {key!r} is set twice with different values")
        else:
            merged[key] = value
    frame.annotations = merged


def alloc_buffer(shape, dtype="float32", data=None, strides=None, elem_offset=None,
                 scope="global", align=-1, offset_factor=0, buffer_type="default",
                 axis_separators=None) -> Buffer:
    """Allocate a buffer in the current block (at function level: in the root block).

    Example::

        Y = T.alloc_buffer((128, 128), "float32")
        A_shared = T.alloc_buffer((32, 32), scope="shared")
    """
    buf = _buffer_decl(shape, dtype, "", data, strides, elem_offset, scope, align,
                       offset_factor, buffer_type, axis_separators)
    block_frame = IRBuilder.find_frame(BlockFrame) if IRBuilder.is_in_scope() else None
    if block_frame is not None:
        block_frame.alloc_buffers.append(buf)
        return buf
    last = IRBuilder.last_frame() if IRBuilder.is_in_scope() else None
    if isinstance(last, PrimFuncFrame):
        last.root_alloc_buffers.append(buf)
        return buf
    raise IRBuilderError("T.alloc_buffer must be used in a block or at the top of a "
                         "T.prim_func (not inside a loop outside any block)")


# -- block iterators ----------------------------------------------------------------------------
def _as_range(dom) -> Range:
    if isinstance(dom, Range):
        return dom
    if isinstance(dom, (list, tuple)):
        if len(dom) != 2:
            raise TVMValueError(f"an iterator domain (begin, end) has two values, got {len(dom)}")
        begin, end = convert(dom[0]), convert(dom[1])
        if isinstance(begin, PrimExpr) and isinstance(end, PrimExpr) and begin.dtype != end.dtype:
            begin, end = E._match(begin, end)
        extent = E.sub(end, begin)
        if isinstance(begin, PrimExpr) and dt.is_int(begin.dtype):
            simplified = Analyzer().simplify(extent)  # (v, v + 1) has extent 1, as in TVM
            if isinstance(simplified, E.IntImm):
                extent = simplified
        return Range(begin, extent)
    if hasattr(dom, "dtype"):
        return Range(E.IntImm(dom.dtype, 0), dom)
    return Range(0, dom)


def _push_block_var(iter_var: IterVar, binding) -> Var:
    last = IRBuilder.last_frame() if IRBuilder.is_in_scope() else None
    if not isinstance(last, BlockFrame):
        raise IRBuilderError("block iterators (T.axis.*) must be defined at the top of a "
                             "`with T.block(...)`")
    binding = convert(binding)
    if not isinstance(binding, PrimExpr):
        raise TVMTypeError(f"a block iterator is bound to an integer expression, got "
                        f"{type(binding).__name__}")
    last.iter_vars.append(iter_var)
    last.iter_values.append(binding)
    return iter_var.var


def _axis(kind: int, name: str, doc: str):
    def make(dom, binding, dtype: str = "int32") -> Var:
        dom = _as_range(dom)
        bits = max(dt.bits(dom.min.dtype), dt.bits(dom.extent.dtype), dt.bits(dtype))
        var_dtype = f"int{bits}"
        iv = IterVar(dom, Var("", var_dtype, span=current_span()), kind, span=current_span())
        return _push_block_var(iv, binding)

    make.__name__ = make.__qualname__ = name
    make.__doc__ = doc
    return make


_AXIS_DOC = """A {what} block iterator over ``dom`` (an extent or a ``(min, max)`` pair), bound to
    ``binding``, an expression of the enclosing loop variables{why}.  Written at the top of a
    ``with T.block(...)``::

        for i, k in T.grid(128, 64):
            with T.block("S"):
                vi = T.axis.spatial(128, i)
                vk = T.axis.reduce(64, k)
                with T.init():
                    S[vi] = T.float32(0)
                S[vi] = S[vi] + A[vi, vk]
    """


_KINDS = {"S": IterVarType.DataPar, "R": IterVarType.CommReduce}


class axis:  # noqa: N801 - TVM's name
    """Block iterators: ``vi = T.axis.spatial(128, i)``, ``vk = T.axis.reduce(128, k)``,
    ``vi, vj, vk = T.axis.remap("SSR", [i, j, k])``."""

    spatial = staticmethod(_axis(IterVarType.DataPar, "spatial", _AXIS_DOC.format(
        what="spatial (data-parallel)", why=": each of its values is computed independently")))
    reduce = staticmethod(_axis(IterVarType.CommReduce, "reduce", _AXIS_DOC.format(
        what="reduction", why=": the block accumulates over its values (``vk`` below)")))
    scan = staticmethod(_axis(IterVarType.Ordered, "scan", _AXIS_DOC.format(
        what="scan (ordered)", why=": its values must be visited in order")))
    opaque = staticmethod(_axis(IterVarType.Opaque, "opaque", _AXIS_DOC.format(
        what="opaque", why=": the schedule may assume nothing about it")))
    S = spatial
    R = reduce

    @staticmethod
    def remap(kinds: str, bindings, dtype: str = "int32"):
        """One iterator per loop variable, of kind "S" (spatial) or "R" (reduce)."""
        bindings = list(bindings) if isinstance(bindings, (list, tuple)) else [bindings]
        if len(kinds) != len(bindings):
            longer = "longer" if len(kinds) > len(bindings) else "shorter"
            raise TVMValueError(
                f"T.axis.remap: the iterator-kind string {kinds!r} is {longer} than the loops "
                f"it remaps ({len(kinds)} kinds for {len(bindings)} loop variables); give one "
                "letter per loop variable"
            )
        results = []
        for kind, binding in zip(kinds, bindings):
            if kind not in _KINDS:
                raise TVMValueError(f"T.axis.remap: unknown iterator kind {kind!r} in {kinds!r}: "
                                 "use 'S' (spatial) or 'R' (reduce)")
            if not isinstance(binding, Var):
                raise TVMTypeError("T.axis.remap binds loop variables only; use T.axis.spatial/"
                                "T.axis.reduce for an expression")
            dom = _loop_dom(binding)
            iv = IterVar(dom, Var("", binding.dtype, span=current_span()), _KINDS[kind],
                         span=current_span())
            results.append(_push_block_var(iv, binding))
        return results[0] if len(results) == 1 else results


def _loop_dom(var: Var) -> Range:
    for frame in IRBuilder.current().frames:
        if isinstance(frame, ForFrame):
            for v, d in zip(frame.vars, frame.doms):
                if v is var:
                    return d
    raise TVMValueError(f"T.axis.remap: {var.name_hint!r} is not the variable of an enclosing loop")



# TVM >= 0.24's names for the block API (``T.sblock`` is beside ``T.block``): the same builders.
sblock_alloc_buffer = alloc_buffer
sblock_attr = block_attr
