"""Struct-info deduction for every Relax expression, and the helpers it needs.

Rules (as TVM's normalizer):

- ``Constant`` → ``R.Tensor(shape, dtype)`` with int64 dims;
- ``Tuple`` → tuple of its fields' infos; ``TupleGetItem`` → the field (index checked);
- ``ShapeExpr`` → ``R.Shape([...])``; ``PrimValue`` → ``R.Prim(dtype, value)``;
- ``StringImm`` / ``DataTypeImm`` / ``ExternFunc`` (as a value) → ``R.Object``;
- ``Call`` of an Op → the op's ``FInferStructInfo``; of a GlobalVar/Var → the callee's
  ``FuncStructInfo.ret`` with symbolic dims of the params matched against the arguments;
  of an ExternFunc → ``sinfo_args[0]`` or ``R.Object``;
- ``If`` → the least common ancestor of both branches; ``SeqExpr`` → its body's;
  ``Function`` → ``R.Callable(params, ret, purity)``.

Example::

    infer_struct_info(Tuple([x, ShapeExpr([n])]))   # R.Tuple(R.Tensor(...), R.Shape([n]))
"""

from __future__ import annotations

from typing import Any

from mlckit.ir.module import GlobalVar
from mlckit.ir.node import Node
from mlckit.ir.op import Op
from mlckit.tir import dtype as dt
from mlckit.tir import expr as tx

from ..expr import (
    Call,
    Constant,
    DataTypeImm,
    Expr,
    ExternFunc,
    Function,
    If,
    PrimValue,
    SeqExpr,
    ShapeExpr,
    StringImm,
    Tuple,
    TupleGetItem,
    Var,
)
from ..op.base import StructInfoError
from ..struct_info import (
    FuncStructInfo,
    ObjectStructInfo,
    PrimStructInfo,
    ShapeStructInfo,
    StructInfo,
    TensorStructInfo,
    TupleStructInfo,
)


# -- deduction ---------------------------------------------------------------------------------
def infer_struct_info(expr: Expr) -> StructInfo:
    """The struct info of ``expr`` (raises ``StructInfoError`` saying why it cannot be deduced).

    >>> from mlckit import relax
    >>> from mlckit.relax import analysis
    >>> from mlckit.script import relax as R
    >>> x = relax.Var("x", relax.TensorStructInfo([2, 4], "float32"))
    >>> analysis.infer_struct_info(R.add(x, x))
    R.Tensor((2, 4), dtype="float32")
    """
    rule = _RULES.get(type(expr))
    if rule is None:
        for cls, fn in _RULES.items():
            if isinstance(expr, cls):
                rule = fn
                break
    if rule is None:
        raise StructInfoError(f"cannot deduce the struct info of a {type(expr).__name__}")
    return rule(expr)


def _var(expr: Var) -> StructInfo:
    if expr.struct_info_ is None:
        raise StructInfoError(f"variable {expr.name_hint!r} has no struct info")
    return expr.struct_info_


def _constant(expr: Constant) -> StructInfo:
    data = expr.data
    dtype = "bool" if data.dtype == bool else data.dtype.name
    return TensorStructInfo(ShapeExpr([int(d) for d in data.shape]), dtype)


def _tuple(expr: Tuple) -> StructInfo:
    return TupleStructInfo([f.struct_info for f in expr.fields])


def _tuple_get_item(expr: TupleGetItem) -> StructInfo:
    sinfo = expr.tuple_value.struct_info
    if not isinstance(sinfo, TupleStructInfo):
        raise StructInfoError(f"indexing [{expr.index}] needs a tuple, but the value is "
                              f"{describe_struct_info(sinfo)}")
    n = len(sinfo.fields)
    if not 0 <= expr.index < n:
        raise StructInfoError(f"tuple index {expr.index} is out of range: the tuple has {n} "
                              f"field{'s' if n != 1 else ''}")
    return sinfo.fields[expr.index]


def _shape_expr(expr: ShapeExpr) -> StructInfo:
    for v in expr.values:
        if not dt.is_int(v.dtype):
            raise StructInfoError(f"shape dimensions must be integers, got a {v.dtype} value")
    return ShapeStructInfo(list(expr.values))


