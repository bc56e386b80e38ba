"""Relax expressions, bindings and functions (names as in ``tvm.relax``).

Every expression has a ``struct_info``: given for Vars, computed (and cached) for the rest
by ``mlckit.relax.analysis.infer_struct_info``.

Example::

    x = Var("x", TensorStructInfo([n, 784], "float32"))
    call = call_tir(gv, [x, w], TensorStructInfo([n, 128], "float32"))
"""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np

from mlckit.error import TVMTypeError, TVMValueError
from mlckit.ffi.registry import register_func
from mlckit.ir.node import Node, node
from mlckit.tir import dtype as dt
from mlckit.tir.expr import PrimExpr, convert

from .struct_info import StructInfo, _as_dim


@node
class Expr(Node):
    """Base of Relax expressions.

    >>> from mlckit import relax
    >>> issubclass(relax.Var, relax.Expr), issubclass(relax.Call, relax.Expr)
    (True, True)
    """

    struct_info_ = None  # a cache, set per instance (not a field: derived from the fields)

    @property
    def struct_info(self) -> StructInfo:
        sinfo = self.__dict__.get("struct_info_")
        if sinfo is None:
            from .analysis import infer_struct_info

            sinfo = infer_struct_info(self)
            self.__dict__["struct_info_"] = sinfo
        return sinfo

    # -- script sugar: ``tup[0]``, ``a, b = tup``, ``f(x)`` on a function-valued var ---------
    def __getitem__(self, index: int):
        """``tup[i]``: a TupleGetItem (Tuple and ShapeExpr index their own fields)."""
        if isinstance(index, bool) or not isinstance(index, int):
            raise TVMTypeError(f"a Relax tuple is indexed by a Python int, got {index!r}")
        return TupleGetItem(self, index)

    def __iter__(self):
        from .struct_info import TupleStructInfo

        sinfo = self.struct_info
        if not isinstance(sinfo, TupleStructInfo):
            raise TVMTypeError(f"cannot iterate over a Relax {type(self).__name__} that is not a tuple")
        return iter([TupleGetItem(self, i) for i in range(len(sinfo.fields))])

    def __call__(self, *args):
        """Calling a function-valued expression builds a Call."""
        return Call(self, list(args))

    # -- operators, as TVM's ``ExprWithOp``: ``x + y`` is ``R.add(x, y)`` -----------------------
    # (== and != keep their object meaning: Relax expressions are compared by identity.)
    def astype(self, dtype: str) -> Call:
        """``R.astype(self, dtype)``: ``x.astype("float16")``."""
        return _op("astype")(self, dtype)

    def __neg__(self) -> Call:
        return _op("negative")(self)

    def __add__(self, other):
        from .struct_info import TupleStructInfo

        if isinstance(other, tuple) and isinstance(self.__dict__.get("struct_info_"),
                                                   TupleStructInfo):
            return (*self, *other)  # as TVM: a tuple value extended by a Python tuple
        return _binary(self, other, "add", "+")

    def __radd__(self, other):
        return _binary_rhs(other, "+")

    def __sub__(self, other):
        return _binary(self, other, "subtract", "-")

    def __rsub__(self, other):
        return _binary_rhs(other, "-")

    def __mul__(self, other):
        return _binary(self, other, "multiply", "*")

    def __rmul__(self, other):
        return _binary_rhs(other, "*")

    def __truediv__(self, other):
        return _binary(self, other, "divide", "/")

    def __rtruediv__(self, other):
        return _binary_rhs(other, "/")

    def __floordiv__(self, other):
        return _binary(self, other, "floor_divide", "//")

    def __rfloordiv__(self, other):
        return _binary_rhs(other, "//")

    def __mod__(self, other):
        return _binary(self, other, "mod", "%")

    def __rmod__(self, other):
        return _binary_rhs(other, "%")

    def __pow__(self, other):
        return _binary(self, other, "power", "**")

    def __rpow__(self, other):
        return _binary_rhs(other, "**")

    def __lt__(self, other):
        return _binary(self, other, "less", "<")

    def __le__(self, other):
        return _binary(self, other, "less_equal", "<=")

    def __gt__(self, other):
        return _binary(self, other, "greater", ">")

    def __ge__(self, other):
        return _binary(self, other, "greater_equal", ">=")

    __hash__ = object.__hash__


