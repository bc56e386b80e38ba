"""Relax intrinsics: ``call_tir``, ``call_dps_packed``, ``call_packed``, ``print`` …

Each op is registered once with ``register_op`` and carries two attributes:

- ``FInferStructInfo(call) -> StructInfo``: what the call returns (see
  ``mlckit.relax.analysis.infer_struct_info``);
- ``FPurity``: False for ops with side effects (they may not appear in a dataflow block).

The constructors lay out calls exactly as TVM does, e.g.::

    call_tir(gv, [x, w], R.Tensor((n, 128), "float32"))
    # Call(Op("relax.call_tir"), [gv, Tuple([x, w])], sinfo_args=[TensorStructInfo(...)])
"""

from __future__ import annotations

import builtins
from typing import Any

from mlckit.error import TVMTypeError, TVMValueError
from mlckit.ir.module import GlobalVar
from mlckit.ir.op import Op, register_op
from mlckit.tir.expr import PrimExpr

from ..expr import Call, Expr, ExternFunc, PrimValue, ShapeExpr, StringImm, Tuple, Var
from ..struct_info import (
    FuncStructInfo,
    ObjectStructInfo,
    PrimStructInfo,
    ShapeStructInfo,
    StructInfo,
    TensorStructInfo,
    TupleStructInfo,
)


class StructInfoError(TVMValueError):
    """The struct info of a call cannot be deduced (wrong argument kinds or counts).

    >>> from mlckit import relax
    >>> from mlckit.relax import analysis
    >>> from mlckit.script import relax as R
    >>> x = relax.Var("x", relax.TensorStructInfo([2, 4], "float32"))
    >>> z = relax.Var("z", relax.TensorStructInfo([3, 5], "float32"))
    >>> try:
    ...     analysis.infer_struct_info(R.add(x, z))
    ... except relax.op.StructInfoError as err:
    ...     message = str(err)
    >>> message
    'relax.add: cannot broadcast x1 (2, 4) and x2 (3, 5): dim 1 of x1 is 4 and dim 1 of x2 is 5 (neither is 1)'
    """


def _void() -> TupleStructInfo:
    return TupleStructInfo([])


def _sinfo(value) -> StructInfo:
    """A StructInfo from a StructInfo or an annotation proxy (``R.Tensor((n,), "f32")``)."""
    if isinstance(value, StructInfo):
        return value
    if callable(value) and not hasattr(value, "as_struct_info"):
        value = value()
    as_sinfo = getattr(value, "as_struct_info", None)
    if as_sinfo is not None:
        return as_sinfo()
    raise TVMTypeError(f"expected a struct info such as R.Tensor((n, 128), \"float32\"), got {value!r}")


def _sinfo_list(value, what: str) -> list:
    if value is None:
        raise TVMTypeError(f"{what} requires out_sinfo (the struct info of its result; TVM >= "
                           "0.24 names it out_ty), e.g. out_sinfo=R.Tensor((n, 128), \"float32\")")
    if isinstance(value, (list, builtins.tuple)):
        return [_sinfo(v) for v in value]
    return [_sinfo(value)]


def _out_sinfo(kwargs: dict, out_sinfo, what: str):
    """``out_sinfo=`` or its newer spelling ``out_ty=``."""
    if "out_ty" in kwargs:
        if out_sinfo is not None:
            raise TVMTypeError(f"{what}: give out_sinfo or out_ty (TVM >= 0.24's name for "
                               "it), not both")
        out_sinfo = kwargs.pop("out_ty")
    if kwargs:
        raise TVMTypeError(f"{what} got unexpected keyword arguments: {', '.join(kwargs)}")
    return out_sinfo


def _as_expr(value, what: str) -> Expr:
    from mlckit.relax.utils import convert_to_expr

    try:
        return convert_to_expr(value)
    except TypeError as err:
        raise TVMTypeError(f"{what}: {err}") from None