def _prim_value(expr: PrimValue) -> StructInfo:
    return PrimStructInfo(expr.value.dtype, expr.value)


def _object(expr: Expr) -> StructInfo:
    return ObjectStructInfo()


def _extern_func(expr: ExternFunc) -> StructInfo:
    return FuncStructInfo.opaque_func(ObjectStructInfo(), purity=False)


def _call(call: Call) -> StructInfo:
    op = call.op
    if isinstance(op, Op):
        infer = op.get_attr("FInferStructInfo")
        if infer is None:
            raise StructInfoError(f"operator {op.name!r} has no struct-info rule (FInferStructInfo)")
        return infer(call)
    if isinstance(op, ExternFunc):
        return call.sinfo_args[0] if call.sinfo_args else ObjectStructInfo()
    if isinstance(op, GlobalVar):
        finfo = getattr(op, "struct_info_", None)
        if finfo is None:
            raise StructInfoError(f"the function {op.name_hint!r} has no known signature: is it "
                                  "defined in this module?")
    else:
        finfo = op.struct_info
    if not isinstance(finfo, FuncStructInfo):
        name = getattr(op, "name_hint", type(op).__name__)
        raise StructInfoError(f"{name!r} is not callable: it is {describe_struct_info(finfo)}")
    return derive_call_ret_struct_info(finfo, call)


def _if(expr: If) -> StructInfo:
    cond = expr.cond.struct_info
    if not _is_scalar_bool_like(cond):
        raise StructInfoError("the condition of `if` must be a bool scalar (R.Tensor((), \"bool\") "
                              f"or R.Prim(\"bool\")), got {describe_struct_info(cond)}")
    return struct_info_lca(expr.true_branch.struct_info, expr.false_branch.struct_info)


def _is_scalar_bool_like(sinfo) -> bool:
    if isinstance(sinfo, PrimStructInfo):
        return True
    if isinstance(sinfo, TensorStructInfo):
        return sinfo.ndim in (0, -1)
    return False


def _seq_expr(expr: SeqExpr) -> StructInfo:
    return expr.body.struct_info


def _function(expr: Function) -> StructInfo:
    ret = expr.ret_struct_info if expr.ret_struct_info is not None else expr.body.struct_info
    return FuncStructInfo([p.struct_info for p in expr.params], ret, expr.is_pure)


_RULES: dict[type, Any] = {
    Var: _var, Constant: _constant, Tuple: _tuple, TupleGetItem: _tuple_get_item,
    ShapeExpr: _shape_expr, PrimValue: _prim_value, StringImm: _object, DataTypeImm: _object,
    ExternFunc: _extern_func, Call: _call, If: _if, SeqExpr: _seq_expr, Function: _function,
}


# -- calls of functions: match symbolic dims of the params against the arguments --------------
def derive_call_ret_struct_info(finfo: FuncStructInfo, call: Call) -> StructInfo:
    """The return struct info of calling ``finfo`` with ``call.args``.

    ``f(x: R.Tensor(("n", 784))) -> R.Tensor(("n", 128))`` called with a ``(m, 784)`` tensor
    returns ``R.Tensor((m, 128))``; dims that cannot be resolved make the shape unknown.

    >>> from mlckit import relax, tir
    >>> from mlckit.relax import analysis
    >>> n = tir.Var("n", "int64")
    >>> t_n = relax.TensorStructInfo([n, 4], "float32")
    >>> t_2 = relax.TensorStructInfo([2, 4], "float32")
    >>> f = relax.Var("f", relax.FuncStructInfo([t_n], t_n))
    >>> y = relax.Var("y", relax.TensorStructInfo([8, 4], "float32"))
    >>> analysis.derive_call_ret_struct_info(f.struct_info, relax.Call(f, [y]))
    R.Tensor((8, 4), dtype="float32")
    """
    if finfo.params is None:  # opaque: derived from sinfo_args, as packed functions
        return call.sinfo_args[0] if call.sinfo_args else finfo.ret
    if len(finfo.params) != len(call.args):
        raise StructInfoError(f"the function takes {len(finfo.params)} argument"
                              f"{'s' if len(finfo.params) != 1 else ''}, but the call passes "
                              f"{len(call.args)}")
    mapping: dict = {}
    for i, (param, arg) in enumerate(zip(finfo.params, call.args)):
        arg_sinfo = arg.struct_info
        if not _match(param, arg_sinfo, mapping, strict=True):
            raise StructInfoError(f"argument {i} of the call has struct info "
                                  f"{describe_struct_info(arg_sinfo)}, which does not match the "
                                  f"parameter's {describe_struct_info(param)}")
    params_vars = set()
    for p in finfo.params:
        params_vars |= {id(v) for v in collect_tir_vars(p)}
    ret = finfo.ret
    return _erase(substitute_tir_vars(ret, mapping), mapping, params_vars)


