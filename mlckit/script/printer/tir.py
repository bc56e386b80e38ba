"""TIR -> docs: expressions, buffers, statements, loops, blocks and PrimFuncs.

Follows TVM v0.23's printer (src/script/printer/tir/*.cc): the same sugar (``T.grid``,
``T.axis.remap``, ``T.Buffer`` parameters, the implicit root block, concise ``x: T.int32 =
v`` lets), the same rules for where a free variable is declared, and the same operator
spelling (``a // b`` for FloorDiv, ``T.Div`` for integer Div, ``T.truncmod`` for Mod).
"""

from __future__ import annotations

from collections.abc import Callable

from mlckit.error import TVMTypeError
from mlckit.ir.module import GlobalVar
from mlckit.ir.op import Op
from mlckit.ir.structural import structural_equal
from mlckit.tir import dtype as dt
from mlckit.tir import expr as E
from mlckit.tir import stmt as S
from mlckit.tir.buffer import Buffer, BufferRegion, MatchBufferRegion
from mlckit.tir.function import PrimFunc

from . import doc as D
from .core import Frame, IRDocsifier, iter_children, register, register_root, tag_source

# -- small helpers -------------------------------------------------------------------------


def is_tir_var(obj) -> bool:
    """Objects whose definition site the printer tracks in TIR: Vars and Buffers."""
    return isinstance(obj, (E.Var, Buffer))


def is_const(expr, value) -> bool:
    """True when ``expr`` is the integer constant ``value`` (TVM's is_zero / is_one)."""
    return isinstance(expr, E.IntImm) and expr.value == value


def uses_var(expr, var_ids: set[int]) -> bool:
    """True when a Var whose id is in ``var_ids`` occurs in ``expr``."""
    if isinstance(expr, E.Var):
        return id(expr) in var_ids
    return any(uses_var(child, var_ids) for child in iter_children(expr))


def count_uses(root, var) -> int:
    """How many times ``var`` occurs under ``root`` (buffers are looked into each time)."""
    if root is var:
        return 1
    return sum(count_uses(child, var) for child in iter_children(root))


def define_var(d: IRDocsifier, var: E.Var, frame: Frame) -> D.ExprDoc:
    """The name of ``var``, defining it in ``frame`` if it has none yet."""
    doc = d.get_var_doc(var)
    if doc is not None:
        return doc
    return d.define(var, frame, var.name_hint or "v")


def define_buffer(d: IRDocsifier, buf: Buffer, frame: Frame) -> D.IdDoc:
    return d.define(buf, frame, buf.name or "buffer")


def dtype_doc(dtype: str) -> D.LiteralDoc:
    return D.LiteralDoc(dtype)


def var_creation(d: IRDocsifier, var: E.Var) -> D.ExprDoc:
    """``T.int32()`` / ``T.float32(is_size_var=True)``: the right-hand side declaring var."""
    kwargs = [("is_size_var", D.LiteralDoc(True))] if isinstance(var, E.SizeVar) else []
    return d.TIR(var.dtype).call_kw([], kwargs)


def add(a, b):
    """``a + b`` with TVM's constant folding (used for ``min + extent`` bounds)."""
    return E.add(a, b)


def tir_frame(d: IRDocsifier) -> Frame | None:
    for frame in reversed(d.frames):
        if frame.kind == "tir":
            return frame
    return None


def find_lowest_var_def(d: IRDocsifier, var) -> Frame | None:
    """The innermost open frame whose node encloses every use of ``var`` (TVM's
    FindLowestVarDef); a fragment's root frame when none does."""
    path = d.common_prefix.get(id(var))
    if path is None:
        return None
    node_frames: dict[int, Frame] = {}
    fallback = None
    for frame in reversed(d.frames):
        if frame.kind != "tir":
            continue
        if frame.node is not None:
            node_frames[id(frame.node)] = frame
        elif fallback is None:
            fallback = frame
    for node_id in reversed(path):
        if node_id in node_frames:
            return node_frames[node_id]
    return fallback


