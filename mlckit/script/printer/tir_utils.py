"""Helpers of the TIR printer: where a variable or buffer is defined, dtype and
variable-creation docs, concise scoping (as TVM's ``src/script/printer/tir/utils.h``)."""

from __future__ import annotations

from mlckit.tir import expr as E
from mlckit.tir import stmt as S
from mlckit.tir import stmt_functor
from mlckit.tir.buffer import Buffer

from . import doc as D
from .core import Frame, IRDocsifier, iter_children

# -- small helpers -------------------------------------------------------------------------


def is_tir_var(obj) -> bool:
    """Objects whose definition site the printer tracks in TIR: Vars and Buffers."""
    return isinstance(obj, (E.Var, Buffer))


def is_const(expr, value) -> bool:
    """True when ``expr`` is the integer constant ``value`` (TVM's is_zero / is_one)."""
    return isinstance(expr, E.IntImm) and expr.value == value


def uses_var(expr, var_ids: set[int]) -> bool:
    """True when a Var whose id is in ``var_ids`` occurs in ``expr``."""
    return stmt_functor.uses_var(expr, lambda v: id(v) in var_ids)


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

