"""Relax -> docs: struct info, expressions, bindings, dataflow blocks and functions.

Follows TVM v0.23's printer (src/script/printer/relax/*.cc): symbolic shape variables are
declared ``n = T.int64()`` at the top of the function that introduces them (quoted,
``R.Tensor(("n", 784))``, in the signature that defines them), bindings carry their struct
info as an annotation except for ``call_tir`` / ``call_dps_packed`` whose ``out_sinfo`` says
it already, and functions of a module refer to each other through ``cls = Module``.

Constants: scalars print as ``R.const(1.5, "float32")`` like TVM.  Arrays print inline as
``R.const([[1.0, 2.0]], "float32")`` (TVM puts them in a metadata section instead) unless
they have more than ``max_inline_const`` elements, which print as ``metadata[...]``.
"""

from __future__ import annotations

from dataclasses import fields, is_dataclass

import numpy as np

from mlckit.error import TVMValueError
from mlckit.ir.module import GlobalVar, IRModule
from mlckit.ir.node import Node
from mlckit.ir.op import Op
from mlckit.ir.structural import structural_equal
from mlckit.relax import expr as X
from mlckit.relax import struct_info as SI
from mlckit.tir import expr as E
from mlckit.tir.function import PrimFunc

from . import doc as D
from .core import Frame, IRDocsifier, iter_children, register, register_root
from .doc_printer import to_python
from .tir_utils import var_creation


@register_root("relax")
def _root(d: IRDocsifier, obj) -> None:
    pass


def relax_frame(d: IRDocsifier) -> Frame | None:
    """The outermost Relax function frame, else the outermost Relax frame (TVM's
    GetRelaxFrame): where shape variables and ``cls = Module`` are declared."""
    found = None
    for frame in d.frames:
        if frame.kind != "relax":
            continue
        if frame.is_func:
            return frame
        if found is None:
            found = frame
    return found


def define_var(d: IRDocsifier, var: X.Var, frame: Frame) -> D.IdDoc:
    return d.define(var, frame, var.name_hint or "v")


def struct_info_of(expr) -> SI.StructInfo | None:
    """The struct info of ``expr`` when it is known or can be inferred, else None."""
    sinfo = expr.__dict__.get("struct_info_")
    if sinfo is not None:
        return sinfo
    try:
        return expr.struct_info
    except Exception:  # noqa: BLE001 - inference may not apply to this expression
        return None


def is_void(sinfo) -> bool:
    return isinstance(sinfo, SI.TupleStructInfo) and not sinfo.fields


_DPS_OPS = ("relax.call_tir", "relax.call_dps_packed")


def struct_info_annotation(d: IRDocsifier, var: X.Var, rhs=None) -> D.ExprDoc | None:
    """The annotation of a binding's variable; None when the right-hand side already
    states it (``call_tir`` / ``call_dps_packed`` with a matching ``out_sinfo``)."""
    sinfo = var.struct_info_
    if sinfo is None:
        return None
    if (isinstance(rhs, X.Call) and isinstance(rhs.op, Op) and rhs.op.name in _DPS_OPS
            and len(rhs.sinfo_args) == 1 and structural_equal(rhs.sinfo_args[0], sinfo)):
        return None
    return d.expr(sinfo)


# -- TIR variables inside Relax ---------------------------------------------------------------
@register(E.Var, token="relax")
def _tir_var(var: E.Var, d: IRDocsifier) -> D.Doc:
    if not d.is_defined(var):
        frame = relax_frame(d)
        if frame is None:
            raise TVMValueError(f"no Relax scope in which to declare the TIR variable {var.name_hint!r}")
        if frame.func_vars is not None:
            frame.func_vars.add(id(var))
        lhs = d.define(var, frame, var.name_hint or "v")
        frame.stmts.append(D.AssignDoc(lhs, var_creation(d, var)))
    return d.get_var_doc(var)


@register(E.IntImm, token="relax")
def _int_imm(imm: E.IntImm, d: IRDocsifier) -> D.Doc:
    return D.LiteralDoc(bool(imm.value) if imm.dtype == "bool" else int(imm.value))


