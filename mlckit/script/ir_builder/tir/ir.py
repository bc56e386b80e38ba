"""The TIR IRBuilder API, with TVM's names (``tvm.script.ir_builder.tir``).

These functions build IR imperatively; the TVMScript parser calls the very same functions,
so a script and the equivalent builder calls give structurally equal IR::

    from mlckit.script.ir_builder import IRBuilder
    from mlckit.script.ir_builder import tir as T

    with IRBuilder() as ib:
        with T.prim_func():
            T.func_name("add_one")
            A = T.arg("A", T.Buffer((4,), "float32"))
            B = T.arg("B", T.Buffer((4,), "float32"))
            with T.grid(4) as i:
                with T.block("B"):
                    vi = T.axis.spatial(4, i)
                    T.buffer_store(B, A[vi] + T.float32(1), [vi])
    func = ib.get()
"""

from __future__ import annotations

from numbers import Integral
from typing import Any

from mlckit.arith import Analyzer
from mlckit.error import TVMIndexError, TVMTypeError, TVMValueError
from mlckit.tir import dtype as dt
from mlckit.tir import expr as E
from mlckit.tir import stmt as S
from mlckit.tir.buffer import Buffer, BufferRegion, MatchBufferRegion
from mlckit.tir.buffer import decl_buffer as _tir_decl_buffer
from mlckit.tir.expr import IterVar, IterVarType, PrimExpr, Range, Var, convert

from ..base import IRBuilder, IRBuilderError
from . import frames
from .frames import (
    AllocateFrame,
    AssertFrame,
    AttrFrame,
    BlockFrame,
    BlockInitFrame,
    DeclBufferFrame,
    ElseFrame,
    ForFrame,
    IfFrame,
    LaunchThreadFrame,
    LetFrame,
    PrimFuncFrame,
    ThenFrame,
    WhileFrame,
    add_to_parent,
    current_span,
)


# -- helpers ---------------------------------------------------------------------------------
def _prim_func_frame(method: str) -> PrimFuncFrame:
    """The PrimFuncFrame, which must be the innermost frame (TVM's FindPrimFuncFrame)."""
    last = IRBuilder.last_frame() if IRBuilder.is_in_scope() else None
    if isinstance(last, PrimFuncFrame):
        return last
    outer = IRBuilder.find_frame(PrimFuncFrame) if IRBuilder.is_in_scope() else None
    if outer is not None:
        raise IRBuilderError(f"{method} must be called at the top of the PrimFunc, "
                             "not inside a loop, block or other scope")
    raise IRBuilderError(f"{method} must be called inside a T.prim_func")


def _shape(shape) -> list:
    if isinstance(shape, (PrimExpr, Integral)):
        shape = (shape,)
    if not isinstance(shape, (list, tuple)):
        raise TVMTypeError(f"a buffer shape must be a tuple of sizes, got {type(shape).__name__}")
    out = []
    for s in shape:
        s = convert(s)
        if not isinstance(s, PrimExpr) or not (dt.is_int(s.dtype)):
            raise TVMTypeError(f"a buffer dimension must be an integer expression, got {s!r}")
        out.append(s)
    return out


def _buffer_decl(shape, dtype, name, data, strides, elem_offset, scope, align,
                 offset_factor, buffer_type, axis_separators) -> Buffer:
    if buffer_type not in ("", "default", "auto"):
        raise TVMValueError(f"buffer_type must be 'default' or 'auto', got {buffer_type!r}")
    shape = _shape(shape)
    dtype = dt.check_dtype(dtype)
    if strides:
        idx = shape[0].dtype if shape else "int32"
        strides = [Var(s, idx) if isinstance(s, str) else convert(s) for s in strides]
    buf = _tir_decl_buffer(shape, dtype, name, data, strides or [], elem_offset, scope,
                      align if align and align > 0 else -1, offset_factor,
                      "auto_broadcast" if buffer_type == "auto" else "", axis_separators)
    if data is None:
        buf.data.span = current_span()
    buf.span = current_span()
    return buf


def buffer(shape, dtype="float32", data=None, strides=None, elem_offset=None, scope="global",
           align=0, offset_factor=0, buffer_type="", axis_separators=None) -> Buffer:
    """Declare a buffer: ``T.Buffer((128, 128), "float32")`` in a parameter annotation.

    Example::

        def f(A: T.Buffer((128,), "float32")): ...
    """
    return _buffer_decl(shape, dtype, "", data, strides, elem_offset, scope, align,
                        offset_factor, buffer_type, axis_separators)