def _op(name: str):
    from . import op  # the operators sit above the expressions: found at call time

    return getattr(op, name)


def _number_hint(value, symbol: str) -> str:
    return (f"a Relax operator ({symbol}) does not convert Python numbers: write "
            f"relax.const({value!r}, dtype) (R.const in TVMScript) for the number")


def _binary(lhs: Expr, rhs, name: str, symbol: str):
    """``lhs <symbol> rhs`` for two Relax expressions (TVM's ``_binary_op_helper``)."""
    if isinstance(rhs, Expr):
        return _op(name)(lhs, rhs)
    if isinstance(rhs, (bool, int, float, np.number)):
        raise TVMTypeError(_number_hint(rhs, symbol))
    raise TVMTypeError(f"a Relax operator ({symbol}) takes two Relax expressions, got "
                       f"{type(rhs).__name__} on the right")


def _binary_rhs(lhs, symbol: str):
    """``number <symbol> expr``: refused as in TVM (a Relax expression needs a constant)."""
    if isinstance(lhs, (bool, int, float, np.number)):
        raise TVMTypeError(_number_hint(lhs, symbol))
    raise TVMTypeError(f"a Relax operator ({symbol}) takes two Relax expressions, got "
                       f"{type(lhs).__name__} on the left")


class Id:
    """The identity of a Relax variable (``var.vid``), as TVM's ``relax.Id``: the key of
    ``PyExprMutator.set_var_remap``.  ``var.vid`` is the same object for one variable.

    Example::

        self.set_var_remap(binding.var.vid, new_var)
    """

    __slots__ = ("name_hint", "var")

    def __init__(self, name_hint: str, var: Var | None = None):
        self.name_hint = name_hint
        self.var = var

    def __repr__(self) -> str:
        return f"Id({self.name_hint!r})"


@node
class Var(Expr):
    """A variable, bound by a function parameter or a binding.

    ``struct_info`` is a StructInfo (or an annotation such as ``R.Tensor((n, 784),
    "float32")``); a shape goes through ``relax.TensorStructInfo(shape, dtype)``::

        x = relax.Var("x", relax.TensorStructInfo((1, 784), "float32"))
    """

    name_hint: str
    struct_info_: StructInfo | None = None  # type: ignore[misc]

    _is_var = True
    _eq_ignore = ("name_hint",)

    def __post_init__(self):
        sinfo = self.struct_info_
        if sinfo is None or isinstance(sinfo, StructInfo):
            return
        as_sinfo = getattr(sinfo, "as_struct_info", None)
        if as_sinfo is None and callable(sinfo):  # ``R.Tensor`` without arguments
            as_sinfo = getattr(sinfo(), "as_struct_info", None)
        if as_sinfo is None:
            raise TVMTypeError(
                f"the struct info of relax.Var {self.name_hint!r} must be a StructInfo, got "
                f"{type(sinfo).__name__} {sinfo!r}; to give a shape, use "
                "relax.TensorStructInfo(shape, dtype), e.g. relax.TensorStructInfo((128, 128), "
                "\"float32\")")
        self.struct_info_ = as_sinfo()

    @property
    def struct_info(self) -> StructInfo:
        if self.struct_info_ is None:
            raise TVMValueError(f"variable {self.name_hint!r} has no struct info yet")
        return self.struct_info_

    @property
    def vid(self) -> Id:
        """The identity of this variable (TVM's ``Var.vid``)."""
        vid = self.__dict__.get("_vid")
        if vid is None:
            vid = self.__dict__["_vid"] = Id(self.name_hint, self)
        return vid

    __hash__ = object.__hash__


