"""IRBuilder functions of the ``R`` dialect, usable directly::

    with IRBuilder() as ib:
        with R.function():
            R.func_name("main")
            x = R.arg("x", R.Tensor(("n", 784), "float32"))
            with R.dataflow():
                lv = R.emit(R.call_dps_packed("env.relu", (x,), R.Tensor(("n", 784), "float32")))
                gv = R.emit(lv)
                R.output(gv)
            R.func_ret_value(gv)
    func = ib.get()
"""

from __future__ import annotations

from typing import Any

from mlckit.error import TVMTypeError, TVMValueError
from mlckit.ir.module import GlobalVar
from mlckit.relax.expr import (
    Call,
    Constant,
    DataflowVar,
    DataTypeImm,
    Expr,
    MatchCast,
    PrimValue,
    ShapeExpr,
    StringImm,
    Tuple,
    TupleGetItem,
    Var,
    VarBinding,
)
from mlckit.relax.expr import If as IfExpr
from mlckit.relax.struct_info import StructInfo
from mlckit.tir import dtype as dt
from mlckit.tir.expr import PrimExpr

from ..base import IRBuilder, IRBuilderError, frame_of
from .frame import BlockFrame, ElseFrame, FunctionFrame, IfFrame, ThenFrame
from .struct_info import to_struct_info


# -- function ------------------------------------------------------------------------------------
def function(is_pure: bool = True, is_private: bool = False) -> FunctionFrame:
    """Start a Relax function frame (``with R.function():``)."""
    return FunctionFrame(is_pure, is_private)


def arg(name: str, struct_info: Any) -> Var:
    """Add a parameter ``name`` annotated with ``struct_info`` to the current function."""
    frame = frame_of(FunctionFrame, "R.arg")
    var = Var(name, to_struct_info(struct_info))
    frame.params.append(var)
    return var


def func_name(name: str) -> None:
    """Name the current function (``R.func_name("main")``)."""
    frame = frame_of(FunctionFrame, "R.func_name")
    if frame.name is not None:
        raise IRBuilderError(f"duplicate function name, previous one is {frame.name!r}")
    frame.name = name


def func_attr(attrs: dict) -> None:
    """Set attributes of the current function (``R.func_attr({"relax.force_pure": True})``)."""
    frame = frame_of(FunctionFrame, "R.func_attr")
    if not isinstance(attrs, dict):
        raise TVMTypeError(f"R.func_attr expects a dict, got {type(attrs).__name__}")
    for key, value in attrs.items():
        if key == "global_symbol" and frame.is_private:
            raise IRBuilderError("a private function may not have the global_symbol attribute, "
                                 f"but this one sets it to {value!r}")
        if key in frame.attrs:
            raise IRBuilderError(f"duplicate R.func_attr for key {key!r}: previous value was "
                                 f"{frame.attrs[key]!r}, new value {value!r}")
        frame.attrs[key] = value


def func_ret_struct_info(ret_sinfo: Any) -> None:
    """Set the return annotation of the current function."""
    frame = frame_of(FunctionFrame, "R.func_ret_struct_info")
    if frame.ret_struct_info is not None:
        raise IRBuilderError("duplicate function return struct info")
    frame.ret_struct_info = to_struct_info(ret_sinfo)


def func_ret_value(value: Any, span=None) -> None:
    """Set the value the current function returns (``return value`` in a script)."""
    from mlckit.relax.utils import convert_to_expr

    frame = frame_of(FunctionFrame, "return")
    value = convert_to_expr(value)
    # deduce the struct info here, so that a mistake in the returned call is reported at the
    # `return` line rather than at the function's
    value.struct_info  # noqa: B018
    if frame.output is not None:
        raise IRBuilderError("Relax functions do not support multiple return statements: a "
                             "function has a single `return`, at its end")
    last = IRBuilder.last_frame()
    if isinstance(last, BlockFrame):
        value = normalize(value, last)
        if last.is_dataflow:
            from mlckit.relax.analysis.well_formed import free_relax_vars

            for var in free_relax_vars(value):
                if isinstance(var, DataflowVar) and var not in last.output_vars:
                    last.output_vars.append(var)
    frame.output = value
    frame.output_span = span


# -- blocks ----------------------------------------------------------------------------------------
def dataflow() -> BlockFrame:
    """Start a dataflow block (``with R.dataflow():``)."""
    return BlockFrame(is_dataflow=True)


def output(*vars: Var) -> None:  # noqa: A002 - TVM's name
    """Make dataflow-block variables visible after the block (``R.output(gv)``)."""
    frame = IRBuilder.last_frame()
    if not (isinstance(frame, BlockFrame) and frame.is_dataflow):
        raise IRBuilderError("R.output should appear inside a dataflow block (with R.dataflow():)")
    if frame.block_ended:
        raise IRBuilderError("a dataflow block may have only one R.output")
    frame.block_ended = True
    for var in vars:
        if not isinstance(var, Var):
            raise IRBuilderError(f"R.output expects variables bound in this dataflow block, got "
                                 f"{type(var).__name__}")
        if not any(var is v for v in frame.emitted_vars):
            raise IRBuilderError(f"R.output of {var.name_hint!r}, which is not bound in this "
                                 "dataflow block: output only variables the block defines")
        frame.output_vars.append(var)


