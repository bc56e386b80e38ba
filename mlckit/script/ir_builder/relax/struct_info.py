"""Struct-info annotations of the ``R`` dialect: ``R.Tensor``, ``R.Tuple``, ``R.Shape`` …

They are *proxies*: ``R.Tensor(("n", 128), "float32")`` records its arguments and becomes a
``TensorStructInfo`` when a function parameter, a binding or an op needs it.  A string dim
(``"n"``) names an int64 symbolic variable: within one ``R.function`` every ``"n"`` is the
same ``tir.Var``; a string may also be an expression of such names (``"n * 2"``).

Example::

    R.Tensor((n, 128), "float32")     # dims as tir expressions
    R.Tensor(("n", 128), "float32")   # the symbolic var n, shared by the function
    R.Tensor(ndim=2, dtype="float32") # shape unknown, rank known
    R.Tuple(R.Tensor((2,), "int64"), R.Object)
"""

from __future__ import annotations

from typing import Any

from mlckit.error import TVMTypeError, TVMValueError
from mlckit.relax.expr import Expr, ShapeExpr, Var
from mlckit.relax.struct_info import (
    FuncStructInfo,
    ObjectStructInfo,
    PrimStructInfo,
    ShapeStructInfo,
    StructInfo,
    TensorStructInfo,
    TupleStructInfo,
)
from mlckit.tir import dtype as dt
from mlckit.tir.expr import PrimExpr, convert


class StructInfoProxy:
    """Base of annotation proxies: ``as_struct_info(names)`` builds the StructInfo."""

    def as_struct_info(self, names: dict | None = None) -> StructInfo:
        raise NotImplementedError

    def get_symbolic_vars(self) -> list[str]:
        """Names of the symbolic vars this annotation introduces (string dims)."""
        return []

    def asobject(self) -> StructInfo:
        return self.as_struct_info(None)

    def __repr__(self) -> str:
        try:
            from mlckit.relax.analysis import describe_struct_info

            return describe_struct_info(self.as_struct_info(None))
        except Exception:  # noqa: BLE001 - repr must not fail
            return f"<{type(self).__name__}>"


def _symbol_table(names: dict | None) -> tuple[dict, bool]:
    """Where string dims are looked up: ``names`` (the parser), else the symbolic vars of
    the innermost R.function frame, created on first use (direct IRBuilder use)."""
    if names is not None:
        return names, False
    from ..base import IRBuilder

    if IRBuilder.is_in_scope():
        from .frame import FunctionFrame

        frame = IRBuilder.find_frame(FunctionFrame)
        if frame is not None:
            return frame.symbolic_vars, True
    raise TVMValueError("string dims such as \"n\" are only allowed in the signature of an "
                     "R.function (parameters and return annotation); elsewhere use the "
                     "variable itself: n = T.int64() then R.Tensor((n,), ...)")


def eval_dim(value: Any, names: dict | None) -> PrimExpr:
    """A shape dim from an int, a PrimExpr, or a string naming / computing symbolic vars."""
    if not isinstance(value, str):
        return value
    table, create = _symbol_table(names)
    if value.isidentifier():
        if value in table and isinstance(table[value], PrimExpr):
            return table[value]
        if create:
            from mlckit.tir.expr import Var as TirVar

            var = table[value] = TirVar(value, "int64")
            return var
        raise TVMValueError(f"undefined symbolic variable {value!r} in a shape annotation")
    from mlckit.script import tir as T  # noqa: N812

    env = {"T": T, **table}
    try:
        return eval(compile(value, "<shape>", "eval"), env)  # noqa: S307 - the script's own text
    except NameError as err:
        raise TVMValueError(f"undefined symbolic variable {err.name!r} in the shape expression "
                         f"{value!r}: a symbolic var must appear alone as a dim (\"{err.name}\") "
                         "somewhere in the parameters to be defined") from None


def _check_dtype(dtype) -> str:
    if dtype is None or dtype == "":
        return ""
    try:
        return dt.check_dtype(dtype)
    except ValueError as err:
        raise TVMValueError(str(err)) from None