def shape_dim(d: IRDocsifier, value) -> D.ExprDoc:
    """A shape dimension; quoted (``"n"``) while it defines a variable of the signature."""
    doc = d.expr(value)
    frame = next((f for f in d.frames if f.kind == "relax" and f.func_vars is not None), None)
    if frame is not None and _uses_any(value, frame.func_vars):
        return D.LiteralDoc(to_python(doc, d.cfg.indent_spaces))
    return doc


def _uses_any(expr, ids: set[int]) -> bool:
    if isinstance(expr, E.Var):
        return id(expr) in ids
    return any(_uses_any(c, ids) for c in iter_children(expr))


# -- struct info ----------------------------------------------------------------------------
@register(SI.ObjectStructInfo)
def _object_sinfo(node, d: IRDocsifier) -> D.Doc:
    return d.R("Object")


@register(SI.PrimStructInfo)
def _prim_sinfo(node: SI.PrimStructInfo, d: IRDocsifier) -> D.Doc:
    if node.value is not None:
        return d.R("Prim").call_kw([], [("value", shape_dim(d, node.value))])
    return d.R("Prim").call(D.LiteralDoc(node.dtype))


@register(SI.ShapeStructInfo)
def _shape_sinfo(node: SI.ShapeStructInfo, d: IRDocsifier) -> D.Doc:
    if node.values is not None:
        return d.R("Shape").call(D.ListDoc([shape_dim(d, v) for v in node.values]))
    return d.R("Shape").call_kw([], [("ndim", D.LiteralDoc(node.ndim))])


@register(SI.TensorStructInfo)
def _tensor_sinfo(node: SI.TensorStructInfo, d: IRDocsifier) -> D.Doc:
    args, kwargs = [], []
    if isinstance(node.shape, X.ShapeExpr):
        args.append(D.TupleDoc([shape_dim(d, v) for v in node.shape.values]))
    elif node.shape is not None:
        args.append(d.expr(node.shape))
    if node.dtype:
        kwargs.append(("dtype", D.LiteralDoc(node.dtype)))
    if node.shape is None and node.ndim != -1:
        kwargs.append(("ndim", D.LiteralDoc(node.ndim)))
    if not args and not kwargs:
        return d.R("Tensor")
    return d.R("Tensor").call_kw(args, kwargs)


@register(SI.TupleStructInfo)
def _tuple_sinfo(node: SI.TupleStructInfo, d: IRDocsifier) -> D.Doc:
    if not node.fields:
        return d.R("Tuple")
    return d.R("Tuple").call(*[d.expr(f) for f in node.fields])


@register(SI.FuncStructInfo)
def _func_sinfo(node: SI.FuncStructInfo, d: IRDocsifier) -> D.Doc:
    ret = d.expr(node.ret)
    if node.params is None:
        kwargs = []
        if not isinstance(node.ret, SI.ObjectStructInfo):
            kwargs.append(("ret", ret))
        if node.purity:
            kwargs.append(("purity", D.LiteralDoc(True)))
        return d.R("Callable").call_kw([], kwargs) if kwargs else d.R("Callable")
    params = D.TupleDoc([d.expr(p) for p in node.params])
    return d.R("Callable").call(params, ret, D.LiteralDoc(bool(node.purity)))


# -- expressions ------------------------------------------------------------------------------
@register(X.Var)
def _relax_var(var: X.Var, d: IRDocsifier) -> D.Doc:
    if not d.is_defined(var):
        ann = d.expr(var.struct_info_) if var.struct_info_ is not None else None
        frame = d.frames[-1]
        lhs = define_var(d, var, frame)
        frame.stmts.append(D.AssignDoc(lhs, None, ann))
    return d.get_var_doc(var)


@register(X.PrimValue)
def _prim_value(node: X.PrimValue, d: IRDocsifier) -> D.Doc:
    return d.R("prim_value").call(d.expr(node.value))


@register(X.StringImm)
def _string_imm(node: X.StringImm, d: IRDocsifier) -> D.Doc:
    return d.R("str").call(D.LiteralDoc(node.value))


@register(X.DataTypeImm)
def _dtype_imm(node: X.DataTypeImm, d: IRDocsifier) -> D.Doc:
    return d.R("dtype").call(D.LiteralDoc(node.value))


@register(X.Tuple)
def _tuple(node: X.Tuple, d: IRDocsifier) -> D.Doc:
    if not node.fields:
        return d.R("tuple").call()
    return D.TupleDoc([d.expr(f) for f in node.fields])