def _wrap_arg_tuple(args, what: str) -> Expr:
    """call_tir / call_dps_packed take their arguments as one in-line Tuple (as TVM)."""
    if isinstance(args, (list, builtins.tuple)):
        return Tuple([_as_expr(a, what) for a in args])
    args = _as_expr(args, what)
    if isinstance(args, Tuple):
        return args
    sinfo = args.__dict__.get("struct_info_")
    if isinstance(sinfo, TupleStructInfo):
        return args
    return Tuple([args])


def _check_out_sinfo(sinfos: list, what: str) -> StructInfo:
    for s in sinfos:
        if not isinstance(s, TensorStructInfo):
            raise TVMTypeError(f"out_sinfo of {what} must be tensor struct infos (R.Tensor(...)), "
                            f"got {type(s).__name__}")
        if not isinstance(s.shape, ShapeExpr):
            raise TVMValueError(f"out_sinfo of {what} must have a known shape, e.g. "
                             "R.Tensor((n, 128), \"float32\"); got a tensor without a shape")
    return sinfos[0] if len(sinfos) == 1 else TupleStructInfo(sinfos)


# -- call_tir ---------------------------------------------------------------------------------
def call_tir(gvar, args, out_sinfo=None, tir_vars=None, **kwargs) -> Call:
    """Call the PrimFunc ``gvar`` in destination-passing style; returns the new output(s).

    Example::

        lv0 = R.call_tir(cls.linear0, (x, w0, b0), out_sinfo=R.Tensor((n, 128), "float32"))
    """
    out_sinfo = _out_sinfo(kwargs, out_sinfo, "R.call_tir")
    if isinstance(gvar, str):
        raise TVMTypeError(f"R.call_tir expects a GlobalVar of a PrimFunc (e.g. cls.{gvar}), got the "
                        f"string {gvar!r}; use R.call_dps_packed to call a packed function by name")
    if not isinstance(gvar, (GlobalVar, Var)):
        raise TVMTypeError("R.call_tir expects its first argument to be the GlobalVar of a PrimFunc "
                        f"(e.g. cls.my_kernel), got {type(gvar).__name__}")
    sinfo = _check_out_sinfo(_sinfo_list(out_sinfo, "R.call_tir"), "R.call_tir")
    call_args = [gvar, _wrap_arg_tuple(args, "R.call_tir")]
    if tir_vars is not None:
        if isinstance(tir_vars, (list, builtins.tuple)):
            tir_vars = ShapeExpr(list(tir_vars))
        call_args.append(tir_vars)
    return Call(Op.get("relax.call_tir"), call_args, None, [sinfo])


def _infer_call_tir(call: Call) -> StructInfo:
    if len(call.sinfo_args) != 1:
        raise StructInfoError("R.call_tir needs exactly one output struct info (out_sinfo), "
                              f"got {len(call.sinfo_args)}")
    if len(call.args) not in (2, 3):
        raise StructInfoError("R.call_tir expects (callee, args tuple[, tir_vars]), got "
                              f"{len(call.args)} arguments")
    if not isinstance(call.args[0], GlobalVar):
        raise StructInfoError("R.call_tir expects the first argument to be a GlobalVar referring to "
                              f"a TIR PrimFunc, got {type(call.args[0]).__name__}")
    _expect_tuple_arg(call, "R.call_tir")
    if len(call.args) == 3 and not isinstance(call.args[2].struct_info, ShapeStructInfo):
        raise StructInfoError("the tir_vars of R.call_tir must be a shape (R.shape([...]))")
    return call.sinfo_args[0]


def _expect_tuple_arg(call: Call, what: str) -> None:
    if not isinstance(call.args[1].struct_info, TupleStructInfo):
        raise StructInfoError(f"{what} expects its arguments as a tuple, got "
                              f"{type(call.args[1].struct_info).__name__}")


# -- call_dps_packed --------------------------------------------------------------------------
def call_dps_packed(func, args, out_sinfo=None, **kwargs) -> Call:
    """Call a packed function (by name) in destination-passing style.

    Example::

        lv = R.call_dps_packed("env.linear", (x, w, b), out_sinfo=R.Tensor((1, 128), "float32"))
    """
    out_sinfo = _out_sinfo(kwargs, out_sinfo, "R.call_dps_packed")
    if isinstance(func, str):
        func = ExternFunc(func)
    sinfo = _check_out_sinfo(_sinfo_list(out_sinfo, "R.call_dps_packed"), "R.call_dps_packed")
    return Call(Op.get("relax.call_dps_packed"), [func, _wrap_arg_tuple(args, "R.call_dps_packed")],
                None, [sinfo])


