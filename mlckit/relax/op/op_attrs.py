"""Attributes of Relax operator calls (TVM's ``tvm.relax.op.op_attrs``).

An attrs class is a small ``@node`` dataclass: its fields are compared by structural
equality and printed, in declaration order, as keyword arguments of the call::

    relax.op.astype(x, "float16").attrs        # AstypeAttrs(dtype="float16")
    # prints as  R.astype(x, dtype="float16")

An unknown dtype is spelled ``"void"``, as TVM prints ``DataType::Void()``.
"""

from __future__ import annotations

from mlckit.ir.node import Node, node


@node
class Attrs(Node):
    """Base of operator attributes (TVM's ``tvm.ir.Attrs``)."""


@node
class InitAttrs(Attrs):
    """``full``/``full_like``, ``ones``/``ones_like``, ``zeros``/``zeros_like``: the dtype of
    the created tensor (``"void"``: taken from an input)."""

    dtype: str = "void"


@node
class AstypeAttrs(Attrs):
    """``astype``: the dtype to convert to."""

    dtype: str = "float32"


__all__ = ["Attrs", "AstypeAttrs", "InitAttrs"]
