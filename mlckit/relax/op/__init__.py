"""Relax operators (names as in ``tvm.relax.op``)."""

from . import builtin, memory, vm
from .base import (
    StructInfoError,
    assert_op,
    call_dps_packed,
    call_packed,
    call_pure_packed,
    call_tir,
    null_value,
    print,
    shape_of,
)
from .builtin import call_builtin_with_ctx

__all__ = ["StructInfoError", "assert_op", "call_dps_packed", "call_packed", "call_pure_packed",
           "call_tir", "null_value", "print", "shape_of", "builtin", "memory", "vm",
           "call_builtin_with_ctx"]