def _infer_call_dps_packed(call: Call) -> StructInfo:
    if len(call.sinfo_args) != 1:
        raise StructInfoError("R.call_dps_packed needs exactly one output struct info (out_sinfo)")
    if len(call.args) != 2:
        raise StructInfoError(f"R.call_dps_packed expects (callee, args tuple), got {len(call.args)} "
                              "arguments")
    _expect_tuple_arg(call, "R.call_dps_packed")
    return call.sinfo_args[0]


# -- packed calls -----------------------------------------------------------------------------
def _sinfo_args(sinfo_args) -> list:
    if sinfo_args is None:
        return []
    if isinstance(sinfo_args, (list, builtins.tuple)):
        return [_sinfo(s) for s in sinfo_args]
    return [_sinfo(sinfo_args)]


def call_packed(func, *args, sinfo_args=None, **kwargs) -> Call:
    """Call a packed function by name; impure (not allowed inside a dataflow block).

    Example::

        z = R.call_packed("vm.builtin.copy", x, sinfo_args=R.Tensor((32, 32), "float32"))
    """
    if kwargs:
        raise TVMTypeError(f"R.call_packed: unsupported keyword arguments {', '.join(kwargs)}")
    if isinstance(func, ExternFunc):
        func = func.global_symbol
    if not isinstance(func, str):
        raise TVMTypeError(f"R.call_packed expects the name of a packed function, got {func!r}")
    return Call(ExternFunc(func), [_as_expr(a, "R.call_packed") for a in args], None,
                _sinfo_args(sinfo_args))


def call_pure_packed(func, *args, sinfo_args=None) -> Call:
    """Call a packed function the compiler may treat as pure (allowed in dataflow blocks).

    Example::

        y = R.call_pure_packed("my_sort", x, sinfo_args=R.Tensor((8,), "float32"))
    """
    if sinfo_args is None:
        raise TVMTypeError("R.call_pure_packed requires sinfo_args (the struct info of its result)")
    if isinstance(func, ExternFunc):
        func = func.global_symbol
    callee = ExternFunc(func) if isinstance(func, str) else func
    return Call(Op.get("relax.call_pure_packed"),
                [callee, *[_as_expr(a, "R.call_pure_packed") for a in args]], None,
                _sinfo_args(sinfo_args))


def _infer_call_pure_packed(call: Call) -> StructInfo:
    if not call.args:
        raise StructInfoError("R.call_pure_packed must be called with at least one argument")
    callee = call.args[0]
    if isinstance(callee, Op):
        raise StructInfoError("R.call_pure_packed cannot be used with an op")
    if isinstance(callee, ExternFunc):
        return call.sinfo_args[0] if call.sinfo_args else ObjectStructInfo()
    finfo = callee.struct_info
    if not isinstance(finfo, FuncStructInfo):
        raise StructInfoError("the callee of R.call_pure_packed must be a function")
    return finfo.ret


# -- print / assert ---------------------------------------------------------------------------
def print(*values, format="") -> Call:  # noqa: A001 - TVM's name
    """Print values at run time (impure). ``R.print(x, format="x: {}")``.

    >>> from mlckit import relax
    >>> from mlckit.relax import analysis
    >>> from mlckit.script import relax as R
    >>> x = relax.Var("x", relax.TensorStructInfo([2, 4], "float32"))
    >>> relax.op.print(x, format="x={}")
    R.print(x, format=R.str("x={}"))
    """
    fmt = StringImm(format) if isinstance(format, str) else format
    return Call(Op.get("relax.print"), [fmt, *[_as_expr(v, "R.print") for v in values]])


