"""Relax expressions that hold bindings: ``VarBinding`` / ``MatchCast``, binding blocks
(``BindingBlock``, ``DataflowBlock``), ``SeqExpr`` and ``Function``.  Their public path is
:mod:`mlckit.relax.expr`, which re-exports them (names as in ``tvm.relax``).
"""

from __future__ import annotations

from dataclasses import field
from typing import Any

from mlckit.ffi.views import view
from mlckit.ir.node import Node, node

from .expr import Expr, Var
from .struct_info import StructInfo


@node
class Binding(Node):
    """Base of bindings.

    >>> from mlckit import relax
    >>> issubclass(relax.VarBinding, relax.Binding), issubclass(relax.MatchCast, relax.Binding)
    (True, True)
    """


@node
class VarBinding(Binding):
    """``var = value``.

    >>> from mlckit import relax
    >>> from mlckit.script import relax as R
    >>> x = relax.Var("x", relax.TensorStructInfo([2, 3], "float32"))
    >>> y = relax.Var("y", x.struct_info)
    >>> binding = relax.VarBinding(y, R.add(x, x))
    >>> binding.var.name_hint, binding.value
    ('y', R.add(x, x))
    """

    var: Var
    value: Expr

    _def_fields = ("var",)
    _eq_order = ("value", "var")


@node
class MatchCast(Binding):
    """``var = R.match_cast(value, struct_info)``: checks value at run time, binds new
    symbolic variables that appear first in ``struct_info``.

    >>> from mlckit import relax, tir
    >>> x = relax.Var("x", relax.TensorStructInfo(ndim=2, dtype="float32"))
    >>> n = tir.Var("n", "int64")
    >>> y = relax.Var("y", relax.TensorStructInfo([n, 4], "float32"))
    >>> cast = relax.MatchCast(y, x, relax.TensorStructInfo([n, 4], "float32"))
    >>> cast.struct_info
    R.Tensor((n, 4), dtype="float32")
    """

    var: Var
    value: Expr
    struct_info: StructInfo

    _def_fields = ("var", "struct_info")
    _eq_order = ("value", "struct_info", "var")


@node
class BindingBlock(Node):
    """A sequence of bindings that may have side effects (outside ``R.dataflow()``).

    >>> from mlckit import relax
    >>> from mlckit.script import relax as R
    >>> x = relax.Var("x", relax.TensorStructInfo([2, 3], "float32"))
    >>> y = relax.Var("y", x.struct_info)
    >>> block = relax.BindingBlock([relax.VarBinding(y, R.add(x, x))])
    >>> [b.var.name_hint for b in block.bindings]
    ['y']
    """
    bindings: list

    def __post_init__(self):
        self.bindings = list(self.bindings)


@node
class DataflowBlock(BindingBlock):
    """A side-effect-free block (``with R.dataflow():``).

    >>> from mlckit import relax
    >>> from mlckit.script import relax as R
    >>> x = relax.Var("x", relax.TensorStructInfo([2, 3], "float32"))
    >>> bb = relax.BlockBuilder()
    >>> with bb.function("main", [x]):
    ...     with bb.dataflow():
    ...         y = bb.emit_output(R.add(x, x))
    ...     _ = bb.emit_func_output(y)
    >>> type(bb.get()["main"].body.blocks[0]).__name__
    'DataflowBlock'
    """


@node
class SeqExpr(Expr):
    """Binding blocks followed by a result expression.

    >>> from mlckit import relax
    >>> from mlckit.script import relax as R
    >>> x = relax.Var("x", relax.TensorStructInfo([2, 3], "float32"))
    >>> bb = relax.BlockBuilder()
    >>> with bb.function("main", [x]):
    ...     y = bb.emit(R.add(x, x))
    ...     _ = bb.emit_func_output(y)
    >>> body = bb.get()["main"].body
    >>> type(body).__name__, len(body.blocks), body.body.name_hint
    ('SeqExpr', 1, 'gv')
    """

    blocks: list
    body: Expr

    def __post_init__(self):
        self.blocks = list(self.blocks)


@node
class Function(Expr):
    """A Relax function (``@R.function``).  ``spelling`` records the TVMScript it was written
    in, for printing only (``"tirx"``: with TVM >= 0.24's ``out_ty=``; see ``PrimFunc``).

    >>> from mlckit.script import relax as R
    >>> @R.function
    ... def double(x: R.Tensor((2,), "float32")):
    ...     return R.add(x, x)
    >>> [p.name_hint for p in double.params], double.ret_struct_info
    (['x'], R.Tensor((2,), dtype="float32"))
    """

    params: list
    body: Expr
    ret_struct_info: StructInfo | None = None
    is_pure: bool = True
    attrs: dict = None  # type: ignore[assignment]
    spelling: str | None = field(default=None, kw_only=True)

    _def_fields = ("params",)
    _eq_ignore = ("spelling",)
    _eq_order = ("params", "ret_struct_info", "is_pure", "attrs", "body")

    def __post_init__(self):
        self.params = list(self.params)
        self.attrs = dict(self.attrs or {})

    def with_attr(self, key: str, value: Any) -> Function:
        return self.replace(attrs={**self.attrs, key: value})

    def without_attr(self, key: str) -> Function:
        return self.replace(attrs={k: v for k, v in self.attrs.items() if k != key})

    def graph(self):
        """The dataflow graph of this function (a ``graphviz.Digraph``; see
        :func:`mlckit.notebook.graph`).  Example: ``MyModule["main"].graph()``."""
        return view("graph", self)  # installed by the notebook layer