def _current_block(what: str) -> BlockFrame:
    frame = IRBuilder.last_frame() if IRBuilder.is_in_scope() else None
    if not isinstance(frame, BlockFrame):
        raise IRBuilderError(f"{what} must be used inside R.function() (in a binding block)")
    if frame.block_ended:
        raise IRBuilderError("no new binding is allowed after R.output in a dataflow block")
    return frame


def _new_var(block: BlockFrame, name: str, sinfo: StructInfo, span) -> Var:
    cls = DataflowVar if block.is_dataflow else Var
    return cls(name, sinfo, span=span)


# -- normalization: nested non-leaf expressions get their own bindings (ANF), as TVM ------------
def _is_leaf_or_tuple(expr) -> bool:
    from mlckit.relax.analysis import is_leaf

    if isinstance(expr, Tuple):
        return all(_is_leaf_or_tuple(f) for f in expr.fields)
    return is_leaf(expr)


def _normalize_arg(expr, block: BlockFrame, span):
    from mlckit.relax.utils import convert_to_expr

    if not isinstance(expr, (Expr, GlobalVar)):
        expr = convert_to_expr(expr)
    if isinstance(expr, GlobalVar):
        return expr
    if isinstance(expr, Tuple):
        fields = [_normalize_arg(f, block, span) for f in expr.fields]
        if any(a is not b for a, b in zip(fields, expr.fields)):
            return Tuple(fields, span=expr.span)
        return expr
    if _is_leaf_or_tuple(expr):
        return expr
    value = normalize(expr, block, span)
    var = _new_var(block, "lv" if block.is_dataflow else "gv", value.struct_info, span)
    block.add_binding(VarBinding(var, value, span=span))
    return var


def normalize(expr, block: BlockFrame, span=None):
    """``expr`` with nested non-leaf sub-expressions bound first in ``block``."""
    if isinstance(expr, Call):
        op = expr.op
        if isinstance(op, Expr) and not _is_leaf_or_tuple(op):
            op = _normalize_arg(op, block, span)
        args = [_normalize_arg(a, block, span) for a in expr.args]
        if op is not expr.op or any(a is not b for a, b in zip(args, expr.args)):
            new = Call(op, args, expr.attrs, expr.sinfo_args, span=expr.span)
            if "struct_info_" in expr.__dict__:
                new.__dict__["struct_info_"] = expr.__dict__["struct_info_"]
            return new
        return expr
    if isinstance(expr, Tuple):
        return _normalize_arg(expr, block, span)
    if isinstance(expr, TupleGetItem):
        tup = _normalize_arg(expr.tuple_value, block, span)
        return expr if tup is expr.tuple_value else TupleGetItem(tup, expr.index, span=expr.span)
    if isinstance(expr, IfExpr):
        cond = _normalize_arg(expr.cond, block, span)
        return expr if cond is expr.cond else IfExpr(cond, expr.true_branch, expr.false_branch,
                                                 span=expr.span)
    return expr


# -- emitting --------------------------------------------------------------------------------------
def emit(value: Any, annotate_struct_info: Any = None, span=None) -> Var:
    """Bind ``value`` to a new variable in the current block and return the variable.

    ``annotate_struct_info`` (``lv: R.Tensor(...) = value`` in a script) gives the struct info
    of a freshly built call; for other values it must agree with the deduced one.

    Example::

        lv = R.emit(R.call_tir(gv, (x,), R.Tensor((n,), "float32")))
    """
    from mlckit.relax.analysis import describe_struct_info, statically_compatible
    from mlckit.relax.utils import convert_to_expr

    block = _current_block("R.emit")
    value = normalize(convert_to_expr(value), block, span)
    if annotate_struct_info is not None:
        anno = to_struct_info(annotate_struct_info)
        cached = value.__dict__.get("struct_info_")
        if isinstance(value, Call) and cached is None:
            inferred = value.struct_info  # raises if the call is malformed
            if not statically_compatible(anno, inferred):
                raise IRBuilderError(
                    f"the annotation {describe_struct_info(anno)} does not match the value's "
                    f"struct info {describe_struct_info(inferred)}")
            value.__dict__["struct_info_"] = anno
        elif not statically_compatible(anno, value.struct_info):
            raise IRBuilderError(
                f"the annotation {describe_struct_info(anno)} does not match the value's "
                f"struct info {describe_struct_info(value.struct_info)}")
    var = _new_var(block, "lv" if block.is_dataflow else "gv", value.struct_info, span)
    return block.add_binding(VarBinding(var, value, span=span))