@register(X.TupleGetItem)
def _tuple_get_item(node: X.TupleGetItem, d: IRDocsifier) -> D.Doc:
    return d.expr(node.tuple_value)[D.LiteralDoc(int(node.index))]


@register(X.ShapeExpr)
def _shape_expr(node: X.ShapeExpr, d: IRDocsifier) -> D.Doc:
    return d.R("shape").call(D.ListDoc([shape_dim(d, v) for v in node.values]))


def _scalar_literal(value, dtype: np.dtype) -> D.LiteralDoc:
    if dtype.kind == "b":
        return D.LiteralDoc(bool(value))
    if dtype.kind in "iu":
        return D.LiteralDoc(int(value))
    return D.LiteralDoc(float(value))


def _nested_literal(array: np.ndarray) -> D.ExprDoc:
    if array.ndim == 0:
        return _scalar_literal(array.item(), array.dtype)
    return D.ListDoc([_nested_literal(sub) for sub in array])


@register(X.Constant)
def _constant(node: X.Constant, d: IRDocsifier) -> D.Doc:
    data = node.data
    if data.dtype.kind not in "biuf":
        return d.add_metadata(node)
    dtype = D.LiteralDoc("bool" if data.dtype.kind == "b" else data.dtype.name)
    if data.ndim == 0:
        return d.R("const").call(_scalar_literal(data.item(), data.dtype), dtype)
    if data.size > d.cfg.max_inline_const:
        return d.add_metadata(node)
    return d.R("const").call(_nested_literal(data), dtype)


@register(X.ExternFunc)
def _extern_func(node: X.ExternFunc, d: IRDocsifier) -> D.Doc:
    return d.R("ExternFunc").call(D.LiteralDoc(node.global_symbol))


@register(GlobalVar, token="relax")
def _global_var(gv: GlobalVar, d: IRDocsifier) -> D.Doc:
    return d.get_var_doc(gv) or D.IdDoc(gv.name_hint)


@register(IRModule, token="relax")
def _module_ref(mod: IRModule, d: IRDocsifier) -> D.Doc:
    doc = d.get_var_doc(mod)
    if doc is None:
        raise TVMValueError("cannot refer to an IRModule before it is defined")
    if not d.cfg.module_alias:
        return doc
    frame = relax_frame(d)
    if frame is not None and frame.is_func and not frame.module_alias_printed:
        frame.stmts.append(D.AssignDoc(D.IdDoc(d.cfg.module_alias), doc))
        frame.module_alias_printed = True
    return D.IdDoc(d.cfg.module_alias)


# -- calls ---------------------------------------------------------------------------------
def _callee(d: IRDocsifier, expr) -> D.ExprDoc:
    """A callee argument: an ExternFunc prints as its name string."""
    if isinstance(expr, X.ExternFunc):
        return D.LiteralDoc(expr.global_symbol)
    return d.expr(expr)


def _attr_items(attrs) -> list[tuple[str, object]]:
    """The (name, value) pairs of a call's attributes (a dict: sorted by name)."""
    if attrs is None:
        return []
    if isinstance(attrs, dict):
        return sorted(attrs.items())
    if isinstance(attrs, Node) or is_dataclass(attrs):
        return [(f.name, getattr(attrs, f.name)) for f in fields(attrs) if f.name != "span"]
    return list(vars(attrs).items())


def _call_dps(node: X.Call, d: IRDocsifier, name: str) -> D.Doc:
    args = [_callee(d, node.args[0]), d.expr(node.args[1])]
    out = node.sinfo_args[0]
    if isinstance(out, SI.TupleStructInfo):
        out_doc = D.ListDoc([d.expr(f) for f in out.fields])
    else:
        out_doc = d.expr(out)
    kwargs = [("out_ty" if d.tir_spelling == "tirx" else "out_sinfo", out_doc)]  # TVM >= 0.24
    if name == "call_tir_inplace":
        indices = dict(_attr_items(node.attrs)).get("inplace_indices", [])
        kwargs.append(("inplace_indices", D.ListDoc([D.LiteralDoc(int(i)) for i in indices])))
    if name != "call_dps_packed" and len(node.args) == 3:
        kwargs.append(("tir_vars", d.expr(node.args[2])))
    return d.R(name).call_kw(args, kwargs)