def as_doc_body(d: IRDocsifier, stmt: S.Stmt, frame: Frame) -> None:
    """Append the docs of ``stmt`` (flattening a SeqStmt) to ``frame.stmts``."""
    seq = stmt.seq if isinstance(stmt, S.SeqStmt) else [stmt]
    for i, s in enumerate(seq):
        frame.allow_concise_scoping = i == len(seq) - 1
        doc = d.as_doc(s)
        if isinstance(doc, D.StmtBlockDoc):
            frame.stmts.extend(doc.stmts)
        else:
            frame.stmts.append(doc)


def allow_concise_scoping(d: IRDocsifier) -> bool:
    frame = d.frames[-1]
    return frame.kind == "tir" and frame.allow_concise_scoping


def concise_scope(lhs, rhs, stmts: list, concise: bool) -> D.Doc:
    """``lhs = rhs`` followed by the body at the same level, or ``with rhs as lhs:``."""
    if not concise:
        return D.ScopeDoc(lhs, rhs, stmts)
    head = D.AssignDoc(lhs, rhs) if lhs is not None else D.ExprStmtDoc(rhs)
    return D.StmtBlockDoc([head, *stmts])


@register_root("tir")
def _root(d: IRDocsifier, obj) -> None:
    d.set_common_prefix(obj, is_tir_var)


# -- constants and variables --------------------------------------------------------------
@register(E.IntImm)
def _int_imm(imm: E.IntImm, d: IRDocsifier) -> D.Doc:
    if imm.dtype == "bool":
        return d.TIR("bool").call(D.LiteralDoc(bool(imm.value)))
    if imm.dtype == d.cfg.int_dtype:
        return D.LiteralDoc(int(imm.value))
    return d.TIR(imm.dtype).call(D.LiteralDoc(int(imm.value)))


@register(E.FloatImm)
def _float_imm(imm: E.FloatImm, d: IRDocsifier) -> D.Doc:
    if imm.dtype == d.cfg.float_dtype:
        return D.LiteralDoc(float(imm.value))
    return d.TIR(imm.dtype).call(D.LiteralDoc(float(imm.value)))


@register(E.StringImm)
def _string_imm(imm: E.StringImm, d: IRDocsifier) -> D.Doc:
    return D.LiteralDoc(imm.value)


@register(E.Var)
def print_var(var: E.Var, d: IRDocsifier) -> D.Doc:
    """A TIR variable; a free one is declared (``n = T.int32()``) where TVM would."""
    if not d.is_defined(var):
        frame = find_lowest_var_def(d, var) or tir_frame(d) or d.frames[-1]
        lhs = define_var(d, var, frame)
        frame.stmts.append(D.AssignDoc(lhs, var_creation(d, var)))
    return d.get_var_doc(var)


@register(E.IterVar)
def _iter_var(iv: E.IterVar, d: IRDocsifier) -> D.Doc:
    names = {0: "DataPar", 1: "ThreadIndex", 2: "CommReduce", 3: "Ordered", 4: "Opaque"}
    return d.TIR("iter_var").call(
        d.expr(iv.var), d.expr(iv.dom), D.LiteralDoc(names.get(iv.iter_type, "DataPar")),
        D.LiteralDoc(iv.thread_tag),
    )


@register(E.Range)
def _range(rng: E.Range, d: IRDocsifier) -> D.Doc:
    prefix = {"tir": d.TIR, "relax": d.R}.get(d.tokens[-1], d.IR)
    return prefix("Range").call(d.expr(rng.min), d.expr(add(rng.extent, rng.min)))


