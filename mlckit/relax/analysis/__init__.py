"""Relax analyses: struct-info deduction and well-formedness.

``infer_struct_info(expr)`` is what ``expr.struct_info`` computes (and caches) for every
expression that is not a Var::

    call = R.call_tir(gv, (x,), R.Tensor((n, 128), "float32"))
    infer_struct_info(call)        # TensorStructInfo([n, 128], "float32")

``well_formed(mod_or_func)`` checks the rules TVM's ``relax.analysis.well_formed`` checks
(see ``well_formed.py``); ``remove_all_unused(func)`` drops dead bindings.
"""

from .remove_all_unused import contains_impure_call, remove_all_unused
from .struct_info import (
    StructInfoError,
    collect_tir_vars,
    derive_call_ret_struct_info,
    describe_struct_info,
    erase_to_well_defined,
    infer_struct_info,
    is_base_of,
    is_leaf,
    statically_compatible,
    struct_info_lca,
    substitute_tir_vars,
)
from .well_formed import check_well_formed, well_formed

__all__ = [
    "StructInfoError", "check_well_formed", "collect_tir_vars", "contains_impure_call",
    "derive_call_ret_struct_info", "describe_struct_info", "erase_to_well_defined",
    "infer_struct_info", "is_base_of", "is_leaf", "remove_all_unused", "statically_compatible",
    "struct_info_lca", "substitute_tir_vars", "well_formed",
]
