"""Relax operators (names as in ``tvm.relax.op``)."""

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

__all__ = ["StructInfoError", "assert_op", "call_dps_packed", "call_packed", "call_pure_packed",
           "call_tir", "null_value", "print", "shape_of"]