# -- operators ----------------------------------------------------------------------------
_SUGAR: dict[type, tuple[D.OpKind, str, Callable]] = {
    E.Add: (D.OpKind.ADD, "Add", E.add),
    E.Sub: (D.OpKind.SUB, "Sub", E.sub),
    E.Mul: (D.OpKind.MULT, "Mul", E.mul),
    E.FloorDiv: (D.OpKind.FLOOR_DIV, "FloorDiv", E.floordiv),
    E.FloorMod: (D.OpKind.MOD, "FloorMod", E.floormod),
    E.LT: (D.OpKind.LT, "LT", lambda a, b: E._compare(E.LT, a, b)),
    E.LE: (D.OpKind.LTE, "LE", lambda a, b: E._compare(E.LE, a, b)),
    E.EQ: (D.OpKind.EQ, "EQ", lambda a, b: E._compare(E.EQ, a, b)),
    E.NE: (D.OpKind.NOT_EQ, "NE", lambda a, b: E._compare(E.NE, a, b)),
    E.GT: (D.OpKind.GT, "GT", lambda a, b: E._compare(E.GT, a, b)),
    E.GE: (D.OpKind.GTE, "GE", lambda a, b: E._compare(E.GE, a, b)),
    E.And: (D.OpKind.AND, "And", E.logical_and),
    E.Or: (D.OpKind.OR, "Or", E.logical_or),
}


def _rebuilds_same(node, build) -> bool:
    """True when the Python operator would rebuild exactly ``node`` (no folding, no casts):
    only then does ``a + b`` parse back to the same IR."""
    try:
        rebuilt = build(node.a, node.b)
    except (TypeError, ValueError):
        return False
    return type(rebuilt) is type(node) and rebuilt.a is node.a and rebuilt.b is node.b


def _binary_with_sugar(node, d: IRDocsifier) -> D.Doc:
    kind, name, build = _SUGAR[type(node)]
    a, b = d.expr(node.a), d.expr(node.b)
    if _rebuilds_same(node, build):
        return D.OperationDoc(kind, [a, b])
    return d.TIR(name).call(a, b)


for _cls in _SUGAR:
    register(_cls)(_binary_with_sugar)


@register(E.Div)
def _div(node: E.Div, d: IRDocsifier) -> D.Doc:
    a, b = d.expr(node.a), d.expr(node.b)
    rebuilt = E._binary(E.Div, node.a, node.b)
    is_int = dt.is_int(node.a.dtype) and dt.is_int(node.b.dtype)
    if not isinstance(rebuilt, E.Div) or is_int:
        return d.TIR("Div").call(a, b)
    return D.OperationDoc(D.OpKind.DIV, [a, b])


def _named_binary(name: str):
    def printer(node, d: IRDocsifier) -> D.Doc:
        return d.TIR(name).call(d.expr(node.a), d.expr(node.b))

    return printer


register(E.Mod)(_named_binary("truncmod"))
register(E.Min)(_named_binary("min"))
register(E.Max)(_named_binary("max"))


@register(E.Not)
def _not(node: E.Not, d: IRDocsifier) -> D.Doc:
    a = d.expr(node.a)
    if isinstance(a, D.LiteralDoc):
        return d.TIR("Not").call(a)
    return D.OperationDoc(D.OpKind.NOT, [a])


@register(E.Cast)
def _cast(node: E.Cast, d: IRDocsifier) -> D.Doc:
    return d.TIR("Cast").call(dtype_doc(node.dtype), d.expr(node.value))


@register(E.Select)
def _select(node: E.Select, d: IRDocsifier) -> D.Doc:
    return d.TIR("Select").call(
        d.expr(node.condition), d.expr(node.true_value), d.expr(node.false_value)
    )


@register(E.Let)
def _let(node: E.Let, d: IRDocsifier) -> D.Doc:
    where = D.DictDoc([d.expr(node.var)], [d.expr(node.value)])
    return d.TIR("Let").call_kw([d.expr(node.body)], [("where", where)])


# Intrinsics whose dtype is printed as their first argument (TVM's TScriptDtypePrintLocation).
DTYPE_FIRST_OPS = {"tir.call_extern", "tir.call_pure_extern", "tir.call_llvm_intrin",
                   "tir.call_llvm_pure_intrin", "tir.reinterpret", "tir.type_annotation"}


