"""Relax operators (names as in ``tvm.relax.op``)."""

from . import (
    binary,
    builtin,
    create,
    datatype,
    index,
    linear_algebra,
    manipulate,
    memory,
    nn,
    op_attrs,
    search,
    statistical,
    ternary,
    unary,
    vm,
)
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
from .create import full, full_like, ones, ones_like, zeros, zeros_like
from .datatype import astype
from .index import strided_slice, take
from .linear_algebra import linear, matmul
from .manipulate import (
    broadcast_to,
    concat,
    expand_dims,
    flatten,
    permute_dims,
    reshape,
    split,
    squeeze,
)
from .search import argmax, argmin, where
from .statistical import max, mean, min, prod, sum  # noqa: A004 - TVM's names
from .ternary import ewise_fma
from .unary import (  # noqa: A004 - TVM's names shadow builtins here
    abs,
    acos,
    asin,
    atan,
    ceil,
    clip,
    cos,
    cosh,
    erf,
    exp,
    floor,
    isfinite,
    isinf,
    isnan,
    log,
    negative,
    round,
    rsqrt,
    sigmoid,
    sign,
    sin,
    sinh,
    sqrt,
    square,
    tan,
    tanh,
    trunc,
)

__all__ = ["StructInfoError", "assert_op", "call_dps_packed", "call_packed", "call_pure_packed",
           "call_tir", "null_value", "print", "shape_of", "builtin", "memory", "vm",
           "call_builtin_with_ctx", "op_attrs", "binary", "create", "datatype", "ternary", "unary",
           *binary.__all__, *create.__all__, *datatype.__all__, *ternary.__all__, *unary.__all__,
           "nn", "linear_algebra", "linear", "matmul", "manipulate", "broadcast_to", "concat",
           "expand_dims", "flatten", "permute_dims", "reshape", "split", "squeeze", "index",
           "strided_slice", "take", "search", "argmax", "argmin", "statistical", "max", "mean",
           "min", "prod", "sum", "where"]