class TensorProxy(StructInfoProxy):
    def __init__(self, shape=None, dtype=None, ndim: int = -1, vdevice=None):
        if isinstance(shape, Expr):
            if not isinstance(shape, (ShapeExpr, Var)):
                raise TVMValueError("when the shape of R.Tensor is an expression it must be a shape "
                                 f"(R.shape([...]) or a shape variable), got {type(shape).__name__}")
        elif shape is not None and not isinstance(shape, (list, tuple)):
            raise TVMValueError(f"the shape of R.Tensor must be a tuple or list, got {shape!r}")
        if not isinstance(ndim, int) or isinstance(ndim, bool):
            raise TVMTypeError(f"ndim of R.Tensor must be an int, got {ndim!r}")
        if ndim < -1:
            raise TVMValueError(f"ndim of R.Tensor must be -1 (unknown) or non-negative, got {ndim}")
        if isinstance(shape, (list, tuple)) and ndim not in (-1, len(shape)):
            raise TVMValueError(f"R.Tensor got a shape of {len(shape)} dims but ndim={ndim}")
        self.shape = shape
        self.dtype = _check_dtype(dtype)
        self.ndim = ndim
        self.vdevice = vdevice

    def get_symbolic_vars(self) -> list[str]:
        if not isinstance(self.shape, (list, tuple)):
            return []
        return [s for s in self.shape if isinstance(s, str) and s.isidentifier()]

    def as_struct_info(self, names: dict | None = None) -> TensorStructInfo:
        if self.shape is None or isinstance(self.shape, Expr):
            return TensorStructInfo(self.shape, self.dtype, self.ndim)
        dims = [eval_dim(s, names) for s in self.shape]
        for d in dims:
            if not isinstance(convert(d), PrimExpr):
                raise TVMTypeError(f"a dim of R.Tensor must be an int or a TIR expression, got {d!r}")
        return TensorStructInfo(dims, self.dtype)


def Tensor(shape=None, dtype=None, ndim: int = -1, vdevice=None) -> TensorProxy:  # noqa: N802
    """``R.Tensor(shape, dtype, ndim=-1)``: the annotation of a tensor value.

    ``R.Tensor("float32")`` (dtype only), ``R.Tensor((n, 128), "float32")``,
    ``R.Tensor(("n", 128), "float32")``, ``R.Tensor(ndim=2, dtype="float32")``.
    """
    if isinstance(shape, str) and dtype is None:
        shape, dtype = None, shape
    return TensorProxy(shape, dtype, ndim, vdevice)


class TupleProxy(StructInfoProxy):
    def __init__(self, *fields):
        if len(fields) == 1 and isinstance(fields[0], (list, tuple)):
            fields = tuple(fields[0])
        self.fields = [f() if callable(f) and not isinstance(f, StructInfoProxy) else f
                       for f in fields]

    def get_symbolic_vars(self) -> list[str]:
        out: list[str] = []
        for f in self.fields:
            if isinstance(f, StructInfoProxy):
                out += [n for n in f.get_symbolic_vars() if n not in out]
        return out

    def as_struct_info(self, names: dict | None = None) -> TupleStructInfo:
        return TupleStructInfo([to_struct_info(f, names) for f in self.fields])


def Tuple(*fields) -> TupleProxy:  # noqa: N802
    """``R.Tuple(R.Tensor((2,), "float32"), R.Object)``: the annotation of a tuple."""
    return TupleProxy(*fields)


class ShapeProxy(StructInfoProxy):
    def __init__(self, values=None, ndim: int = -1):
        self.values = None if values is None else list(values)
        self.ndim = ndim

    def get_symbolic_vars(self) -> list[str]:
        return [v for v in self.values or [] if isinstance(v, str) and v.isidentifier()]

    def as_struct_info(self, names: dict | None = None) -> ShapeStructInfo:
        if self.values is None:
            return ShapeStructInfo(None, self.ndim)
        return ShapeStructInfo([eval_dim(v, names) for v in self.values])