def _match(param: StructInfo, arg: StructInfo, mapping: dict, strict: bool) -> bool:
    """Bind the symbolic dims of ``param`` to ``arg``; False on a static (L0) mismatch."""
    if isinstance(param, ObjectStructInfo):
        return True
    if isinstance(param, TensorStructInfo):
        if not isinstance(arg, TensorStructInfo):
            return not strict or isinstance(arg, ObjectStructInfo)
        if param.dtype and arg.dtype and param.dtype != arg.dtype:
            return False
        if param.ndim != -1 and arg.ndim != -1 and param.ndim != arg.ndim:
            return False
        if param.dims is not None and arg.dims is not None:
            return _match_dims(param.dims, arg.dims, mapping)
        return True
    if isinstance(param, ShapeStructInfo):
        if not isinstance(arg, ShapeStructInfo):
            return isinstance(arg, ObjectStructInfo)
        if param.ndim != -1 and arg.ndim != -1 and param.ndim != arg.ndim:
            return False
        if param.values is not None and arg.values is not None:
            return _match_dims(param.values, arg.values, mapping)
        return True
    if isinstance(param, PrimStructInfo):
        if not isinstance(arg, PrimStructInfo):
            return isinstance(arg, ObjectStructInfo)
        if param.dtype != arg.dtype:
            return False
        if param.value is not None and arg.value is not None:
            return _match_dims([param.value], [arg.value], mapping)
        return True
    if isinstance(param, TupleStructInfo):
        if not isinstance(arg, TupleStructInfo):
            return isinstance(arg, ObjectStructInfo)
        if len(param.fields) != len(arg.fields):
            return False
        return all(_match(p, a, mapping, strict) for p, a in zip(param.fields, arg.fields))
    if isinstance(param, FuncStructInfo):
        return isinstance(arg, (FuncStructInfo, ObjectStructInfo))
    return True


def _match_dims(params: list, args: list, mapping: dict) -> bool:
    for p, a in zip(params, args):
        if isinstance(p, tx.Var):
            bound = mapping.get(p)
            if bound is None:
                mapping[p] = a
            elif not prim_equal(bound, a) and _both_const(bound, a):
                return False
        elif _both_const(p, a) and int(p.value) != int(a.value):
            return False
    return True


def _both_const(a, b) -> bool:
    return isinstance(a, tx.IntImm) and isinstance(b, tx.IntImm)


def _erase(sinfo: StructInfo, mapping: dict, param_vars: set) -> StructInfo:
    """Shapes that still mention unresolved param vars become unknown (keeping ndim)."""
    unresolved = {v for v in param_vars if not any(id(k) == v for k in mapping)}
    if not unresolved:
        return sinfo

    def bad(exprs) -> bool:
        return any(id(v) in unresolved for e in exprs for v in collect_tir_vars(e))

    def go(s):
        if isinstance(s, TensorStructInfo) and s.dims is not None and bad(s.dims):
            return TensorStructInfo(None, s.dtype, s.ndim)
        if isinstance(s, ShapeStructInfo) and s.values is not None and bad(s.values):
            return ShapeStructInfo(ndim=s.ndim)
        if isinstance(s, PrimStructInfo) and s.value is not None and bad([s.value]):
            return PrimStructInfo(s.dtype)
        if isinstance(s, TupleStructInfo):
            return TupleStructInfo([go(f) for f in s.fields])
        return s

    return go(sinfo)