class BufferProxy:
    """``T.Buffer``: call it (``T.Buffer((4, 4), "float32")``) to declare a buffer; the old
    subscript form ``T.Buffer[(4, 4), "float32"]`` works too."""

    def __call__(self, shape, dtype="float32", data=None, strides=None, elem_offset=None,
                 scope="global", align=0, offset_factor=0, buffer_type="",
                 axis_separators=None) -> Buffer:
        return buffer(shape, dtype, data, strides, elem_offset, scope, align, offset_factor,
                      buffer_type, axis_separators)

    def __getitem__(self, keys) -> Buffer:
        if not isinstance(keys, tuple):
            return self(keys)
        if len(keys) >= 2 and not isinstance(keys[1], str):
            return self(keys)
        return self(*keys)

    def __instancecheck__(self, obj) -> bool:
        return isinstance(obj, Buffer)


Buffer_ = BufferProxy()


# -- functions ---------------------------------------------------------------------------------
def prim_func(is_private: bool = False) -> PrimFuncFrame:
    """Open a PrimFunc: ``with T.prim_func(): T.func_name("main"); A = T.arg(...)``."""
    return PrimFuncFrame(is_private)


def arg(name: str, obj):
    """Add a parameter: a Buffer (a handle param bound to it in buffer_map) or a Var.

    Example::

        A = T.arg("A", T.Buffer((4,), "float32"))
        n = T.arg("n", T.int32())
    """
    frame = _prim_func_frame("T.arg")
    if isinstance(obj, Buffer):
        IRBuilder.name(name, obj)
        handle = Var(f"{name}_handle", "handle", span=current_span())
        frame.args.append(handle)
        frame.buffer_map[handle] = obj
        return obj
    if isinstance(obj, Var):
        IRBuilder.name(name, obj)
        frame.args.append(obj)
        return obj
    raise TVMTypeError(f"a PrimFunc parameter must be a T.Buffer or a scalar Var (T.handle, "
                    f"T.int32() …), got {type(obj).__name__}")


def func_name(name: str) -> None:
    """Name the PrimFunc being built."""
    frame = _prim_func_frame("T.func_name")
    if frame.name is not None:
        raise IRBuilderError(f"the PrimFunc is already named {frame.name!r}")
    frame.name = name


def func_attr(attrs: dict) -> None:
    """Set attributes of the PrimFunc: ``T.func_attr({"tir.noalias": True})``.

    TVM >= 0.24's keys (``"tirx.noalias"``, ``"tirx.is_scheduled"``) name the same attributes
    as v0.23's ``"tir."`` ones: they are stored under the ``"tir."`` key, and a function
    printed in the tirx spelling writes them back as ``"tirx."``."""
    frame = _prim_func_frame("T.func_attr")
    for key, value in attrs.items():
        if isinstance(key, str) and key.startswith("tirx."):
            key = "tir." + key[len("tirx."):]
        if key == "global_symbol" and frame.is_private:
            raise TVMValueError("a private function may not have a global_symbol attribute")
        if key in frame.attrs:
            raise TVMValueError(f"duplicate PrimFunc attribute {key!r}")
        frame.attrs[key] = value


def func_ret(ret_type):
    """Set the return type of the PrimFunc."""
    frame = _prim_func_frame("T.func_ret")
    if frame.ret_type is not None:
        raise IRBuilderError("the PrimFunc already has a return type")
    frame.ret_type = ret_type
    return ret_type


def match_buffer(param, shape=None, dtype="float32", data=None, strides=None, elem_offset=None,
                 scope="global", align=-1, offset_factor=0, buffer_type="default",
                 axis_separators=None) -> Buffer:
    """Bind a buffer to a handle parameter, or (inside a block) view a region of a buffer.

    Example::

        A = T.match_buffer(a, (n, 128), "float32")          # a: T.handle
        sub = T.match_buffer(A[vi, 0:16], (16,))             # in a block
    """
    if shape is None:
        if isinstance(param, BufferRegion):
            dtype = param.buffer.dtype
            shape = [r.extent for r in param.region]
        else:
            raise TVMValueError("T.match_buffer needs a shape when binding a parameter")
    buf = _buffer_decl(shape, dtype, "", data, strides, elem_offset, scope, align,
                       offset_factor, buffer_type, axis_separators)
    if isinstance(param, Var):
        frame = _prim_func_frame("T.match_buffer")
        if not any(a is param for a in frame.args):
            raise TVMValueError(f"T.match_buffer: {param.name_hint!r} is not a parameter of the "
                             "function (only a T.handle parameter can be matched)")
        frame.buffer_map[param] = buf
        return buf
    if isinstance(param, E.BufferLoad):
        param = _region_from_load(param)
    if isinstance(param, BufferRegion):
        frame = frames._block_frame("T.match_buffer(region)")
        frame.match_buffers.append(MatchBufferRegion(buf, param, span=current_span()))
        return buf
    raise TVMTypeError(f"T.match_buffer expects a T.handle parameter or a buffer region, "
                    f"got {type(param).__name__}")


