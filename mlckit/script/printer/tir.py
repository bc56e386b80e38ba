"""TIR -> docs: PrimFuncs here; expressions in ``tir_expr``, buffers in ``tir_buffer``,
statements, loops and blocks in ``tir_stmt``, shared helpers in ``tir_utils``.

Follows TVM v0.23's printer (src/script/printer/tir/*.cc): the same sugar (``T.grid``,
``T.axis.remap``, ``T.Buffer`` parameters, the implicit root block, concise ``x: T.int32 =
v`` lets), the same rules for where a free variable is declared, and the same operator
spelling (``a // b`` for FloorDiv, ``T.Div`` for integer Div, ``T.truncmod`` for Mod).
"""

from __future__ import annotations

from mlckit.tir import expr as E
from mlckit.tir import stmt as S
from mlckit.tir.function import PrimFunc

from . import doc as D
from . import tir_expr, tir_stmt  # noqa: F401 - registers their printers
from .core import Frame, IRDocsifier, iter_children, register, register_root, tag_source
from .tir_buffer import DATA, MATCH, buffer_annotation, buffer_decl, is_simple_buffer
from .tir_utils import as_doc_body, count_uses, define_buffer, define_var, is_const, is_tir_var


@register_root("tir")
def _root(d: IRDocsifier, obj) -> None:
    d.set_common_prefix(obj, is_tir_var)


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