# -- generic helpers over TIR expressions inside struct infos ---------------------------------
def collect_tir_vars(obj: Any) -> list:
    """The TIR Vars appearing in ``obj`` (a StructInfo, PrimExpr, list …), first use first.

    >>> from mlckit import relax, tir
    >>> from mlckit.relax import analysis
    >>> n = tir.Var("n", "int64")
    >>> t_n = relax.TensorStructInfo([n, 4], "float32")
    >>> t_2 = relax.TensorStructInfo([2, 4], "float32")
    >>> analysis.collect_tir_vars(t_n)
    [n]
    """
    out: list = []
    seen: set = set()

    def walk(x):
        if isinstance(x, tx.Var):
            if id(x) not in seen:
                seen.add(id(x))
                out.append(x)
            return
        if isinstance(x, Var):  # a relax Var (shape var): its struct info is not walked here
            return
        if isinstance(x, Node):
            for name in type(x).field_names():
                walk(getattr(x, name))
        elif isinstance(x, (list, tuple)):
            for y in x:
                walk(y)
        elif isinstance(x, dict):
            for y in x.values():
                walk(y)

    walk(obj)
    return out


def substitute_tir_vars(obj: Any, mapping: dict) -> Any:
    """``obj`` with TIR Vars replaced by ``mapping[var]`` (new nodes; ``obj`` is untouched).

    >>> from mlckit import relax, tir
    >>> from mlckit.relax import analysis
    >>> n = tir.Var("n", "int64")
    >>> t_n = relax.TensorStructInfo([n, 4], "float32")
    >>> t_2 = relax.TensorStructInfo([2, 4], "float32")
    >>> analysis.substitute_tir_vars(t_n, {n: tir.IntImm("int64", 8)})
    R.Tensor((8, 4), dtype="float32")
    """
    if not mapping:
        return obj

    def go(x):
        if isinstance(x, tx.Var):
            for k, v in mapping.items():
                if k is x:
                    return v
            return x
        if isinstance(x, Var):
            return x
        if isinstance(x, Node):
            changes = {}
            for name in type(x).field_names():
                old = getattr(x, name)
                new = go(old)
                if new is not old:
                    changes[name] = new
            return x.replace(**changes) if changes else x
        if isinstance(x, list):
            new = [go(y) for y in x]
            return new if any(a is not b for a, b in zip(new, x)) else x
        if isinstance(x, tuple):
            new = tuple(go(y) for y in x)
            return new if any(a is not b for a, b in zip(new, x)) else x
        return x

    return go(obj)


def prim_equal(a, b) -> bool:
    from mlckit.ir.structural import structural_equal

    return a is b or structural_equal(a, b)


# -- lattice: least common ancestor, base-of ---------------------------------------------------
def struct_info_lca(a: StructInfo, b: StructInfo) -> StructInfo:
    """The most precise struct info describing both ``a`` and ``b`` (branches of an ``if``).

    >>> from mlckit import relax, tir
    >>> from mlckit.relax import analysis
    >>> n = tir.Var("n", "int64")
    >>> t_n = relax.TensorStructInfo([n, 4], "float32")
    >>> t_2 = relax.TensorStructInfo([2, 4], "float32")
    >>> analysis.struct_info_lca(t_2, relax.TensorStructInfo([3, 4], "float32"))
    R.Tensor(dtype="float32", ndim=2)
    """
    from mlckit.ir.structural import structural_equal

    if structural_equal(a, b):
        return a
    if isinstance(a, TensorStructInfo) and isinstance(b, TensorStructInfo):
        dtype = a.dtype if a.dtype == b.dtype else ""
        ndim = a.ndim if a.ndim == b.ndim else -1
        same_shape = a.shape is not None and b.shape is not None and structural_equal(a.shape, b.shape)
        return TensorStructInfo(a.shape if same_shape else None, dtype, ndim)
    if isinstance(a, ShapeStructInfo) and isinstance(b, ShapeStructInfo):
        ndim = a.ndim if a.ndim == b.ndim else -1
        return ShapeStructInfo(ndim=ndim)
    if isinstance(a, PrimStructInfo) and isinstance(b, PrimStructInfo) and a.dtype == b.dtype:
        return PrimStructInfo(a.dtype)
    if isinstance(a, TupleStructInfo) and isinstance(b, TupleStructInfo) and len(a.fields) == len(b.fields):
        return TupleStructInfo([struct_info_lca(x, y) for x, y in zip(a.fields, b.fields)])
    return ObjectStructInfo()


