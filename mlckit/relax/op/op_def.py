"""The shape of a Relax operator: one entry holding everything about it (the xDSL idea).

``@def_op`` turns the operator's constructor into a ``RelaxOperator``: calling it builds the
``relax.Call`` (as ``tvm.relax.op.<name>``); its ``.op`` is the registered ``Op`` (with TVM's
argument names, used in error messages, and its purity); ``@<op>.infer`` registers the
struct-info inference and ``@<op>.legalize`` its default (generic) lowering, a strategy
implementation (``mlckit.relax.strategy``) that ``LegalizeOps`` picks unless a better one
applies. ``@<op>.implement(name, level=…, condition=…, targets=…)`` adds more implementations.

Example (the whole definition of ``astype``)::

    @def_op("relax.astype", arguments=("x",))
    def astype(x, dtype):
        \"\"\"Cast x to dtype: ``R.astype(x, "float16")``.\"\"\"
        return Call(astype.op, [as_expr(x, "relax.astype", "x")], AstypeAttrs(dtype))

    @astype.infer
    def _infer(call):
        return infer_unary(call, out_dtype=call.attrs.dtype)

    @astype.legalize
    def _legalize(bb, call):
        return bb.call_te(topi.cast, call.args[0], call.attrs.dtype)
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence

from mlckit.ir.op import Op, register_op


class RelaxOperator:
    """A Relax operator: callable as its constructor, with its ``Op`` and its registrations.

    Attributes: ``name`` (``"relax.add"``), ``op`` (the ``Op``), ``arguments`` (TVM's
    argument names).  See the module doc for the decorators.
    """

    def __init__(self, name: str, constructor: Callable, arguments: Sequence[str],
                 purity: bool):
        self.name = name
        self.arguments = tuple(arguments)
        self._constructor = constructor
        self.op: Op = register_op(name, num_inputs=len(self.arguments), arguments=self.arguments,
                                  FPurity=purity)
        functools.update_wrapper(self, constructor)

    def __call__(self, *args, **kwargs):
        return self._constructor(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<relax operator {self.name}>"

    @property
    def short_name(self) -> str:
        """The name without its namespace: ``add`` for ``relax.add``, ``relu`` for
        ``relax.nn.relu``."""
        return self.name.rsplit(".", 1)[-1]

    # -- registrations ----------------------------------------------------------------------
    def infer(self, fn: Callable) -> Callable:
        """Register ``fn(call) -> StructInfo`` as the operator's struct-info inference."""
        self.op.set_attr("FInferStructInfo", fn)
        return fn

    def legalize(self, fn: Callable | None = None, **options):
        """Register ``fn(bb, call) -> Expr`` as the generic implementation
        ``<short_name>.generic`` (level 10, every target), TVM's ``FLegalize``."""
        options.setdefault("level", 10)
        name = options.pop("name", f"{self.short_name}.generic")
        if fn is None:
            return lambda f: self.implement(name, **options)(f)
        return self.implement(name, **options)(fn)

    def implement(self, name: str, **options) -> Callable:
        """Decorator: one more implementation of this operator (see
        ``mlckit.relax.strategy.register`` for the options)."""
        from mlckit.relax import strategy

        return strategy.register(self.name, name, **options)


def def_op(name: str, arguments: Sequence[str], purity: bool = True) -> Callable:
    """Decorator making a constructor function a ``RelaxOperator`` registered as ``name``.

    Example::

        @def_op("relax.exp", arguments=("x",))
        def exp(x):
            \"\"\"``e ** x`` element-wise.\"\"\"
            return Call(exp.op, [x])
    """
    return lambda constructor: RelaxOperator(name, constructor, arguments, purity)


__all__ = ["RelaxOperator", "def_op"]