def emit_match_cast(value: Any, struct_info: Any, span=None) -> Var:
    """Bind ``value`` checked at run time against ``struct_info``; symbolic vars that first
    appear in ``struct_info`` are defined by this binding.

    Example::

        n = T.int64()
        y = R.emit_match_cast(x, R.Tensor((n,), "float32"))
    """
    from mlckit.relax.utils import convert_to_expr

    block = _current_block("R.emit_match_cast")
    value = normalize(convert_to_expr(value), block, span)
    sinfo = to_struct_info(struct_info)
    value.struct_info  # noqa: B018 - the value must be well typed
    var = _new_var(block, "lv" if block.is_dataflow else "gv", sinfo, span)
    return block.add_binding(MatchCast(var, value, sinfo, span=span))


def emit_var_binding(binding: VarBinding) -> Var:
    """Add an already built VarBinding to the current block."""
    block = _current_block("R.emit_var_binding")
    return block.add_binding(binding)


# -- if / then / else --------------------------------------------------------------------------
def If(condition: Any) -> IfFrame:  # noqa: N802 - TVM's name
    """``with R.If(cond):`` — a PrimExpr condition becomes a PrimValue."""
    if isinstance(condition, (PrimExpr, bool)):
        condition = PrimValue(condition)
    return IfFrame(condition)


def Then() -> ThenFrame:  # noqa: N802
    """``with R.Then():`` — the true branch of the enclosing ``R.If``."""
    return ThenFrame()


def Else() -> ElseFrame:  # noqa: N802
    """``with R.Else():`` — the false branch of the enclosing ``R.If``."""
    return ElseFrame()


# -- values ------------------------------------------------------------------------------------
def const(value: Any, dtype: str | None = None) -> Constant:
    """A constant tensor: ``R.const(1.5, "float32")``, ``R.const(np.ones((2, 2)))``.

    Python ints default to int64 and floats to float32 (TVM's ``relax.const``).
    """
    import numpy as np

    if dtype is not None:
        dtype = dt.check_dtype(dtype)
    if isinstance(value, (bool, np.bool_)) and dtype is None:
        dtype = "bool"
    elif isinstance(value, (int, np.integer)) and not isinstance(value, np.generic) and dtype is None:
        dtype = "int64"
    elif isinstance(value, float) and dtype is None:
        dtype = "float32"
    arr = np.asarray(value)
    if dtype is not None:
        arr = arr.astype(dt.to_numpy(dtype))
    elif arr.dtype == np.float64 and not isinstance(value, np.ndarray):
        arr = arr.astype("float32")
    return Constant(arr)


def tuple(*fields: Any) -> Tuple:  # noqa: A001 - TVM's name
    """A tuple value: ``R.tuple(x, y)`` (also written ``(x, y)`` in scripts)."""
    from mlckit.relax.utils import convert_to_expr

    return Tuple([convert_to_expr(f) for f in fields])


def shape(value: Any) -> ShapeExpr:
    """A shape value: ``R.shape([n, 128])``."""
    return ShapeExpr(list(value))


def prim_value(value: Any) -> PrimValue:
    """A scalar value: ``R.prim_value(n + 1)``, ``R.prim_value(T.int64(3))``."""
    return PrimValue(value)


def str(value: Any) -> StringImm:  # noqa: A001 - TVM's name
    """A string value: ``R.str("hello")``."""
    return StringImm(value)


def dtype(value: Any) -> DataTypeImm:
    """A data type value: ``R.dtype("float32")``."""
    return DataTypeImm(dt.check_dtype(value))


def TupleGetItemExpr(value: Expr, index: int) -> TupleGetItem:  # noqa: N802
    """``R.TupleGetItem(tup, 1)`` (also written ``tup[1]``)."""
    return TupleGetItem(value, index)


class MatchCastPair:
    """What ``R.match_cast(value, sinfo)`` evaluates to in a script, before it is bound."""

    def __init__(self, value: Expr, struct_info: StructInfo):
        self.value = value
        self.struct_info = struct_info


def match_cast(value: Any, struct_info: Any) -> MatchCastPair:
    """``y = R.match_cast(x, R.Tensor((n, m), "float32"))`` in a script (bind it!)."""
    if value is None:
        raise TVMValueError("the value of R.match_cast cannot be None")
    return MatchCastPair(value, to_struct_info(struct_info))


__all__ = [
    "Else", "If", "MatchCastPair", "Then", "TupleGetItemExpr", "arg", "const", "dataflow",
    "dtype", "emit", "emit_match_cast", "emit_var_binding", "func_attr", "func_name",
    "func_ret_struct_info", "func_ret_value", "function", "match_cast", "normalize", "output",
    "prim_value", "shape", "str", "tuple",
]
