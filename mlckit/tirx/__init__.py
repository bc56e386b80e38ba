"""``tirx``: the TensorIR classes and ops under the name TVM >= 0.24 gives them
(``tvm.tirx``), the same objects as :mod:`mlckit.tir` (no second implementation).

TVM 0.24 split ``tvm.tir`` in two: the IR (expressions, statements, ``PrimFunc``,
``Buffer``, intrinsics, ``build``) became ``tvm.tirx``, the schedulable layer (blocks,
``Schedule``, meta-schedule, dlight) ``tvm.s_tir``.  ``tirx`` lists the names TVM 0.27's
``tvm.tirx`` has and mlckit implements, plus ``SBlock`` / ``SBlockRealize`` /
``MatchBufferRegion`` which TVM's main branch moved here from ``s_tir``.

Example::

    import mlckit as tvm
    from mlckit import tirx
    isinstance(MyModule["main"], tirx.PrimFunc)          # True
    lib = tvm.tirx.build(MyModule, target="llvm")
    tirx.exp(tirx.Var("x", "float32"))
"""

from mlckit.tir import analysis, functor, stmt_functor, transform
from mlckit.tir.buffer import Buffer, BufferRegion, MatchBufferRegion, decl_buffer
from mlckit.tir.expr import (
    EQ,
    GE,
    GT,
    LE,
    LT,
    NE,
    Add,
    And,
    BufferLoad,
    Cast,
    Div,
    FloatImm,
    FloorDiv,
    FloorMod,
    IntImm,
    IterVar,
    Let,
    Max,
    Min,
    Mod,
    Mul,
    Not,
    Or,
    Select,
    StringImm,
    Sub,
    Var,
    const,
    convert,
)
from mlckit.tir.function import PrimFunc
from mlckit.tir.functor import PyStmtExprMutator, PyStmtExprVisitor
from mlckit.tir.op import (
    abs,  # noqa: A004 - TVM's names
    acos,
    all,  # noqa: A004
    any,  # noqa: A004
    asin,
    atan,
    atan2,
    call_intrin,
    ceil,
    copysign,
    cos,
    cosh,
    div,
    erf,
    exp,
    exp2,
    exp10,
    floor,
    floordiv,
    floormod,
    fmod,
    hypot,
    if_then_else,
    indexdiv,
    indexmod,
    isfinite,
    isinf,
    isnan,
    log,
    log1p,
    log2,
    log10,
    max,  # noqa: A004
    max_value,
    min,  # noqa: A004
    min_value,
    nearbyint,
    nextafter,
    pow,  # noqa: A004
    power,
    round,  # noqa: A004
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
from mlckit.tir.pipeline import get_default_tir_pipeline, get_tir_pipeline, register_tir_pipeline
from mlckit.tir.schedule.layout import IndexMap
from mlckit.tir.stmt import (
    AssertStmt,
    AttrStmt,
    BufferStore,
    DeclBuffer,
    Evaluate,
    For,
    ForKind,
    IfThenElse,
    LetStmt,
    SeqStmt,
    Stmt,
    While,
    stmt_seq,
)
from mlckit.tir.stmt import Block as SBlock
from mlckit.tir.stmt import BlockRealize as SBlockRealize

from .build import build

# TVM 0.27 folded LetStmt into Bind and kept LetStmt as its alias; here it is the other way.
Bind = LetStmt
