"""Small Relax helpers shared by ops, the IRBuilder and the parser."""

from __future__ import annotations

from typing import Any

from mlckit.error import TVMTypeError
from mlckit.tir.expr import FloatImm, IntImm, PrimExpr
from mlckit.tir.expr import StringImm as TirStringImm

from .expr import Expr, PrimValue, StringImm, Tuple


def convert_to_expr(value: Any) -> Expr:
    """A Relax expression from a Python value, as TVM's ``relax.utils.convert_to_expr``.

    Expr → itself; int → ``PrimValue`` int64; float → ``PrimValue`` float64; PrimExpr →
    ``PrimValue``; str → ``StringImm``; tuple/list → ``Tuple`` of converted fields::

        convert_to_expr((x, 2))   # Tuple([x, PrimValue(IntImm("int64", 2))])
    """
    if isinstance(value, Expr):
        return value
    if isinstance(value, bool) or isinstance(value, int):
        return PrimValue(IntImm("int64", int(value)))
    if isinstance(value, float):
        return PrimValue(FloatImm("float64", value))
    if isinstance(value, TirStringImm):
        raise TVMTypeError("cannot convert a tir.StringImm to a Relax expression: it could be a "
                        "relax StringImm (R.str) or a PrimValue")
    if isinstance(value, PrimExpr):
        return PrimValue(value)
    if isinstance(value, str):
        return StringImm(value)
    if isinstance(value, (tuple, list)):
        return Tuple([convert_to_expr(v) for v in value])
    if hasattr(value, "asobject"):  # tir EqualOp (a == b)
        return convert_to_expr(value.asobject())
    raise TVMTypeError(f"cannot convert {value!r} (a {type(value).__name__}) to a Relax expression")


def gen_call_tir_inputs(func, *args: Any, **kwargs: Any):
    """What ``BlockBuilder.call_te`` needs to call the te function ``func`` through
    ``R.call_tir``: ``(prim_func, call_args, out_sinfo, tir_vars)``, as TVM's
    ``relax.utils.gen_call_tir_inputs``.

    Relax tensors among ``args``/``kwargs`` (also inside lists, tuples and dicts) become
    ``te.placeholder``s named after the variables (``A``, ``B``… for other expressions) with
    the same shape and dtype; their symbolic dims are fresh TIR variables, so the PrimFunc
    does not share variables with the caller.  Scalar ``PrimValue`` arguments become scalar
    parameters, ``ShapeExpr`` and ``PrimExpr`` arguments their values.  The PrimFunc is
    ``te.create_prim_func(inputs + outputs + unbound_vars, "int64")`` without a
    ``global_symbol``; ``tir_vars`` lists the symbolic variables the outputs use that no
    input shape defines (None when there are none).  ``primfunc_attrs=`` adds attributes to
    the PrimFunc, ``sinfo_args=`` gives the output struct info explicitly.

    Example::

        prim_func, call_args, out_sinfo, tir_vars = gen_call_tir_inputs(te_relu, x)
    """
    from mlckit import te

    from .analysis.struct_info import substitute_tir_vars
    from .expr import ShapeExpr
    from .struct_info import TensorStructInfo

    primfunc_attrs = kwargs.pop("primfunc_attrs", None)
    custom_sinfo = kwargs.pop("sinfo_args", [])
    to_te = _TeArguments()
    te_args = to_te.convert(list(args))
    te_kwargs = to_te.convert(kwargs)
    prim_args, call_args, copies = to_te.prim_args, to_te.call_args, to_te.copies
    te_out = func(*te_args, **te_kwargs)
    outs = [te_out] if isinstance(te_out, te.Tensor) else list(te_out) \
        if isinstance(te_out, (list, tuple)) else None
    if not outs or not all(isinstance(t, te.Tensor) for t in outs):
        name = getattr(func, "__name__", repr(func))
        raise TVMTypeError(f"emit_te: {name} must return a te.Tensor or a list of them, got "
                           f"{type(te_out).__name__}")

    unbound = _unbound_tir_vars([*prim_args, *outs], to_te.extra_exprs, te.Tensor)
    prim_func = te.create_prim_func([*prim_args, *outs, *unbound], "int64")
    if primfunc_attrs:
        prim_func = prim_func.with_attr(dict(primfunc_attrs))
    prim_func = prim_func.without_attr("global_symbol")

    inverse = {new: old for old, new in copies.values()}

    def caller_shape(values) -> ShapeExpr:
        return ShapeExpr([substitute_tir_vars(v, inverse) for v in values])

    if len(custom_sinfo) == 1:
        out_sinfo = custom_sinfo[0]
    else:
        out_sinfo = [TensorStructInfo(caller_shape(t.shape), t.dtype) for t in outs]
    tir_vars = caller_shape(unbound) if unbound else None
    return prim_func, call_args, out_sinfo, tir_vars


