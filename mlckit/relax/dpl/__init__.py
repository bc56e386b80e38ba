"""A small dataflow pattern language (TVM's ``tvm.relax.dpl``): describe a subgraph, match it.

A pattern is built from ``wildcard()`` (anything), ``is_const()`` (a constant),
``is_op("relax.add")(a, b)`` (a call of that operator on arguments matching ``a``, ``b``),
``is_tuple_get_item(p, i)`` and ``p | q`` (either).  ``pattern.match(expr)`` says whether
``expr`` has that shape; with ``var2val`` (a variable's bound value) it looks through the
variables of a dataflow block, so a pattern spans several bindings::

    from mlckit.relax.dpl import is_op, wildcard

    pat = is_op("relax.nn.relu")(is_op("relax.add")(is_op("relax.matmul")(wildcard(),
                                                                         wildcard()),
                                                    wildcard()))
    pat.match(relu_var, var2val=bindings)   # True for relu(add(matmul(x, w), b))

This is the part of TVM's language that the library patterns of ``relax.backend`` use.
"""

from .pattern import (
    CallPattern,
    ConstantPattern,
    DFPattern,
    ExprPattern,
    OrPattern,
    TupleGetItemPattern,
    WildcardPattern,
    is_const,
    is_op,
    is_tuple_get_item,
    match_bindings,
    wildcard,
)

__all__ = ["CallPattern", "ConstantPattern", "DFPattern", "ExprPattern", "OrPattern",
           "TupleGetItemPattern", "WildcardPattern", "is_const", "is_op", "is_tuple_get_item",
           "match_bindings", "wildcard"]
