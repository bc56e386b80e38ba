"""Argument conversion shared by the allocation ops (builtin / memory / vm)."""

from __future__ import annotations

from mlckit.error import TVMTypeError
from mlckit.tir.expr import IntImm, PrimExpr

from ..expr import DataTypeImm, Expr, PrimValue, ShapeExpr, StringImm
from ..struct_info import ShapeStructInfo, TensorStructInfo
from .base import StructInfoError


def as_shape(value, what: str) -> Expr:
    if isinstance(value, Expr):
        return value
    if isinstance(value, (list, tuple)):
        return ShapeExpr(list(value))
    raise TVMTypeError(f"{what}: expected a shape (R.shape([...]) or a list), got {value!r}")


def as_dtype(value, what: str) -> Expr:
    if isinstance(value, Expr):
        return value
    if isinstance(value, str):
        return DataTypeImm(value)
    raise TVMTypeError(f"{what}: expected a dtype (a string such as \"float32\"), got {value!r}")


def as_int(value, what: str) -> Expr:
    if isinstance(value, Expr):
        return value
    if isinstance(value, (int, PrimExpr)) and not isinstance(value, bool):
        return PrimValue(IntImm("int64", value) if isinstance(value, int) else value)
    raise TVMTypeError(f"{what}: expected an integer, got {value!r}")


def as_str(value, what: str) -> Expr:
    if isinstance(value, Expr):
        return value
    if isinstance(value, str):
        return StringImm(value)
    raise TVMTypeError(f"{what}: expected a string, got {value!r}")


def tensor_sinfo(shape: Expr, dtype: Expr, what: str) -> TensorStructInfo:
    dt = dtype.value if isinstance(dtype, DataTypeImm) else ""
    if isinstance(shape, ShapeExpr):
        return TensorStructInfo(shape, dt)
    sinfo = shape.struct_info
    if not isinstance(sinfo, ShapeStructInfo):
        raise StructInfoError(f"{what}: the shape argument must be a shape, got "
                              f"{type(sinfo).__name__}")
    if sinfo.values is not None:
        return TensorStructInfo(ShapeExpr(list(sinfo.values)), dt)
    return TensorStructInfo(None, dt, sinfo.ndim)
