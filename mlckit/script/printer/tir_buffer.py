"""TIR buffers -> docs: ``T.Buffer`` annotations, ``T.match_buffer`` / ``T.alloc_buffer`` /
``T.decl_buffer`` declarations with only the attributes that differ from the defaults, and
buffer regions (as TVM's ``src/script/printer/tir/buffer.cc``)."""

from __future__ import annotations

from mlckit.tir import expr as E
from mlckit.tir.buffer import Buffer, BufferRegion, MatchBufferRegion

from . import doc as D
from .core import Frame, IRDocsifier, iter_children, register
from .tir_utils import (
    add,
    define_buffer,
    define_var,
    dtype_doc,
    find_lowest_var_def,
    is_const,
    tir_frame,
    uses_var,
    var_creation,
)

# -- buffers ---------------------------------------------------------------------------
# Which variables a buffer declaration defines along with the buffer (TVM's
# BufferVarDefinition): NONE (DeclBuffer), DATA (alloc_buffer: its data pointer),
# MATCH (match_buffer: the data pointer and any new shape/stride/offset variables).
NONE, DATA, MATCH = 0, 1, 2
_ALLOC_ALIGNMENT = 64


def buffer_attrs(d: IRDocsifier, buf: Buffer, frame: Frame, definitions: int) -> dict:
    """The keyword docs describing ``buf`` (shape, dtype, data, strides, …), declaring the
    new variables it introduces in ``frame`` first (``n = T.int32()``)."""
    use_count: dict[int, int] = {}

    def count(e):
        if isinstance(e, E.Var):
            use_count[id(e)] = use_count.get(id(e), 0) + 1
        for child in iter_children(e):
            count(child)

    for e in [buf.elem_offset, buf.data, *buf.strides, *buf.shape]:
        count(e)
    defs_lhs: list = []
    defs_rhs: list = []

    def is_new_var(e) -> bool:
        return isinstance(e, E.Var) and not d.is_defined(e)

    def out_of_line(var):
        defs_lhs.append(define_var(d, var, frame))
        defs_rhs.append(var_creation(d, var))

    def try_inline(var, creator) -> bool:
        if use_count.get(id(var)) == 1:
            d.define_creator(var, frame, creator)
            return True
        out_of_line(var)
        return False

    kwargs: dict = {}
    shape = []
    for e in buf.shape:
        if is_new_var(e):
            out_of_line(e)
        shape.append(d.expr(e))
    kwargs["shape"] = D.TupleDoc(shape)
    if buf.dtype != d.cfg.buffer_dtype:
        kwargs["dtype"] = dtype_doc(buf.dtype)
    inline_data = False
    if is_new_var(buf.data):
        if definitions >= DATA:
            inline_data = try_inline(buf.data, lambda: d.expr(buf).attr("data"))
        else:
            out_of_line(buf.data)
    if not inline_data:
        kwargs["data"] = d.expr(buf.data)
    if buf.strides:
        strides = []
        for i, e in enumerate(buf.strides):
            if is_new_var(e) and try_inline(e, lambda i=i: d.expr(buf).attr("strides")[D.LiteralDoc(i)]):
                strides.append(D.LiteralDoc(e.name_hint))
                continue
            strides.append(d.expr(e))
        kwargs["strides"] = D.TupleDoc(strides)
    needs_offset_factor = False
    offset = buf.elem_offset
    if isinstance(offset, E.IntImm):
        if offset.value != 0:
            kwargs["elem_offset"] = d.expr(offset)
    elif is_new_var(offset):
        try_inline(offset, lambda: d.expr(buf).attr("elem_offset"))
        needs_offset_factor = True
    elif offset is not None:
        kwargs["elem_offset"] = d.expr(offset)
    if buf.scope != "global":
        kwargs["scope"] = D.LiteralDoc(buf.scope)
    if buf.data_alignment != _ALLOC_ALIGNMENT:
        kwargs["align"] = D.LiteralDoc(buf.data_alignment)
    if needs_offset_factor or buf.offset_factor != 1:
        kwargs["offset_factor"] = D.LiteralDoc(buf.offset_factor)
    if buf.buffer_type not in ("", "default"):
        kwargs["buffer_type"] = D.LiteralDoc("auto")
    if buf.axis_separators:
        kwargs["axis_separators"] = d.expr(list(buf.axis_separators))
    if len(defs_lhs) == 1:
        frame.stmts.append(D.AssignDoc(defs_lhs[0], defs_rhs[0]))
    elif defs_lhs:
        frame.stmts.append(D.AssignDoc(D.TupleDoc(defs_lhs), D.TupleDoc(defs_rhs)))
    return kwargs


