"""Helpers for pattern checks (TVM's ``relax.backend.utils``)."""

from __future__ import annotations

from ..expr import DataflowVar


def has_leaking_intermediate_variables(context) -> bool:
    """Whether a value computed inside the matched region is used outside it (then the
    region cannot become one library call).

    Example::

        def check(ctx): return not has_leaking_intermediate_variables(ctx)
    """
    defined = set(context.matched_bindings)
    root = context.value_to_bound_var[context.matched_expr]
    for var in defined:
        if var is root:
            continue
        if not isinstance(var, DataflowVar):
            return True
        if any(user not in defined for user in context.var_usages.get(var, [])):
            return True
    return False


__all__ = ["has_leaking_intermediate_variables"]