def is_base_of(base: StructInfo, derived: StructInfo) -> bool:
    """True when every value described by ``derived`` is described by ``base`` (``base`` is
    at most as precise), as TVM's ``IsBaseOf``: ``R.Tensor(ndim=1)`` is a base of
    ``R.Tensor((n,), "float32")``; symbolic dims must be the same variables.

    >>> from mlckit import relax, tir
    >>> from mlckit.relax import analysis
    >>> n = tir.Var("n", "int64")
    >>> t_n = relax.TensorStructInfo([n, 4], "float32")
    >>> t_2 = relax.TensorStructInfo([2, 4], "float32")
    >>> t_any = relax.TensorStructInfo(ndim=2, dtype="float32")
    >>> analysis.is_base_of(t_any, t_2), analysis.is_base_of(t_2, t_any)
    (True, False)
    """
    if isinstance(base, ObjectStructInfo):
        return True
    if type(base) is not type(derived):
        return False
    if isinstance(base, TensorStructInfo):
        if base.dtype and base.dtype != derived.dtype:
            return False
        if base.ndim != -1 and base.ndim != derived.ndim:
            return False
        if base.shape is None:
            return True
        return derived.shape is not None and prim_equal(base.shape, derived.shape)
    if isinstance(base, ShapeStructInfo):
        if base.ndim != -1 and base.ndim != derived.ndim:
            return False
        return base.values is None or (derived.values is not None
                                       and prim_equal(base.values, derived.values))
    if isinstance(base, PrimStructInfo):
        if base.dtype != derived.dtype:
            return False
        return base.value is None or (derived.value is not None
                                      and prim_equal(base.value, derived.value))
    if isinstance(base, TupleStructInfo):
        return len(base.fields) == len(derived.fields) and all(
            is_base_of(b, d) for b, d in zip(base.fields, derived.fields))
    if isinstance(base, FuncStructInfo):
        if base.params is None:
            return base.purity is False or derived.purity is True
        return prim_equal(base, derived)
    return prim_equal(base, derived)


def statically_compatible(annotation: StructInfo, value: StructInfo) -> bool:
    """False only when ``value`` can never satisfy ``annotation`` (TVM's ``kFailL0``: kind,
    dtype, ndim or constant dims differ); what could hold at run time is accepted.

    >>> from mlckit import relax, tir
    >>> from mlckit.relax import analysis
    >>> n = tir.Var("n", "int64")
    >>> t_n = relax.TensorStructInfo([n, 4], "float32")
    >>> t_2 = relax.TensorStructInfo([2, 4], "float32")
    >>> t_3 = relax.TensorStructInfo([3, 4], "float32")
    >>> analysis.statically_compatible(t_2, t_3), analysis.statically_compatible(t_n, t_2)
    (False, True)
    """
    if isinstance(value, ObjectStructInfo):
        return True
    return _match(annotation, value, {}, strict=False)


def erase_to_well_defined(sinfo: StructInfo, defined: set) -> StructInfo:
    """``sinfo`` with shapes mentioning TIR vars not in ``defined`` (ids) made unknown.

    >>> from mlckit import relax, tir
    >>> from mlckit.relax import analysis
    >>> n = tir.Var("n", "int64")
    >>> t_n = relax.TensorStructInfo([n, 4], "float32")
    >>> t_2 = relax.TensorStructInfo([2, 4], "float32")
    >>> analysis.erase_to_well_defined(t_n, set())
    R.Tensor(dtype="float32", ndim=2)
    """

    def bad(exprs) -> bool:
        return any(id(v) not in defined for e in exprs for v in collect_tir_vars(e))

    def go(s):
        if isinstance(s, TensorStructInfo) and s.dims is not None and bad(s.dims):
            return TensorStructInfo(None, s.dtype, s.ndim)
        if isinstance(s, ShapeStructInfo) and s.values is not None and bad(s.values):
            return ShapeStructInfo(ndim=s.ndim)
        if isinstance(s, PrimStructInfo) and s.value is not None and bad([s.value]):
            return PrimStructInfo(s.dtype)
        if isinstance(s, TupleStructInfo):
            fields = [go(f) for f in s.fields]
            return s if all(a is b for a, b in zip(fields, s.fields)) else TupleStructInfo(fields)
        return s

    return go(sinfo)