def assert_op(condition, format_args=None, format="") -> Call:  # noqa: A002
    """Fail at run time when ``condition`` (a bool scalar) is false (impure).

    Example::

        _ = R.assert_op(R.prim_value(n > 0), format="n must be positive")
    """
    if isinstance(condition, (PrimExpr, bool)):
        condition = PrimValue(condition)
    if format_args is None:
        format_args = []
    elif isinstance(format_args, Expr):
        format_args = [format_args]
    fmt = StringImm(format) if isinstance(format, str) else format
    return Call(Op.get("relax.assert_op"),
                [condition, fmt, *[_as_expr(a, "R.assert_op") for a in format_args]])


def _is_bool_sinfo(sinfo: StructInfo) -> bool:
    """A bool scalar, or a tensor of unknown dtype / rank (checked at run time), as TVM."""
    if isinstance(sinfo, PrimStructInfo):
        dtype, ndim = sinfo.dtype, 0
    elif isinstance(sinfo, TensorStructInfo):
        dtype, ndim = sinfo.dtype, sinfo.ndim
    else:
        return False
    return dtype in ("bool", "") and ndim in (0, -1)


def _infer_assert(call: Call) -> StructInfo:
    if not call.args:
        raise StructInfoError("R.assert_op needs at least one argument (the condition)")
    sinfo = call.args[0].struct_info
    if not _is_bool_sinfo(sinfo):
        raise StructInfoError("the condition of R.assert_op must be a boolean scalar "
                              f"(R.Tensor((), \"bool\") or R.Prim(\"bool\")), got {_describe(sinfo)}")
    return _void()


# -- shape_of / null_value --------------------------------------------------------------------
def shape_of(expr) -> Call:
    """The shape of a tensor as a Relax value. ``s = R.shape_of(x)``.

    >>> from mlckit import relax
    >>> from mlckit.relax import analysis
    >>> from mlckit.script import relax as R
    >>> x = relax.Var("x", relax.TensorStructInfo([2, 4], "float32"))
    >>> s = relax.op.shape_of(x)
    >>> s, s.struct_info
    (R.shape_of(x), R.Shape([2, 4]))
    """
    return Call(Op.get("relax.shape_of"), [_as_expr(expr, "R.shape_of")])


def _infer_shape_of(call: Call) -> StructInfo:
    if len(call.args) != 1:
        raise StructInfoError(f"R.shape_of takes one argument, got {len(call.args)}")
    sinfo = call.args[0].struct_info
    if not isinstance(sinfo, TensorStructInfo):
        raise StructInfoError(f"R.shape_of expects a tensor, got {_describe(sinfo)}; "
                              "use R.match_cast if necessary")
    if sinfo.ndim == -1:
        return ShapeStructInfo(ndim=-1)
    if not isinstance(sinfo.shape, ShapeExpr):
        return ShapeStructInfo(ndim=sinfo.ndim)
    return ShapeStructInfo(list(sinfo.shape.values))


def null_value() -> Call:
    """A null object value. ``R.null_value()``.

    >>> from mlckit import relax
    >>> relax.op.null_value(), relax.op.null_value().struct_info
    (R.null_value(), R.Object)
    """
    return Call(Op.get("relax.null_value"), [])


def _describe(sinfo: Any) -> str:
    from mlckit.relax.analysis import describe_struct_info

    return describe_struct_info(sinfo)


register_op("relax.call_tir", num_inputs=3, FInferStructInfo=_infer_call_tir, FPurity=True)
register_op("relax.call_dps_packed", num_inputs=2, FInferStructInfo=_infer_call_dps_packed,
            FPurity=True)
register_op("relax.call_pure_packed", num_inputs=-1, FInferStructInfo=_infer_call_pure_packed,
            FPurity=True)
register_op("relax.print", num_inputs=-1, FInferStructInfo=lambda call: _void(), FPurity=False)
register_op("relax.assert_op", num_inputs=-1, FInferStructInfo=_infer_assert, FPurity=False)
register_op("relax.shape_of", num_inputs=1, FInferStructInfo=_infer_shape_of, FPurity=True)
register_op("relax.null_value", num_inputs=0, FInferStructInfo=lambda call: ObjectStructInfo(),
            FPurity=True)

__all__ = ["StructInfoError", "assert_op", "call_dps_packed", "call_packed", "call_pure_packed",
           "call_tir", "null_value", "print", "shape_of"]
