"""``T.call_extern``, ``T.call_packed``, ``T.tvm_access_ptr`` … in scripts.

The functions of :mod:`mlckit.tir.op_extern`; as in TVM's builder, the calls whose first
argument is a dtype also take it as a keyword (``T.call_extern("tmm16", ..., dtype="int32")``).
"""

from __future__ import annotations

import functools

from mlckit.tir import op_extern as _op
from mlckit.tir.op_extern import address_of, call_packed, tvm_access_ptr, type_annotation


def _dtype_forward(func):
    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        if "dtype" in kwargs:
            args = (kwargs.pop("dtype"), *args)
        return func(*args, **kwargs)

    return wrapped


call_extern = _dtype_forward(_op.call_extern)
call_pure_extern = _dtype_forward(_op.call_pure_extern)
tvm_call_packed = call_packed

__all__ = ["address_of", "call_extern", "call_packed", "call_pure_extern", "tvm_access_ptr",
           "tvm_call_packed", "type_annotation"]