def _call_print(node: X.Call, d: IRDocsifier) -> D.Doc:
    fmt = d.expr(node.args[0])
    return d.R("print").call_kw([d.expr(a) for a in node.args[1:]], [("format", fmt)])


def _call_assert(node: X.Call, d: IRDocsifier) -> D.Doc:
    args = [d.expr(node.args[0])]
    fmt = d.expr(node.args[1])
    args += [d.expr(a) for a in node.args[2:]]
    return d.R("assert_op").call_kw(args, [("format", fmt)])


_SPECIAL_CALLS = {
    "relax.call_tir": lambda n, d: _call_dps(n, d, "call_tir"),
    "relax.call_tir_inplace": lambda n, d: _call_dps(n, d, "call_tir_inplace"),
    "relax.call_dps_packed": lambda n, d: _call_dps(n, d, "call_dps_packed"),
    "relax.print": _call_print,
    "relax.assert_op": _call_assert,
}


def _attr_doc(d: IRDocsifier, key: str, value) -> D.Doc:
    """An operator attribute; TVM >= 0.24 writes the unset ``out_dtype`` ("void") as None."""
    if key == "out_dtype" and value == "void" and d.tir_spelling == "tirx":
        return D.LiteralDoc(None)
    return d.expr(value)


@register(X.Call)
def _call(node: X.Call, d: IRDocsifier) -> D.Doc:
    """``R.op(args, attrs..., sinfo_args=(...))``; call_tir & co. use TVM's own layout."""
    op = node.op
    if isinstance(op, Op) and op.name in _SPECIAL_CALLS:
        return _SPECIAL_CALLS[op.name](node, d)
    args: list = []
    kwargs: list = []
    if isinstance(op, X.ExternFunc):
        prefix = d.R("call_packed")
        args.append(D.LiteralDoc(op.global_symbol))
    elif isinstance(op, Op):
        prefix = d.R(op.name[6:]) if op.name.startswith("relax.") else D.IdDoc(op.name)
    else:
        prefix = d.expr(op)
    if node.args:
        args.append(_callee(d, node.args[0]))
        args += [d.expr(a) for a in node.args[1:]]
    kwargs += [(k, _attr_doc(d, k, v)) for k, v in _attr_items(node.attrs)]
    if node.sinfo_args:
        kwargs.append(("sinfo_args", D.TupleDoc([d.expr(s) for s in node.sinfo_args])))
    return prefix.call_kw(args, kwargs)


# -- bindings, blocks, sequences ----------------------------------------------------------------
def print_seq_expr(d: IRDocsifier, seq, use_ret: bool) -> list:
    """The statements of a SeqExpr body, ending with ``return x`` or ``x``."""
    with d.frame(Frame("relax", seq)) as f:
        if isinstance(seq, X.SeqExpr):
            for block in seq.blocks:
                doc = d.as_doc(block)
                f.stmts.extend(doc.stmts if isinstance(doc, D.StmtBlockDoc) else [doc])
            result = d.expr(seq.body)
        else:
            result = d.expr(seq)
        f.stmts.append(D.ReturnDoc(result) if use_ret else D.ExprStmtDoc(result))
        return f.stmts


@register(X.SeqExpr)
def _seq_expr(node: X.SeqExpr, d: IRDocsifier) -> D.Doc:
    return D.StmtBlockDoc(print_seq_expr(d, node, use_ret=False))


def print_if(d: IRDocsifier, node: X.If, var=None, ann=None) -> D.IfDoc:
    cond = d.expr(node.cond)
    branches = [print_seq_expr(d, node.true_branch, False),
                print_seq_expr(d, node.false_branch, False)]
    if var is not None:
        for stmts in branches:
            stmts[-1] = D.AssignDoc(var, stmts[-1].expr, ann)
    return D.IfDoc(cond, branches[0], branches[1])


@register(X.If)
def _if(node: X.If, d: IRDocsifier) -> D.Doc:
    return print_if(d, node)


