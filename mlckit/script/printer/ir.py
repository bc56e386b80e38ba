"""IRModule, GlobalVar and Op -> docs.

A module prints as ``@I.ir_module class Module:`` with its functions in TVM's order: PrimFuncs,
then extern functions, then Relax functions, each group by name, and ``main`` last.
"""

from __future__ import annotations

from mlckit.error import TVMTypeError, TVMValueError
from mlckit.ir.module import GlobalVar, IRModule
from mlckit.ir.op import Op
from mlckit.relax.expr import ExternFunc
from mlckit.relax.expr import Function as RelaxFunction
from mlckit.tir.function import PrimFunc

from . import doc as D
from .core import Frame, IRDocsifier, register


def _order(item) -> tuple:
    gv, func = item
    if gv.name_hint == "main":
        priority = 1000
    elif isinstance(func, PrimFunc):
        priority = 1
    elif isinstance(func, ExternFunc):
        priority = 2
    elif isinstance(func, RelaxFunction):
        priority = 3
    else:
        raise TVMTypeError(f"TVMScript cannot print functions of type {type(func).__name__}")
    return (priority, gv.name_hint)


@register(IRModule)
def print_module(mod: IRModule, d: IRDocsifier) -> D.Doc:
    """``@I.ir_module class Module:`` and its functions, separated by blank lines."""
    functions = sorted(mod.functions.items(), key=_order)
    if d.cfg.tir_spelling is None:  # what was not written in TVMScript prints as the rest
        spellings = {getattr(func, "spelling", None) for _, func in functions}
        d.tir_spelling = "tirx" if "tirx" in spellings and "tir" not in spellings else "tir"
    with d.frame(Frame("ir", mod), token="ir") as f:
        module_doc = d.define(mod, f, d.binding_name() or "Module")
        if mod.attrs:
            f.stmts.append(D.ExprStmtDoc(d.IR("module_attrs").call(d.expr(mod.attrs))))
        if mod.global_infos:
            f.stmts.append(D.ExprStmtDoc(d.IR("module_global_infos").call(d.expr(mod.global_infos))))
        for gv, _ in functions:
            d.define_creator(gv, f, lambda gv=gv: d.expr(mod).attr(gv.name_hint))
        for gv, func in functions:
            d.cfg.binding_names.append(gv.name_hint)
            try:
                doc = d.as_doc(func)
            finally:
                d.cfg.binding_names.pop()
            if isinstance(doc, D.StmtBlockDoc):
                f.stmts.append(doc.stmts[-1])  # drop the function's own import header
            elif isinstance(doc, D.StmtDoc):
                f.stmts.append(doc)
            else:
                f.stmts.append(D.AssignDoc(D.IdDoc(gv.name_hint), doc))
        return d.header_wrapper(D.ClassDoc(module_doc, [d.IR("ir_module")], f.stmts))


@register(IRModule, token="tir")
def _module_ref_tir(mod: IRModule, d: IRDocsifier) -> D.Doc:
    doc = d.get_var_doc(mod)
    if doc is None:
        raise TVMValueError("cannot refer to an IRModule before it is defined")
    return doc


@register(GlobalVar)
def _global_var(gv: GlobalVar, d: IRDocsifier) -> D.Doc:
    return d.IR("GlobalVar").call(D.LiteralDoc(gv.name_hint))


@register(GlobalVar, token="tir")
def _global_var_tir(gv: GlobalVar, d: IRDocsifier) -> D.Doc:
    return d.get_var_doc(gv) or D.IdDoc(gv.name_hint)


@register(Op)
def _op(op: Op, d: IRDocsifier) -> D.Doc:
    return d.IR("Op").call(D.LiteralDoc(op.name))