def is_leaf(expr) -> bool:
    """Leaves may appear as call arguments without a binding (TVM's ANF).

    >>> from mlckit import relax
    >>> from mlckit.relax import analysis
    >>> from mlckit.script import relax as R
    >>> x = relax.Var("x", relax.TensorStructInfo([2, 4], "float32"))
    >>> analysis.is_leaf(x), analysis.is_leaf(R.add(x, x))
    (True, False)
    """
    from ..expr import DataTypeImm as _D

    return isinstance(expr, (Var, Constant, ShapeExpr, PrimValue, StringImm, _D, ExternFunc,
                             GlobalVar, Op))


# -- text for error messages ---------------------------------------------------------------------
_BIN = {"Add": "+", "Sub": "-", "Mul": "*", "Div": "/", "FloorDiv": "//", "FloorMod": "%",
        "Mod": "%", "EQ": "==", "NE": "!=", "LT": "<", "LE": "<=", "GT": ">", "GE": ">=",
        "And": "and", "Or": "or"}


def describe_prim(e) -> str:
    if isinstance(e, tx.Var):
        return e.name_hint
    if isinstance(e, (tx.IntImm, tx.FloatImm)):
        return str(e.value)
    name = type(e).__name__
    if name in _BIN:
        return f"{describe_prim(e.a)} {_BIN[name]} {describe_prim(e.b)}"
    if name in ("Min", "Max"):
        return f"T.{name.lower()}({describe_prim(e.a)}, {describe_prim(e.b)})"
    return name


def describe_struct_info(sinfo: Any) -> str:
    """Short TVMScript-like text of a struct info, for error messages.

    >>> from mlckit import relax, tir
    >>> from mlckit.relax import analysis
    >>> n = tir.Var("n", "int64")
    >>> t_n = relax.TensorStructInfo([n, 4], "float32")
    >>> t_2 = relax.TensorStructInfo([2, 4], "float32")
    >>> analysis.describe_struct_info(t_n)
    'R.Tensor((n, 4), "float32")'
    """
    if isinstance(sinfo, TensorStructInfo):
        parts = []
        if sinfo.dims is not None:
            dims = ", ".join(describe_prim(d) for d in sinfo.dims)
            parts.append(f"({dims}{',' if len(sinfo.dims) == 1 else ''})")
        elif isinstance(sinfo.shape, Var):
            parts.append(sinfo.shape.name_hint)
        if sinfo.dtype:
            parts.append(f'"{sinfo.dtype}"')
        if sinfo.dims is None and sinfo.ndim != -1:
            parts.append(f"ndim={sinfo.ndim}")
        return f"R.Tensor({', '.join(parts)})"
    if isinstance(sinfo, ShapeStructInfo):
        if sinfo.values is not None:
            return f"R.Shape([{', '.join(describe_prim(v) for v in sinfo.values)}])"
        return "R.Shape" if sinfo.ndim == -1 else f"R.Shape(ndim={sinfo.ndim})"
    if isinstance(sinfo, PrimStructInfo):
        if sinfo.value is not None:
            return f'R.Prim(value={describe_prim(sinfo.value)})'
        return f'R.Prim("{sinfo.dtype}")'
    if isinstance(sinfo, TupleStructInfo):
        return f"R.Tuple({', '.join(describe_struct_info(f) for f in sinfo.fields)})"
    if isinstance(sinfo, ObjectStructInfo):
        return "R.Object"
    if isinstance(sinfo, FuncStructInfo):
        return "R.Callable"
    return type(sinfo).__name__