class _TeArguments:
    """The arguments of a ``call_te`` turned into what the te function takes (see
    :func:`gen_call_tir_inputs`), collecting the PrimFunc's parameters on the way."""

    def __init__(self):
        self.copies: dict[int, tuple] = {}  # id(caller's TIR var) -> (it, the PrimFunc's copy)
        self.tir_var_map: dict = {}  # the same, as substitute_tir_vars takes it
        self.call_args: list = []
        self.prim_args: list = []  # te tensors / TIR scalar vars, in parameter order
        self.extra_exprs: list = []

    def copy_vars(self, expr) -> None:
        from mlckit.tir.expr import Var as TirVar

        from .analysis.struct_info import collect_tir_vars

        for v in collect_tir_vars(expr):
            if id(v) not in self.copies:
                self.copies[id(v)] = (v, TirVar(v.name_hint, v.dtype))
                self.tir_var_map[v] = self.copies[id(v)][1]

    def convert(self, arg):
        from mlckit import te

        from .analysis.struct_info import substitute_tir_vars

        if isinstance(arg, Expr):
            return self.convert_expr(arg)
        if isinstance(arg, (list, tuple)):
            out = [self.convert(x) for x in arg]
            return out if isinstance(arg, list) else tuple(out)
        if isinstance(arg, dict):
            for key in arg:
                if not isinstance(key, str):
                    raise TVMTypeError(f"emit_te takes dicts with str keys only, got {key!r}")
            return {k: self.convert(v) for k, v in arg.items()}
        if isinstance(arg, PrimExpr):
            self.copy_vars(arg)
            new = substitute_tir_vars(arg, self.tir_var_map)
            self.extra_exprs.append(new)
            return new
        if arg is None or isinstance(arg, (bool, int, float, str)):
            return arg
        if callable(arg) or isinstance(arg, te.Tensor):
            return arg
        raise TVMTypeError(f"emit_te: argument of type {type(arg).__name__} is not supported")

    def convert_expr(self, arg):
        """A Relax argument: a tensor becomes a placeholder, a scalar a TIR parameter."""
        from mlckit import te
        from mlckit.error import TVMValueError
        from mlckit.tir.expr import Var as TirVar

        from .analysis.struct_info import substitute_tir_vars
        from .expr import ShapeExpr, Var
        from .struct_info import PrimStructInfo, ShapeStructInfo, TensorStructInfo

        sinfo = arg.struct_info
        n = len(self.prim_args)
        if isinstance(sinfo, TensorStructInfo):
            if not isinstance(sinfo.shape, ShapeExpr):
                raise TVMValueError(
                    f"emit_te needs tensors of known shape, but argument {_describe(arg)} "
                    f"has struct info {_sinfo_text(sinfo)}; give it a shape with "
                    "bb.match_cast first")
            if not sinfo.dtype:
                raise TVMValueError(f"emit_te needs tensors of known dtype, but argument "
                                    f"{_describe(arg)} has none")
            for d in sinfo.shape.values:
                self.copy_vars(d)
            name = arg.name_hint if isinstance(arg, Var) else (
                _UPPER[n] if n < len(_UPPER) else f"tensor_input_{n}")
            shape = [substitute_tir_vars(d, self.tir_var_map) for d in sinfo.shape.values]
            tensor = te.placeholder(shape, sinfo.dtype, name)
            self.call_args.append(arg)
            self.prim_args.append(tensor)
            return tensor
        if isinstance(sinfo, ShapeStructInfo):
            if not isinstance(arg, ShapeExpr):
                raise TVMValueError(f"emit_te takes a shape argument only as a literal "
                                    f"R.shape([...]), got {_describe(arg)}")
            return [self.convert(v) for v in arg.values]
        if isinstance(sinfo, PrimStructInfo):
            if sinfo.value is not None:
                return self.convert(sinfo.value)
            name = arg.name_hint if isinstance(arg, Var) else (
                _LOWER[n] if n < len(_LOWER) else f"scalar_input_{n}")
            param = TirVar(name, sinfo.dtype)
            self.call_args.append(arg)
            self.prim_args.append(param)
            return param
        if isinstance(arg, Tuple):
            return [self.convert(f) for f in arg.fields]
        raise TVMTypeError(f"emit_te cannot pass {_describe(arg)} with struct info "
                           f"{_sinfo_text(sinfo)} to a te function: only tensors, shapes "
                           "and scalars")


_UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
_LOWER = _UPPER.lower()


def _unbound_tir_vars(params: list, extra: list, tensor_cls) -> list:
    """TIR vars the shapes (and scalar expressions) use that are not themselves a dim of a
    tensor parameter nor a scalar parameter (first use first)."""
    from mlckit.tir.expr import Var as TirVar

    from .analysis.struct_info import collect_tir_vars

    bound: set[int] = set()
    used: list = []

    def use(expr) -> None:
        for v in collect_tir_vars(expr):
            if not any(v is u for u in used):
                used.append(v)

    for p in params:
        if isinstance(p, tensor_cls):
            for d in p.shape:
                use(d)
                if isinstance(d, TirVar):
                    bound.add(id(d))
        elif isinstance(p, TirVar):
            use(p)
            bound.add(id(p))
    for e in extra:
        use(e)
    return [v for v in used if id(v) not in bound]


def _describe(expr) -> str:
    name = getattr(expr, "name_hint", None)
    return repr(name) if name else f"a {type(expr).__name__}"


def _sinfo_text(sinfo) -> str:
    from .analysis.struct_info import describe_struct_info

    return describe_struct_info(sinfo)