# Intrinsics printed under another name than their op's (TVM's TScriptPrinterName).
PRINT_NAMES = {"tir.tvm_call_packed": "tir.call_packed"}


@register(E.Call)
def _call(node: E.Call, d: IRDocsifier) -> D.Doc:
    args = []
    if isinstance(node.op, Op):
        name = node.op.name
        name = PRINT_NAMES.get(name, name)
        prefix = d.TIR(name[4:] if name.startswith("tir.") else name)
        if name in DTYPE_FIRST_OPS:
            args.append(dtype_doc(node.dtype))
    elif isinstance(node.op, GlobalVar):
        prefix = d.expr(node.op)
    else:
        raise TVMTypeError(f"cannot print a TIR call of {type(node.op).__name__}")
    args += [d.expr(a) for a in node.args]
    return prefix.call(*args)


@register(E.BufferLoad)
def _buffer_load(node: E.BufferLoad, d: IRDocsifier) -> D.Doc:
    return d.expr(node.buffer)[[d.expr(i) for i in node.indices]]


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


# -- statements ----------------------------------------------------------------------------
@register(S.BufferStore)
def _buffer_store(node: S.BufferStore, d: IRDocsifier) -> D.Doc:
    buf = d.expr(node.buffer)
    value = d.expr(node.value)
    return D.AssignDoc(buf[[d.expr(i) for i in node.indices]], value)


@register(S.Evaluate)
def _evaluate(node: S.Evaluate, d: IRDocsifier) -> D.Doc:
    value = node.value
    if (d.cfg.syntax_sugar and isinstance(value, E.Call) and isinstance(value.op, Op)
            and value.op.name == "tir.ret" and len(value.args) == 1):
        return D.ReturnDoc(d.expr(value.args[0]))
    doc = d.expr(value)
    if isinstance(value, E.Call):
        return D.ExprStmtDoc(doc)
    return D.ExprStmtDoc(d.TIR("evaluate").call(doc))


@register(S.LetStmt)
def _let_stmt(node: S.LetStmt, d: IRDocsifier) -> D.Doc:
    concise = allow_concise_scoping(d)
    type_doc = d.TIR(node.var.dtype)
    rhs = d.expr(node.value)
    with d.frame(Frame("tir", node)) as f:
        var_defined = d.is_defined(node.var)
        if not var_defined:
            define_var(d, node.var, f)
        lhs = d.expr(node.var)
        as_doc_body(d, node.body, f)
        if var_defined:
            return D.ScopeDoc(None, d.TIR("LetStmt").call_kw([rhs], [("var", lhs)]), f.stmts)
        if concise:
            return D.StmtBlockDoc([D.AssignDoc(lhs, rhs, type_doc), *f.stmts])
        return D.ScopeDoc(lhs, d.TIR("LetStmt").call(rhs), f.stmts)


@register(S.AssertStmt)
def _assert_stmt(node: S.AssertStmt, d: IRDocsifier) -> D.Doc:
    concise = allow_concise_scoping(d)
    cond, msg = d.expr(node.condition), d.expr(node.message)
    with d.frame(Frame("tir", node)) as f:
        as_doc_body(d, node.body, f)
        if concise:
            return D.StmtBlockDoc([D.AssertDoc(cond, msg), *f.stmts])
        return D.ScopeDoc(None, d.TIR("Assert").call(cond, msg), f.stmts)


@register(S.While)
def _while(node: S.While, d: IRDocsifier) -> D.Doc:
    cond = d.expr(node.condition)
    with d.frame(Frame("tir", node)) as f:
        as_doc_body(d, node.body, f)
        return D.WhileDoc(cond, f.stmts)


def _decl_buffer_doc(node: S.DeclBuffer, d: IRDocsifier, definitions: int) -> D.Doc:
    concise = allow_concise_scoping(d)
    rhs = buffer_decl(d, node.buffer, "decl_buffer", [], d.frames[-1], definitions)
    with d.frame(Frame("tir", node)) as f:
        lhs = define_buffer(d, node.buffer, f)
        as_doc_body(d, node.body, f)
        return concise_scope(lhs, rhs, f.stmts, concise)