@register(X.VarBinding)
def _var_binding(node: X.VarBinding, d: IRDocsifier) -> D.Doc:
    value = node.value
    if isinstance(value, X.If):
        ann = struct_info_annotation(d, node.var, value)
        lhs = define_var(d, node.var, d.frames[-1])
        return print_if(d, value, lhs, ann)
    if isinstance(value, (X.Function, PrimFunc)):
        lhs = define_var(d, node.var, d.frames[-1])
        d.cfg.binding_names.append(lhs.name)
        try:
            return d.as_doc(value)
        finally:
            d.cfg.binding_names.pop()
    if d.cfg.syntax_sugar and is_void(node.var.struct_info_):
        value_sinfo = struct_info_of(value)
        if value_sinfo is None or is_void(value_sinfo):
            return D.ExprStmtDoc(d.expr(value))
    rhs = d.expr(value)
    ann = struct_info_annotation(d, node.var, value)
    lhs = define_var(d, node.var, d.frames[-1])
    return D.AssignDoc(lhs, rhs, ann)


@register(X.MatchCast)
def _match_cast(node: X.MatchCast, d: IRDocsifier) -> D.Doc:
    ann = struct_info_annotation(d, node.var, node.value)
    rhs = d.R("match_cast").call(d.expr(node.value), d.expr(node.struct_info))
    lhs = define_var(d, node.var, d.frames[-1])
    return D.AssignDoc(lhs, rhs, ann)


def _binding_stmts(d: IRDocsifier, block, outputs: list | None) -> list:
    stmts = []
    for binding in block.bindings:
        doc = d.as_doc(binding)
        stmts.extend(doc.stmts if isinstance(doc, D.StmtBlockDoc) else [doc])
        if outputs is not None and not isinstance(binding.var, X.DataflowVar):
            outputs.append(d.expr(binding.var))
    return stmts


@register(X.DataflowBlock)
def _dataflow_block(node: X.DataflowBlock, d: IRDocsifier) -> D.Doc:
    outputs: list = []
    stmts = _binding_stmts(d, node, outputs)
    stmts.append(D.ExprStmtDoc(d.R("output").call(*outputs)))
    return D.ScopeDoc(None, d.R("dataflow").call(), stmts)


@register(X.BindingBlock)
def _binding_block(node: X.BindingBlock, d: IRDocsifier) -> D.Doc:
    return D.StmtBlockDoc(_binding_stmts(d, node, None))


# -- functions -------------------------------------------------------------------------------
def _at_top_level_function(d: IRDocsifier) -> bool:
    """True for a function printed alone or directly inside a module (not nested)."""
    if len(d.frames) < 2:
        return False
    if d.frames[0].kind == "relax":
        return len(d.frames) == 2
    return len(d.frames) == 3


@register(X.Function)
def print_function(func: X.Function, d: IRDocsifier) -> D.Doc:
    """``@R.function def name(params) -> ret: body`` (``out_ty=`` or ``out_sinfo=`` as
    written, see ``PrinterConfig.tir_spelling``)."""
    outer = d.tir_spelling
    d.tir_spelling = d.cfg.tir_spelling or func.spelling or outer
    if func.spelling is not None:
        d.tir_spellings_used.add(d.tir_spelling)
    try:
        return _print_function(func, d)
    finally:
        d.tir_spelling = outer


def _print_function(func: X.Function, d: IRDocsifier) -> D.Doc:
    frame = Frame("relax", func)
    frame.is_func = True
    frame.func_vars = set()
    with d.frame(frame, token="relax") as f:
        name = d.binding_name() or d.function_name(func) or "main"
        top_level = _at_top_level_function(d)
        ret = d.expr(func.ret_struct_info) if func.ret_struct_info is not None else None
        params = []
        for p in func.params:
            lhs = define_var(d, p, f)
            params.append(D.AssignDoc(lhs, None, struct_info_annotation(d, p)))
        f.func_vars = None
        attrs = dict(func.attrs)
        if top_level and attrs.get("global_symbol") == name:
            del attrs["global_symbol"]
        if attrs:
            f.stmts.append(D.ExprStmtDoc(d.R("func_attr").call(d.expr(attrs))))
        kwargs = []
        if not func.is_pure:
            kwargs.append(("pure", D.LiteralDoc(False)))
        if top_level and "global_symbol" not in func.attrs:
            kwargs.append(("private", D.LiteralDoc(True)))
        decorator = d.R("function")
        if kwargs:
            decorator = decorator.call_kw([], kwargs)
        f.stmts.extend(print_seq_expr(d, func.body, use_ret=True))
        return d.header_wrapper(D.FunctionDoc(D.IdDoc(name), params, [decorator], ret, f.stmts))
