"""The TIR IRBuilder (``from mlckit.script.ir_builder import tir as T``).

``mlckit.script.tir`` (the ``T`` of scripts) re-exports all of it with ``import *``.
"""

from . import frames
from .compute import compute  # noqa: F401
from .frames import (
    AllocateFrame,
    AssertFrame,
    AttrFrame,
    BlockFrame,
    BlockInitFrame,
    DeclBufferFrame,
    ElseFrame,
    ForFrame,
    IfFrame,
    LaunchThreadFrame,
    LetFrame,
    PrimFuncFrame,
    ThenFrame,
    TIRFrame,
    WhileFrame,
    span_scope,
)
from .ir import (  # noqa: F401
    Assert,
    Else,
    If,
    Let,
    LetStmt,
    Then,
    While,
    alloc_buffer,
    allocate,
    arg,
    attr,
    axis,
    block,
    block_attr,
    boolean,
    buffer,
    buffer_store,
    decl_buffer,
    env_thread,
    evaluate,
    float16,
    float32,
    float64,
    func_attr,
    func_name,
    func_ret,
    grid,
    handle,
    init,
    int8,
    int16,
    int32,
    int64,
    launch_thread,
    let,
    match_buffer,
    meta_var,
    parallel,
    prim_func,
    range_sugar,
    reads,
    sblock,
    sblock_alloc_buffer,
    sblock_attr,
    serial,
    thread_binding,
    uint8,
    uint16,
    uint32,
    uint64,
    unroll,
    var,
    vectorized,
    where,
    writes,
)
from .ir import Buffer_ as Buffer  # noqa: F401

bool = boolean  # noqa: A001 - TVM's T.bool

# TIR expression helpers, as TVM's builder module exposes them (T.max, T.exp, ...)
import functools as _functools  # noqa: E402

from mlckit.tir import op as _op  # noqa: E402
from mlckit.tir.op import *  # noqa: E402,F401,F403 - its __all__: exp, max, floordiv ...


def _drop_dtype(func):
    """``func`` taking (and ignoring) ``dtype=``, as TVM's builder wraps its expression
    helpers: printed scripts say ``T.likely(c, dtype="bool")``; the type follows the operands."""

    @_functools.wraps(func)
    def wrapped(*args, dtype=None, **kwargs):
        return func(*args, **kwargs)

    return wrapped


for _name in ("abs", "acos", "asin", "atan", "atan2", "ceil", "copysign", "cos", "cosh", "erf",
              "exp", "exp2", "exp10", "floor", "floordiv", "floormod", "fmod", "hypot",
              "if_then_else", "isfinite", "isinf", "isnan", "likely", "assume", "log", "log1p",
              "log2", "log10", "nearbyint", "nextafter", "pow", "round", "rsqrt", "shift_left",
              "shift_right", "sigmoid", "sin", "sinh", "sqrt", "tan", "tanh", "trunc",
              "truncdiv", "truncmod"):
    if hasattr(_op, _name):
        globals()[_name] = _drop_dtype(getattr(_op, _name))

# calls leaving TIR (T.call_extern, T.call_packed, T.tvm_access_ptr, T.type_annotation ...)
from .extern import *  # noqa: E402,F401,F403