_BUFFER_KWARGS = ("data", "strides", "elem_offset", "scope", "align", "offset_factor",
                  "buffer_type", "axis_separators")


def buffer_decl(d: IRDocsifier, buf: Buffer, method: str, args: list, frame: Frame,
                definitions: int) -> D.ExprDoc:
    """``T.<method>(*args, shape, dtype, data=..., ...)`` declaring ``buf``."""
    attrs = buffer_attrs(d, buf, frame, definitions)
    positional = list(args) + [attrs[k] for k in ("shape", "dtype") if k in attrs]
    kwargs = [(k, attrs[k]) for k in _BUFFER_KWARGS if k in attrs]
    return d.TIR(method).call_kw(positional, kwargs)


def buffer_annotation(d: IRDocsifier, buf: Buffer, frame: Frame) -> D.ExprDoc:
    """``T.Buffer((128, 128), "float32")`` for a parameter (dtype always shown)."""
    attrs = buffer_attrs(d, buf, frame, DATA)
    return d.TIR("Buffer").call(attrs["shape"], attrs.get("dtype", dtype_doc(buf.dtype)))


def is_simple_buffer(buf: Buffer) -> bool:
    """A buffer that ``T.Buffer(shape, dtype)`` describes fully (no symbolic shape,
    default strides, offset, scope, alignment …)."""
    if buf.strides or any(uses_var(s, _AnyVar()) for s in buf.shape):
        return False
    offset = buf.elem_offset
    if offset is not None and (uses_var(offset, _AnyVar()) or (isinstance(offset, E.IntImm) and offset.value != 0)):
        return False
    return (buf.scope == "global" and buf.data_alignment == _ALLOC_ALIGNMENT
            and buf.offset_factor == 1 and buf.buffer_type in ("", "default")
            and not buf.axis_separators)


class _AnyVar:
    """A 'set' containing every var id (for uses_var: does the expr use any variable?)."""

    def __contains__(self, item) -> bool:
        return True


@register(Buffer)
def _buffer(buf: Buffer, d: IRDocsifier) -> D.Doc:
    if not d.is_defined(buf):
        frame = find_lowest_var_def(d, buf) or tir_frame(d) or d.frames[-1]
        lhs = define_buffer(d, buf, frame)
        rhs = buffer_decl(d, buf, "Buffer", [], frame, DATA)
        frame.stmts.append(D.AssignDoc(lhs, rhs))
    return d.get_var_doc(buf)


def _slices(d: IRDocsifier, region: list) -> list:
    out = []
    for rng in region:
        lo = d.expr(rng.min)
        if is_const(rng.extent, 1):
            out.append(lo)
        else:
            out.append(D.SliceDoc(lo, d.expr(add(rng.min, rng.extent))))
    return out


@register(BufferRegion)
def _buffer_region(region: BufferRegion, d: IRDocsifier) -> D.Doc:
    return d.expr(region.buffer)[_slices(d, region.region)]


@register(MatchBufferRegion)
def _match_buffer_region(node: MatchBufferRegion, d: IRDocsifier) -> D.Doc:
    frame = d.frames[-1]
    lhs = define_buffer(d, node.buffer, frame)
    source = d.expr(node.source)
    return D.AssignDoc(lhs, buffer_decl(d, node.buffer, "match_buffer", [source], frame, MATCH))


