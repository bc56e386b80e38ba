"""Relax StructInfo: what is known statically about a value (its shape, dtype, kind).

Example::

    TensorStructInfo([n, 128], "float32")   # R.Tensor((n, 128), "float32")
    TupleStructInfo([ShapeStructInfo(ndim=2), ObjectStructInfo()])
"""

from __future__ import annotations

from typing import Any

from mlckit.error import TVMTypeError
from mlckit.ir.node import Node, node
from mlckit.tir import dtype as dt
from mlckit.tir.expr import IntImm, PrimExpr, StringImm, convert


@node
class StructInfo(Node):
    """Base of struct infos.

    >>> from mlckit import relax
    >>> isinstance(relax.TensorStructInfo([2], "float32"), relax.StructInfo)
    True
    """


@node
class ObjectStructInfo(StructInfo):
    """Any value (``R.Object``).

    >>> from mlckit import relax
    >>> relax.ObjectStructInfo()
    R.Object
    """


@node
class PrimStructInfo(StructInfo):
    """A scalar of ``dtype``, possibly with a known ``value`` (``R.Prim("int64")``).

    >>> from mlckit import relax
    >>> relax.PrimStructInfo("int64")
    R.Prim("int64")
    """

    dtype: str = "int64"
    value: PrimExpr | None = None

    def __post_init__(self):
        self.dtype = dt.check_dtype(self.dtype)


@node
class ShapeStructInfo(StructInfo):
    """A shape value: known ``values`` (PrimExprs) or only its ``ndim`` (-1: unknown).

    >>> from mlckit import relax
    >>> relax.ShapeStructInfo([2, 3]), relax.ShapeStructInfo(ndim=2)
    (R.Shape([2, 3]), R.Shape(ndim=2))
    """

    values: list | None = None
    ndim: int = -1

    def __post_init__(self):
        if self.values is not None:
            self.values = [_as_dim(v) for v in self.values]
            self.ndim = len(self.values)


@node
class TensorStructInfo(StructInfo):
    """A tensor: ``shape`` (a ShapeExpr, a shape Var, or None), ``dtype`` and ``ndim``.

    ``TensorStructInfo([1, 784], "float32")`` accepts a list of dims for the shape.

    >>> from mlckit import relax
    >>> sinfo = relax.TensorStructInfo([1, 784], "float32")
    >>> sinfo, sinfo.ndim, sinfo.dtype
    (R.Tensor((1, 784), dtype="float32"), 2, 'float32')
    """

    shape: Any = None
    dtype: str = "float32"
    ndim: int = -1
    vdevice: Any = None

    def __post_init__(self):
        if self.dtype not in ("", None):
            self.dtype = dt.check_dtype(self.dtype)
        else:
            self.dtype = ""  # unknown dtype
        if isinstance(self.shape, (list, tuple)):
            from .expr import ShapeExpr

            self.shape = ShapeExpr(list(self.shape))
        if self.shape is not None:
            from .expr import ShapeExpr

            if isinstance(self.shape, ShapeExpr):
                self.ndim = len(self.shape.values)
            else:
                sinfo = getattr(self.shape, "struct_info_", None)
                if isinstance(sinfo, ShapeStructInfo):
                    self.ndim = sinfo.ndim

    @property
    def dims(self) -> list | None:
        """The dims as PrimExprs when the shape is a ShapeExpr, else None."""
        from .expr import ShapeExpr

        return list(self.shape.values) if isinstance(self.shape, ShapeExpr) else None


@node
class TupleStructInfo(StructInfo):
    """The struct info of a tuple: one struct info per field.

    >>> from mlckit import relax
    >>> relax.TupleStructInfo([relax.TensorStructInfo([2], "float32"), relax.PrimStructInfo("int64")])
    R.Tuple(R.Tensor((2,), dtype="float32"), R.Prim("int64"))
    """
    fields: list

    def __post_init__(self):
        self.fields = list(self.fields)


@node
class FuncStructInfo(StructInfo):
    """A function's signature: ``params`` struct infos (None: opaque) and ``ret``.

    >>> from mlckit import relax
    >>> t = relax.TensorStructInfo([2], "float32")
    >>> relax.FuncStructInfo([t], t).ret
    R.Tensor((2,), dtype="float32")
    """

    params: list | None
    ret: StructInfo
    purity: bool = True

    @staticmethod
    def opaque_func(ret: StructInfo | None = None, purity: bool = False) -> FuncStructInfo:
        return FuncStructInfo(None, ret or ObjectStructInfo(), purity)


def _as_dim(value) -> PrimExpr:
    """Shape dims are int64 in Relax: Python ints and integer constants of other widths
    become int64 constants (as TVM's ShapeExpr)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return convert(value, "int64")
    value = convert(value)
    if isinstance(value, IntImm) and value.dtype != "int64" and dt.is_int(value.dtype):
        return IntImm("int64", int(value.value))
    if not isinstance(value, PrimExpr) or not dt.is_int(value.dtype):
        hint = (f"; a symbolic size is a TIR variable, tir.Var({value.value!r}, 'int64') (the "
                "strings of R.Tensor annotations are for TVMScript)"
                if isinstance(value, StringImm) else "")
        raise TVMTypeError(f"a shape dimension must be an int or an integer TIR expression, got "
                           f"{value!r}{hint}")
    return value