def _region_from_load(load: E.BufferLoad) -> BufferRegion:
    return BufferRegion(load.buffer, [Range(i, E.IntImm(i.dtype, 1)) for i in load.indices])


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


def _axis(kind: int):
    def make(dom, binding, dtype: str = "int32") -> Var:
        dom = _as_range(dom)
        bits = max(dt.bits(dom.min.dtype), dt.bits(dom.extent.dtype), dt.bits(dtype))
        var_dtype = f"int{bits}"
        iv = IterVar(dom, Var("", var_dtype, span=current_span()), kind, span=current_span())
        return _push_block_var(iv, binding)

    return make


_KINDS = {"S": IterVarType.DataPar, "R": IterVarType.CommReduce}


class axis:  # noqa: N801 - TVM's name
    """Block iterators: ``vi = T.axis.spatial(128, i)``, ``vk = T.axis.reduce(128, k)``,
    ``vi, vj, vk = T.axis.remap("SSR", [i, j, k])``."""

    spatial = staticmethod(_axis(IterVarType.DataPar))
    reduce = staticmethod(_axis(IterVarType.CommReduce))
    scan = staticmethod(_axis(IterVarType.Ordered))
    opaque = staticmethod(_axis(IterVarType.Opaque))
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
    if any(isinstance(i, slice) for i in indices):
        raise TVMValueError("storing to a slice (a vector store) is not supported by mlckit")
    if len(indices) != len(buffer.shape):
        raise TVMIndexError(f"buffer {buffer.name!r} has {len(buffer.shape)} dimension(s) but is "
                         f"indexed with {len(indices)} index(es)")
    index_dtype = next((i.dtype for i in indices if isinstance(i, PrimExpr)), None)
    indices = [convert(i, index_dtype) for i in indices]
    if isinstance(value, bool) and buffer.dtype == "bool":
        value = E.IntImm("bool", value)
    value = convert(value, buffer.dtype)
    if not isinstance(value, PrimExpr):
        raise TVMTypeError(f"cannot store a {type(value).__name__} into buffer {buffer.name!r}")
    if value.dtype != buffer.dtype:
        value = E.cast(value, buffer.dtype)
    add_to_parent(S.BufferStore(buffer, value, indices, span=current_span()))


def evaluate(value) -> None:
    """An expression statement: ``T.evaluate(0)``."""
    if isinstance(value, str):
        value = E.StringImm(value)
    if isinstance(value, bool):
        value = E.IntImm("bool", value)
    add_to_parent(S.Evaluate(convert(value), span=current_span()))


# -- scalar types: T.int32() is a new Var, T.int32(x) a cast -------------------------------------
def _scalar(dtype: str):
    def make(expr=None, *, is_size_var: bool = False):
        if expr is None:
            cls = E.SizeVar if is_size_var else Var
            return cls("", dtype, span=current_span())
        if isinstance(expr, str):
            expr = float(expr)
        return E.cast(expr, dtype)

    make.__name__ = dtype
    make.__qualname__ = dtype
    make.__doc__ = (f"``T.{dtype}()`` is a new {dtype} variable (a symbolic size or a scalar "
                    f"parameter); ``T.{dtype}(x)`` converts ``x`` to {dtype}.")
    make.dtype = dtype
    return make


int8, int16, int32, int64 = (_scalar(t) for t in ("int8", "int16", "int32", "int64"))
uint8, uint16, uint32, uint64 = (_scalar(t) for t in ("uint8", "uint16", "uint32", "uint64"))
float16, float32, float64 = (_scalar(t) for t in ("float16", "float32", "float64"))
boolean = _scalar("bool")


def handle(dtype: str | None = None, storage_scope: str = "global", *,
           is_size_var: bool = False) -> Var:
    """A pointer parameter: ``def f(a: T.handle): A = T.match_buffer(a, (n,))``."""
    cls = E.SizeVar if is_size_var else Var
    return cls("", "handle", span=current_span())


handle.dtype = "handle"


def var(dtype: str, name: str = "") -> Var:
    """A new Var of ``dtype`` (TVM's deprecated ``T.var``)."""
    return Var(name, dtype)


class meta_var:  # noqa: N801 - TVM's name
    """A Python value kept by the parser, never turned into IR: ``x = T.meta_var(3)``."""

    def __init__(self, value: Any):
        self.value = value

    def __iter__(self):
        return (meta_var(v) for v in self.value)


# TVM >= 0.24's names for the block API (``T.sblock`` is beside ``T.block``): the same builders.
sblock_alloc_buffer = alloc_buffer
sblock_attr = block_attr
