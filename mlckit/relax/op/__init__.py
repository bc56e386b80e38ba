"""Relax operators (names as in ``tvm.relax.op``)."""

from . import binary, builtin, memory, op_attrs, vm
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
from .binary import (
    add,
    divide,
    equal,
    floor_divide,
    floor_mod,
    greater,
    greater_equal,
    less,
    less_equal,
    maximum,
    minimum,
    mod,
    multiply,
    not_equal,
    power,
    subtract,
)
from .builtin import call_builtin_with_ctx

__all__ = ["StructInfoError", "assert_op", "call_dps_packed", "call_packed", "call_pure_packed",
           "call_tir", "null_value", "print", "shape_of", "builtin", "memory", "vm",
           "call_builtin_with_ctx", "op_attrs", "binary", *binary.__all__]