@register(S.DeclBuffer)
def _decl_buffer(node: S.DeclBuffer, d: IRDocsifier) -> D.Doc:
    return _decl_buffer_doc(node, d, NONE)


@register(S.IfThenElse)
def _if_then_else(node: S.IfThenElse, d: IRDocsifier) -> D.Doc:
    cond = d.expr(node.condition)
    branches = []
    for case in (node.then_case, node.else_case):
        if case is None:
            branches.append([])
            continue
        with d.frame(Frame("tir", case)) as f:
            as_doc_body(d, case, f)
            branches.append(f.stmts)
    return D.IfDoc(cond, branches[0], branches[1])


@register(S.SeqStmt)
def _seq_stmt(node: S.SeqStmt, d: IRDocsifier) -> D.Doc:
    with d.frame(Frame("tir", node)) as f:
        as_doc_body(d, node, f)
        return D.StmtBlockDoc(f.stmts)


def _is_allocate_decl_buffer(node: S.Allocate) -> bool:
    body = node.body
    if not isinstance(body, S.DeclBuffer):
        return False
    buf = body.buffer
    return (buf.data is node.buffer_var and buf.dtype == node.dtype
            and is_const(node.condition, 1) and not node.annotations
            and len(node.extents) == len(buf.shape)
            and all(structural_equal(E.convert(a), E.convert(b))
                    for a, b in zip(node.extents, buf.shape)))


@register(S.Allocate)
def _allocate(node: S.Allocate, d: IRDocsifier) -> D.Doc:
    concise = allow_concise_scoping(d)
    if d.cfg.syntax_sugar and _is_allocate_decl_buffer(node):
        return _decl_buffer_doc(node.body, d, DATA)
    args = [d.expr(list(node.extents)), dtype_doc(node.dtype),
            D.LiteralDoc((node.annotations or {}).get("storage_scope", "global"))]
    if not is_const(node.condition, 1):
        args.append(d.expr(node.condition))
    kwargs = []
    annotations = {k: v for k, v in (node.annotations or {}).items() if k != "storage_scope"}
    if annotations:
        kwargs.append(("annotations", d.expr(annotations)))
    lhs = define_var(d, node.buffer_var, d.frames[-1])
    with d.frame(Frame("tir", node)) as f:
        rhs = d.TIR("allocate").call_kw(args, kwargs)
        as_doc_body(d, node.body, f)
        return concise_scope(lhs, rhs, f.stmts, concise)


def _is_ancestor_of_all_uses(d: IRDocsifier, node, var) -> bool:
    return id(node) in d.common_prefix.get(id(var), [])


@register(S.AttrStmt)
def _attr_stmt(node: S.AttrStmt, d: IRDocsifier) -> D.Doc:
    concise = allow_concise_scoping(d)
    define = None
    if node.attr_key in ("thread_extent", "virtual_thread") and isinstance(node.node, E.IterVar):
        iv = node.node
        if d.is_defined(iv.var):
            var_doc = d.expr(iv.var)
        elif _is_ancestor_of_all_uses(d, node, iv.var):
            var_doc, define = D.LiteralDoc(iv.thread_tag), iv.var
        else:
            frame = find_lowest_var_def(d, iv.var) or d.frames[-1]
            lhs = define_var(d, iv.var, frame)
            frame.stmts.append(D.AssignDoc(lhs, d.TIR("env_thread").call(D.LiteralDoc(iv.thread_tag))))
            var_doc = lhs
        rhs = d.TIR("launch_thread").call(var_doc, d.expr(node.value))
    else:
        rhs = d.TIR("attr").call(d.expr(node.node), D.LiteralDoc(node.attr_key), d.expr(node.value))
    with d.frame(Frame("tir", node)) as f:
        lhs = define_var(d, define, f) if define is not None else None
        as_doc_body(d, node.body, f)
        return concise_scope(lhs, rhs, f.stmts, concise)


