"""PrimFunc: a TensorIR function with buffer parameters."""

from __future__ import annotations

from dataclasses import field
from typing import Any

from mlckit.ffi.views import view
from mlckit.ir.node import Node, node

from .stmt import Stmt


@node
class PrimFunc(Node):
    """A TIR function.  ``params`` are Vars (handles or scalars); ``buffer_map`` binds a
    handle parameter to the Buffer it points to.

    ``spelling`` records which TVMScript the function was written in, so that it prints back
    the same way: ``"tir"`` (TVM <= 0.23: ``T.block``) or ``"tirx"`` (TVM >= 0.24:
    ``@T.prim_func(s_tir=True)``, ``T.sblock``); None: not written in TVMScript.  It is not
    structure: the same function in either spelling is structurally equal.

    >>> from mlckit import tir
    >>> from mlckit.script import tir as T
    >>> @T.prim_func
    ... def copy(a: T.Buffer((4,), "float32"), b: T.Buffer((4,), "float32")):
    ...     for i in range(4):
    ...         with T.block("B"):
    ...             vi = T.axis.spatial(4, i)
    ...             b[vi] = a[vi]
    >>> loop = copy.body.block.body
    >>> type(copy).__name__, [copy.buffer_map[p].name for p in copy.params]
    ('PrimFunc', ['a', 'b'])
    """

    params: list
    body: Stmt
    ret_type: Any = None
    buffer_map: dict = None  # type: ignore[assignment]
    attrs: dict = None  # type: ignore[assignment]
    spelling: str | None = field(default=None, kw_only=True)

    _def_fields = ("params", "buffer_map")
    _eq_ignore = ("spelling",)
    _eq_order = ("params", "buffer_map", "ret_type", "attrs", "body")

    def __post_init__(self):
        self.params = list(self.params)
        self.buffer_map = dict(self.buffer_map or {})
        self.attrs = dict(self.attrs or {})

    __hash__ = object.__hash__

    def with_attr(self, attr_key_or_dict: str | dict, attr_value: Any = None) -> PrimFunc:
        """A copy with one attribute set, or several from a dict (TVM's signature).

        >>> from mlckit.script import tir as T
        >>> @T.prim_func
        ... def copy(a: T.Buffer((4,), "float32"), b: T.Buffer((4,), "float32")):
        ...     for i in range(4):
        ...         b[i] = a[i]
        >>> copy.with_attr("global_symbol", "copy4").attrs["global_symbol"]
        'copy4'
        >>> sorted(copy.with_attr({"global_symbol": "copy4", "tir.noalias": True}).attrs)
        ['global_symbol', 'tir.noalias']
        """
        if isinstance(attr_key_or_dict, dict):
            return self.replace(attrs={**self.attrs, **attr_key_or_dict})
        return self.replace(attrs={**self.attrs, attr_key_or_dict: attr_value})

    def without_attr(self, key: str) -> PrimFunc:
        return self.replace(attrs={k: v for k, v in self.attrs.items() if k != key})

    def graph(self):
        """The loop-nest tree of this function (a ``graphviz.Digraph``; see
        :func:`mlckit.notebook.graph`).  Example: ``mm_relu.graph()``."""
        return view("graph", self)  # installed by the notebook layer
