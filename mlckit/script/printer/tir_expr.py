"""TIR expressions -> docs: constants, variables, ranges, operators with TVM's spelling
(``a // b`` for FloorDiv, ``T.Div`` for integer Div, ``T.truncmod`` for Mod), intrinsic
calls and buffer loads (as TVM's ``src/script/printer/tir/expr.cc``)."""

from __future__ import annotations

from collections.abc import Callable

from mlckit.error import TVMTypeError
from mlckit.ir.module import GlobalVar
from mlckit.ir.op import Op
from mlckit.tir import dtype as dt
from mlckit.tir import expr as E
from mlckit.tir.expr_vector import Broadcast, Ramp

from . import doc as D
from .core import IRDocsifier, register
from .tir_utils import add, define_var, dtype_doc, find_lowest_var_def, tir_frame, var_creation


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




# -- vectors --------------------------------------------------------------------------------
@register(Ramp)
def _ramp(node: Ramp, d: IRDocsifier) -> D.Doc:
    return d.TIR("Ramp").call(d.expr(node.base), d.expr(node.stride), _lanes_doc(node.lanes, d))


@register(Broadcast)
def _broadcast(node: Broadcast, d: IRDocsifier) -> D.Doc:
    return d.TIR("Broadcast").call(d.expr(node.value), _lanes_doc(node.lanes, d))


def _lanes_doc(lanes, d: IRDocsifier) -> D.Doc:
    """``4``, or ``T.vscale() * 4`` for a scalable vector."""
    return d.expr(lanes) if isinstance(lanes, E.PrimExpr) else D.LiteralDoc(lanes)


def store_index_doc(index, d: IRDocsifier) -> D.Doc:
    """An index of a store: a ramp of constant stride prints as a slice (``A[0:4] = …``,
    ``A[0:8:2] = …``), as TVM prints it; loads keep ``A[T.Ramp(0, 1, 4)]`` (a slice there
    would be a region)."""
    if isinstance(index, Ramp) and isinstance(index.stride, E.IntImm):
        lanes = index.lanes if isinstance(index.lanes, E.PrimExpr) else E.IntImm(
            index.stride.dtype, index.lanes)
        stop = E.add(index.base, E.mul(lanes, index.stride))
        step = None if index.stride.value == 1 else d.expr(index.stride)
        return D.SliceDoc(d.expr(index.base), d.expr(stop), step)
    return d.expr(index)