# -- loops ---------------------------------------------------------------------------------
_LOOP_KINDS = {
    S.ForKind.PARALLEL: "parallel",
    S.ForKind.UNROLLED: "unroll",
    S.ForKind.VECTORIZED: "vectorized",
    S.ForKind.THREAD_BINDING: "thread_binding",
}


@register(S.For)
def _for(loop: S.For, d: IRDocsifier) -> D.Doc:
    grid: list[S.For] = []
    grid_vars: set[int] = set()
    if d.cfg.syntax_sugar:
        node = loop
        while isinstance(node, S.For):
            if (node.kind != S.ForKind.SERIAL or not is_const(node.min, 0) or node.annotations
                    or uses_var(node.extent, grid_vars)):
                break
            grid.append(node)
            grid_vars.add(id(node.loop_var))
            node = node.body
    with d.frame(Frame("tir", loop)) as f:
        if len(grid) > 1:
            lhs = [define_var(d, g.loop_var, f) for g in grid]
            extents = [d.expr(g.extent) for g in grid]
            as_doc_body(d, grid[-1].body, f)
            doc = D.ForDoc(D.TupleDoc(lhs), d.TIR("grid").call(*extents), f.stmts)
            tag_source(doc, *grid)  # one line for the whole nest of loops
            return doc
        lhs = define_var(d, loop.loop_var, f)
        if is_const(loop.min, 0):
            args = [d.expr(loop.extent)]
        else:
            args = [d.expr(loop.min), d.expr(add(loop.min, loop.extent))]
        kwargs = []
        if loop.kind == S.ForKind.SERIAL:
            prefix = D.IdDoc("range") if not loop.annotations else d.TIR("serial")
        else:
            prefix = d.TIR(_LOOP_KINDS[loop.kind])
        if loop.kind == S.ForKind.THREAD_BINDING:
            tag = loop.thread_binding.thread_tag if loop.thread_binding is not None else ""
            kwargs.append(("thread", D.LiteralDoc(tag)))
        if loop.annotations:
            kwargs.append(("annotations", d.expr(loop.annotations)))
        rhs = prefix.call_kw(args, kwargs)
        as_doc_body(d, loop.body, f)
        return D.ForDoc(lhs, rhs, f.stmts)


# -- blocks --------------------------------------------------------------------------------
_AXIS_KINDS = {0: "spatial", 2: "reduce", 3: "scan", 4: "opaque"}


