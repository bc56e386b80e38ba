"""TIR statements -> docs: stores, lets, asserts, ifs, allocations, attributes, loops
(``T.grid`` sugar) and blocks (``T.axis.remap``, reads/writes)
(as TVM's ``src/script/printer/tir/stmt.cc``, ``for_loop.cc`` and ``block.cc``)."""

from __future__ import annotations

from mlckit.ir.op import Op
from mlckit.ir.structural import structural_equal
from mlckit.tir import expr as E
from mlckit.tir import stmt as S

from . import doc as D
from .core import Frame, IRDocsifier, register, tag_source
from .tir_buffer import DATA, NONE, buffer_decl
from .tir_expr import store_index_doc
from .tir_utils import (
    add,
    allow_concise_scoping,
    as_doc_body,
    concise_scope,
    define_buffer,
    define_var,
    dtype_doc,
    find_lowest_var_def,
    is_const,
    uses_var,
)


# -- statements ----------------------------------------------------------------------------
@register(S.BufferStore)
def _buffer_store(node: S.BufferStore, d: IRDocsifier) -> D.Doc:
    buf = d.expr(node.buffer)
    value = d.expr(node.value)
    return D.AssignDoc(buf[[store_index_doc(i, d) for i in node.indices]], value)


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
            and buf.scope == node.scope and is_const(node.condition, 1) and not node.annotations
            and len(node.extents) == len(buf.shape)
            and all(structural_equal(E.convert(a), E.convert(b))
                    for a, b in zip(node.extents, buf.shape)))


@register(S.Allocate)
def _allocate(node: S.Allocate, d: IRDocsifier) -> D.Doc:
    concise = allow_concise_scoping(d)
    if d.cfg.syntax_sugar and _is_allocate_decl_buffer(node):
        return _decl_buffer_doc(node.body, d, DATA)
    args = [d.expr(list(node.extents)), dtype_doc(node.dtype),
            D.LiteralDoc(node.scope)]
    if not is_const(node.condition, 1):
        args.append(d.expr(node.condition))
    kwargs = []
    annotations = dict(node.annotations or {})
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