def Shape(values=None, ndim: int = -1) -> ShapeProxy:  # noqa: N802
    """``R.Shape([n, 128])`` / ``R.Shape(ndim=2)``: the annotation of a shape value."""
    return ShapeProxy(values, ndim)


class ObjectProxy(StructInfoProxy):
    def as_struct_info(self, names: dict | None = None) -> ObjectStructInfo:
        return ObjectStructInfo()


def Object() -> ObjectProxy:  # noqa: N802
    """``R.Object``: any value."""
    return ObjectProxy()


class PrimProxy(StructInfoProxy):
    def __init__(self, dtype=None, value=None):
        if dtype is None and value is None:
            raise TVMTypeError("R.Prim needs a dtype or a value: R.Prim(\"int64\") or R.Prim(value=n)")
        self.dtype = None if dtype is None else _check_dtype(dtype)
        self.value = value

    def get_symbolic_vars(self) -> list[str]:
        v = self.value
        return [v] if isinstance(v, str) and v.isidentifier() else []

    def as_struct_info(self, names: dict | None = None) -> PrimStructInfo:
        if self.value is None:
            return PrimStructInfo(self.dtype)
        value = eval_dim(self.value, names)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            # as TVM's PrimStructInfo: the given dtype, else relax's default int64
            value = convert(value, self.dtype or ("int64" if isinstance(value, int) else None))
        value = convert(value)
        if self.dtype and value.dtype != self.dtype:
            raise TVMValueError(f"R.Prim got dtype {self.dtype!r} but a value of dtype {value.dtype}")
        return PrimStructInfo(self.dtype or value.dtype, value)


def Prim(dtype=None, value=None) -> PrimProxy:  # noqa: N802
    """``R.Prim("int64")`` / ``R.Prim(value=n)``: the annotation of a scalar value."""
    return PrimProxy(dtype, value)


class CallableProxy(StructInfoProxy):
    def __init__(self, params=None, ret=None, purity=None):
        if params is not None and not isinstance(params, (list, tuple)):
            params = [params]
        self.params = None if params is None else [
            p() if callable(p) and not isinstance(p, StructInfoProxy) else p for p in params]
        self.ret = ret() if callable(ret) and not isinstance(ret, StructInfoProxy) else ret
        self.purity = (params is not None) if purity is None else purity

    def get_symbolic_vars(self) -> list[str]:
        out: list[str] = []
        for p in self.params or []:
            if isinstance(p, StructInfoProxy):
                out += [n for n in p.get_symbolic_vars() if n not in out]
        return out

    def as_struct_info(self, names: dict | None = None) -> FuncStructInfo:
        ret = ObjectStructInfo() if self.ret is None else to_struct_info(self.ret, names)
        if self.params is None:
            return FuncStructInfo.opaque_func(ret, purity=self.purity)
        return FuncStructInfo([to_struct_info(p, names) for p in self.params], ret, self.purity)


def Callable(params=None, ret=None, purity=None) -> CallableProxy:  # noqa: N802
    """``R.Callable([R.Tensor((n,), "float32")], R.Tensor((n,), "float32"))``: a function."""
    return CallableProxy(params, ret, purity)


def to_struct_info(value: Any, names: dict | None = None) -> StructInfo:
    """A StructInfo from a StructInfo, a proxy, or a proxy factory used bare (``R.Object``)."""
    if isinstance(value, StructInfo):
        return value
    if isinstance(value, StructInfoProxy):
        return value.as_struct_info(names)
    if any(value is f for f in _FACTORIES):
        return value().as_struct_info(names)
    if value is None:
        return TupleStructInfo([])
    raise TVMTypeError(f"expected a struct info annotation such as R.Tensor((n, 128), \"float32\"), "
                    f"got {value!r}")


def symbolic_var_names(value: Any) -> list[str]:
    """The string dims an annotation introduces (``R.Tensor(("n", 4))`` → ["n"])."""
    if any(value is f for f in _FACTORIES):
        return []
    if isinstance(value, StructInfoProxy):
        return value.get_symbolic_vars()
    return []


_FACTORIES = (Tensor, Tuple, Shape, Object, Callable)