def print_block(d: IRDocsifier, block: S.Block, realize: S.BlockRealize | None) -> D.Doc:
    """``with T.block("name"):`` with its iterators, regions, buffers, init and body."""
    with d.frame(Frame("tir", block)) as frame:
        loops: dict[int, S.For] = {}
        for fr in d.frames:
            node = fr.node if fr.kind == "tir" else None
            while isinstance(node, S.For):
                loops[id(node.loop_var)] = node
                node = node.body

        def remappable(i: int) -> bool:
            if realize is None or not d.cfg.syntax_sugar:
                return False
            iv, value = block.iter_vars[i], realize.iter_values[i]
            loop = loops.get(id(value)) if isinstance(value, E.Var) else None
            return (iv.iter_type in (0, 2) and loop is not None
                    and structural_equal(loop.min, iv.dom.min)
                    and structural_equal(loop.extent, iv.dom.extent))

        def single(i: int) -> None:
            iv = block.iter_vars[i]
            axis = d.TIR("axis").attr(_AXIS_KINDS.get(iv.iter_type, "opaque"))
            if is_const(iv.dom.min, 0):
                dom = d.expr(iv.dom.extent)
            else:
                dom = D.TupleDoc([d.expr(iv.dom.min), d.expr(add(iv.dom.min, iv.dom.extent))])
            args = [dom] if realize is None else [dom, d.expr(realize.iter_values[i])]
            rhs = axis.call(*args)
            frame.stmts.append(D.AssignDoc(define_var(d, iv.var, frame), rhs))

        pending: list[int] = []

        def flush() -> None:
            if len(pending) == 1:
                single(pending[0])
            elif pending:
                lhs = [define_var(d, block.iter_vars[i].var, frame) for i in pending]
                values = [d.expr(realize.iter_values[i]) for i in pending]
                kinds = "".join("S" if block.iter_vars[i].iter_type == 0 else "R" for i in pending)
                rhs = d.TIR("axis").attr("remap").call(D.LiteralDoc(kinds), D.ListDoc(values))
                frame.stmts.append(D.AssignDoc(D.TupleDoc(lhs), rhs))
            pending.clear()

        for i in range(len(block.iter_vars)):
            if remappable(i):
                pending.append(i)
            else:
                flush()
                single(i)
        flush()

        if realize is not None and not is_const(realize.predicate, 1):
            frame.stmts.append(D.ExprStmtDoc(d.TIR("where").call(d.expr(realize.predicate))))
        frame.stmts.append(D.ExprStmtDoc(d.TIR("reads").call(*[d.expr(r) for r in block.reads])))
        frame.stmts.append(D.ExprStmtDoc(d.TIR("writes").call(*[d.expr(w) for w in block.writes])))
        if block.annotations:
            attr = d.TIR(d.tir_name("block_attr"))
            frame.stmts.append(D.ExprStmtDoc(attr.call(d.expr(block.annotations))))
        for buf in block.alloc_buffers:
            lhs = define_buffer(d, buf, frame)
            alloc = buffer_decl(d, buf, d.tir_name("alloc_buffer"), [], frame, DATA)
            frame.stmts.append(D.AssignDoc(lhs, alloc))
        for match in block.match_buffers:
            frame.stmts.append(d.as_doc(match))
        if block.init is not None:
            with d.frame(Frame("tir", block.init)) as init_frame:
                as_doc_body(d, block.init, init_frame)
                init_doc = D.ScopeDoc(None, d.TIR("init").call(), init_frame.stmts)
                tag_source(init_doc, block.init)
                frame.stmts.append(init_doc)
        as_doc_body(d, block.body, frame)
        kwargs = [] if realize is not None else [("no_realize", D.LiteralDoc(True))]
        head = d.TIR(d.tir_name("block")).call_kw([D.LiteralDoc(block.name_hint)], kwargs)
        return D.ScopeDoc(None, head, frame.stmts)


@register(S.BlockRealize)
def _block_realize(node: S.BlockRealize, d: IRDocsifier) -> D.Doc:
    return print_block(d, node.block, node)


@register(S.Block)
def _block(node: S.Block, d: IRDocsifier) -> D.Doc:
    return print_block(d, node, None)


# -- functions -----------------------------------------------------------------------------
def _contains_block_realize(stmt) -> bool:
    if isinstance(stmt, S.BlockRealize):
        return True
    if isinstance(stmt, E.PrimExpr):
        return False
    return any(_contains_block_realize(c) for c in iter_children(stmt))


def implicit_root_block(func: PrimFunc) -> S.Block | None:
    """The root block TVM leaves implicit (``# with T.block("root"):``), if any."""
    realize = func.body
    if not (isinstance(realize, S.BlockRealize) and not realize.iter_values
            and is_const(realize.predicate, 1)):
        return None
    root = realize.block
    if root.annotations or root.match_buffers or root.reads or root.writes or root.init is not None:
        return None
    body = root.body
    if (root.alloc_buffers or (isinstance(body, S.BlockRealize) and body.block.iter_vars)
            or (not isinstance(body, S.BlockRealize) and _contains_block_realize(body))):
        return root
    return None