@node
class DataflowVar(Var):
    """A variable local to a dataflow block (not visible after it, unless output).

    >>> from mlckit import relax
    >>> from mlckit.script import relax as R
    >>> x = relax.Var("x", relax.TensorStructInfo([2, 3], "float32"))
    >>> bb = relax.BlockBuilder()
    >>> with bb.function("main", [x]):
    ...     with bb.dataflow():
    ...         lv = bb.emit(R.add(x, x))
    ...         gv = bb.emit_output(R.multiply(lv, x))
    ...     _ = bb.emit_func_output(gv)
    >>> type(lv).__name__, type(gv).__name__
    ('DataflowVar', 'Var')
    """

    __hash__ = object.__hash__


@node
class Constant(Expr):
    """A constant tensor (weights bound by BindParams, ``R.const``).

    >>> import numpy as np
    >>> from mlckit import relax
    >>> c = relax.const(np.ones(2, "float32"))
    >>> c, c.struct_info
    (R.const([1.0, 1.0], "float32"), R.Tensor((2,), dtype="float32"))
    """

    data: np.ndarray

    def __post_init__(self):
        self.data = _owned(self.data)


# the arrays Constants hold, copied from the caller's once (as TVM copies a constant into its
# own tensor): changing the caller's array after relax.const / BindParams changes nothing.
# Keyed by id, the array kept alive by the Constant that holds it.
_OWNED: weakref.WeakValueDictionary = weakref.WeakValueDictionary()


def _owned(value) -> np.ndarray:
    """``value`` as an array of mlckit's own: the array itself if a Constant already holds
    it (a pass rebuilding a Constant copies nothing), else a C-contiguous copy."""
    if isinstance(value, np.ndarray) and _OWNED.get(id(value)) is value:
        return value
    copy = np.array(value, order="C", copy=True)
    _OWNED[id(copy)] = copy
    return copy


def const(value: Any, dtype: str | None = None) -> Constant:
    """A constant tensor, as TVM's ``relax.const``.

    ``value`` is a Python scalar or list, a NumPy array or an NDArray.  Without ``dtype``,
    Python ints (and int64 arrays) become int32 and floats (and float64 arrays) float32, as
    in TVM; with ``dtype`` the data is converted::

        relax.const(1.5)                        # R.const(1.5, "float32")
        relax.const(w0, "float32")              # a (128, 784) float32 weight
        relax.const(3, "int64")
    """
    if dtype is not None:
        try:
            dtype = dt.check_dtype(dtype)
        except ValueError as err:
            raise TVMValueError(f"relax.const: {err}") from None
    if hasattr(value, "_mlckit_numpy_view"):
        value = np.asarray(value)  # an NDArray's host data (the Constant copies it)
    elif hasattr(value, "numpy") and not isinstance(value, (np.ndarray, np.generic)):
        value = np.asarray(value.numpy())  # anything with .numpy()
    elif isinstance(value, (bool, int, float, list, tuple, np.bool_)):
        value = np.array(value, dtype=dt.to_numpy(dtype) if dtype else None)
    elif not isinstance(value, (np.ndarray, np.generic)):
        raise TVMValueError(f"relax.const: value has to be a scalar, a list, a NumPy array or "
                            f"an NDArray, got {type(value).__name__}")
    value = np.asarray(value)
    if dtype is None:
        dtype = {np.dtype("int64"): "int32", np.dtype("float64"): "float32"}.get(value.dtype)
    if dtype is not None:
        value = value.astype(dt.to_numpy(dtype), copy=False)  # the Constant copies it
    return Constant(value)


@node
class PrimValue(Expr):
    """A scalar TIR expression as a Relax value (``R.prim_value(n)``).

    >>> from mlckit import relax
    >>> v = relax.PrimValue(3)
    >>> v, v.struct_info
    (R.prim_value(3), R.Prim(value=3))
    """

    value: PrimExpr

    def __post_init__(self):
        if isinstance(self.value, int) and not isinstance(self.value, bool):
            self.value = convert(self.value, "int64")  # as TVM: Python ints are int64 here
        self.value = convert(self.value)


@node
class StringImm(Expr):
    """A string as a Relax value (``R.str``), e.g. an argument of ``R.call_packed``.

    >>> from mlckit import relax
    >>> relax.StringImm("hi")
    R.str("hi")
    """
    value: str


