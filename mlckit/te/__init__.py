"""Tensor expressions (``tvm.te``): describe a computation per output element, then turn it
into a TensorIR PrimFunc with ``create_prim_func``.

    from mlckit import te

    A = te.placeholder((128, 128), "float32", name="A")
    B = te.placeholder((128, 128), "float32", name="B")
    k = te.reduce_axis((0, 128), "k")
    Y = te.compute((128, 128), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="Y")
    C = te.compute((128, 128), lambda i, j: te.max(Y[i, j], 0), name="C")
    func = te.create_prim_func([A, B, C])      # a tir.PrimFunc named "main"

The scalar math (``te.exp``, ``te.sqrt``, ``te.if_then_else``, ...) is ``mlckit.tir``'s.
"""

from mlckit.tir.op import (  # noqa: F401 - the math TVM's te re-exports from tir
    abs,
    acos,
    asin,
    atan,
    ceil,
    cos,
    cosh,
    erf,
    exp,
    exp2,
    exp10,
    floor,
    floordiv,
    floormod,
    fmod,
    if_then_else,
    isfinite,
    isinf,
    isnan,
    log,
    log1p,
    log2,
    log10,
    max_value,
    min_value,
    nearbyint,
    pow,
    round,
    rsqrt,
    sigmoid,
    sin,
    sinh,
    sqrt,
    tan,
    tanh,
    trunc,
    truncdiv,
    truncmod,
)

from .create_prim_func import create_prim_func
from .operation import compute, const, placeholder, reduce_axis, size_var, thread_axis, var
from .reduce import CommReducer, Reduce, comm_reducer, max, min, sum  # noqa: A004
from .tag import tag_scope
from .tensor import ComputeOp, Operation, PlaceholderOp, ProducerLoad, Tensor

__all__ = [
    "CommReducer", "ComputeOp", "Operation", "PlaceholderOp", "ProducerLoad", "Reduce",
    "Tensor", "comm_reducer", "compute", "const", "create_prim_func", "max", "min",
    "placeholder", "reduce_axis", "size_var", "sum", "tag_scope", "thread_axis", "var",
]