@register(PrimFunc)
def print_prim_func(func: PrimFunc, d: IRDocsifier) -> D.Doc:
    """``@T.prim_func def name(params): body`` in the function's spelling (``T.block`` or,
    TVM >= 0.24's, ``@T.prim_func(s_tir=True)`` with ``T.sblock``)."""
    outer = d.tir_spelling
    d.tir_spelling = d.cfg.tir_spelling or func.spelling or outer
    d.tir_spellings_used.add(d.tir_spelling)
    try:
        return _print_prim_func(func, d)
    finally:
        d.tir_spelling = outer


def _print_prim_func(func: PrimFunc, d: IRDocsifier) -> D.Doc:
    with d.frame(Frame("tir", func), token="tir") as f:
        name = d.function_name(func) or "main"
        d.set_common_prefix(func, is_tir_var)
        data_users: dict[int, int] = {}
        for buf in func.buffer_map.values():
            data_users[id(buf.data)] = data_users.get(id(buf.data), 0) + 1
        # Step 1: parameters, as `A: T.Buffer(...)` where the buffer is simple.
        args: list[D.AssignDoc] = []
        inlined: set[int] = set()
        for param in func.params:
            buf = func.buffer_map.get(param)
            if (d.cfg.syntax_sugar and buf is not None and is_simple_buffer(buf)
                    and data_users[id(buf.data)] == 1
                    and count_uses(func.body, param)
                    + sum(count_uses(b, param) for b in func.buffer_map.values()) == 0):
                lhs = define_buffer(d, buf, f)
                args.append(D.AssignDoc(lhs, None, buffer_annotation(d, buf, f)))
                inlined.add(id(buf))
                continue
            args.append(D.AssignDoc(define_var(d, param, f), None, d.TIR(param.dtype)))
        # Step 2: attributes (global_symbol is implied by the name).
        attrs = dict(func.attrs)
        if attrs.get("global_symbol") == name:
            del attrs["global_symbol"]
        if d.tir_spelling == "tirx":  # TVM >= 0.24 keys its attributes "tirx.noalias" …
            attrs = {"tirx." + k[4:] if k.startswith("tir.") else k: v for k, v in attrs.items()}
        if attrs:
            f.stmts.append(D.ExprStmtDoc(d.TIR("func_attr").call(d.expr(attrs))))
        # Step 3: the other buffers of the buffer map, as T.match_buffer.
        for param, arg in zip(func.params, args):
            buf = func.buffer_map.get(param)
            if buf is None or id(buf) in inlined:
                continue
            lhs = define_buffer(d, buf, f)
            rhs = buffer_decl(d, buf, "match_buffer", [arg.lhs], f, MATCH)
            f.stmts.append(D.AssignDoc(lhs, rhs))
        # Step 4: the body, with the root block left implicit.
        root = implicit_root_block(func) if d.cfg.syntax_sugar else None
        if root is not None:
            comment = D.CommentDoc(f'with T.{d.tir_name("block")}("root"):')
            tag_source(comment, func.body)
            f.stmts.append(comment)
            for buf in root.alloc_buffers:
                lhs = define_buffer(d, buf, f)
                decl = buffer_decl(d, buf, d.tir_name("alloc_buffer"), [], f, DATA)
                alloc = D.AssignDoc(lhs, decl)
                tag_source(alloc, func.body)  # the (implicit) root block allocates it
                f.stmts.append(alloc)
            as_doc_body(d, root.body, f)
        else:
            as_doc_body(d, func.body, f)
        ret = None
        if isinstance(func.ret_type, str) and func.ret_type not in ("", "void"):
            ret = d.TIR(func.ret_type)
        decorator = d.TIR("prim_func")
        kwargs = [] if "global_symbol" in func.attrs else [("private", D.LiteralDoc(True))]
        if d.tir_spelling == "tirx" and _contains_block_realize(func.body):
            kwargs.append(("s_tir", D.LiteralDoc(True)))
        if kwargs:
            decorator = decorator.call_kw([], kwargs)
        return d.header_wrapper(D.FunctionDoc(D.IdDoc(name), args, [decorator], ret, f.stmts))
