"""TOPI, the tensor operator inventory (``tvm.topi``): common operators written in ``te``.

    from mlckit import te, topi

    X = te.placeholder((4, 8), name="X")
    W = te.placeholder((16, 8), name="W")
    b = te.placeholder((16,), name="b")
    Y = topi.nn.relu(topi.add(topi.nn.dense(X, W), b))
    func = te.create_prim_func([X, W, b, Y])

Names, argument orders, compute names (``T_add``, ``T_matmul_NT``, ``compute``) and tags
are TVM's, so the TIR they produce prints as TVM's does.  Relax's legalization builds on them.
"""

from . import nn, tag
from .broadcast import (
    add,
    broadcast_to,
    divide,
    equal,
    floor_divide,
    floor_mod,
    greater,
    greater_equal,
    less,
    less_equal,
    logical_and,
    logical_or,
    maximum,
    minimum,
    mod,
    multiply,
    not_equal,
    power,
    subtract,
)
from .indexing import strided_slice, take
from .math import (  # noqa: A004 - TVM's names shadow builtins here
    abs,
    acos,
    asin,
    atan,
    cast,
    ceil,
    clip,
    cos,
    cosh,
    erf,
    exp,
    floor,
    identity,
    isfinite,
    isinf,
    isnan,
    log,
    log2,
    log10,
    negative,
    round,
    rsqrt,
    sigmoid,
    sign,
    sin,
    sinh,
    sqrt,
    tan,
    tanh,
    trunc,
)
from .reduction import (  # noqa: A004 - TVM's names shadow builtins here
    all,
    any,
    argmax,
    argmin,
    max,
    min,
    prod,
    sum,
)
from .tensor import full, full_like
from .transform import (
    concatenate,
    expand_dims,
    matmul,
    reshape,
    split,
    squeeze,
    transpose,
)