@node
class DataTypeImm(Expr):
    """A dtype as a Relax value (``R.dtype``), e.g. the target type of a cast.

    >>> from mlckit import relax
    >>> relax.DataTypeImm("float32")
    R.dtype("float32")
    """
    value: str


@node
class ShapeExpr(Expr):
    """A shape value ``R.shape([n, 128])``: int64 PrimExprs.

    >>> from mlckit import relax
    >>> s = relax.ShapeExpr([2, 3])
    >>> s, s.struct_info
    (R.shape([2, 3]), R.Shape([2, 3]))
    """

    values: list

    def __post_init__(self):
        self.values = [_as_dim(v) for v in self.values]

    def __getitem__(self, i):
        return self.values[i]

    def __iter__(self):
        return iter(self.values)

    def __len__(self):
        return len(self.values)


@node
class Tuple(Expr):
    """A tuple of Relax values ``(a, b)``; its struct info is the tuple of theirs.

    >>> from mlckit import relax
    >>> from mlckit.script import relax as R
    >>> x = relax.Var("x", relax.TensorStructInfo([2, 3], "float32"))
    >>> t = relax.Tuple([x, x])
    >>> t.struct_info
    R.Tuple(R.Tensor((2, 3), dtype="float32"), R.Tensor((2, 3), dtype="float32"))
    """
    fields: list

    def __post_init__(self):
        self.fields = list(self.fields)

    def __getitem__(self, i):
        return self.fields[i]

    def __iter__(self):
        return iter(self.fields)

    def __len__(self):
        return len(self.fields)


@node
class TupleGetItem(Expr):
    """``tuple_value[index]``: one field of a tuple.

    >>> from mlckit import relax
    >>> from mlckit.script import relax as R
    >>> x = relax.Var("x", relax.TensorStructInfo([2, 3], "float32"))
    >>> item = relax.TupleGetItem(relax.Tuple([x, R.shape([4])]), 1)
    >>> item, item.struct_info
    ((x, R.shape([4]))[1], R.Shape([4]))
    """
    tuple_value: Expr
    index: int


@node
class Call(Expr):
    """``op(*args)``: op is an Op, a GlobalVar, an ExternFunc or a Var holding a function.

    ``sinfo_args`` carry struct infos the op needs (``out_sinfo`` of ``call_tir``).

    >>> from mlckit import relax
    >>> from mlckit.script import relax as R
    >>> x = relax.Var("x", relax.TensorStructInfo([2, 3], "float32"))
    >>> call = R.add(x, x)
    >>> type(call).__name__, call.op, call.struct_info
    ('Call', I.Op("relax.add"), R.Tensor((2, 3), dtype="float32"))
    """

    op: Any
    args: list
    attrs: Any = None
    sinfo_args: list = None  # type: ignore[assignment]

    def __post_init__(self):
        self.args = list(self.args)
        self.sinfo_args = list(self.sinfo_args or [])


@node
class If(Expr):
    """``if cond: true_branch else false_branch``: both branches are SeqExprs once normalized.

    >>> from mlckit import relax
    >>> cond = relax.Var("c", relax.TensorStructInfo([], "bool"))
    >>> branch = relax.If(cond, relax.PrimValue(1), relax.PrimValue(0))
    >>> branch.true_branch
    R.prim_value(1)
    """
    cond: Expr
    true_branch: Expr
    false_branch: Expr


@node
class ExternFunc(Expr):
    """A function found by name in the global function registry at run time.

    >>> from mlckit import relax
    >>> relax.ExternFunc("env.linear")
    R.ExternFunc("env.linear")
    """

    global_symbol: str


# Bindings, blocks and functions are in expr_block, which needs the classes above; this is
# their public path.
from .expr_block import (  # noqa: E402, F401 - re-exported
    Binding,
    BindingBlock,
    DataflowBlock,
    Function,
    MatchCast,
    SeqExpr,
    VarBinding,
)

# The IR core sits below relax and reaches these through the registry, not by importing it:
# ``gv(*args)`` builds a relax.Call, and a FunctionPass walks Relax functions by default.
register_func("ir.GlobalVar.call", lambda gv, args: Call(gv, list(args)))
register_func("ir.FunctionPass.default_func_type", lambda: Function)
