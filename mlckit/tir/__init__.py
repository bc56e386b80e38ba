"""TensorIR: the loop-level IR of mlckit (names as in ``tvm.tir``)."""

# pipeline, transform: the lowering passes (tvm.tir.transform, tvm.tir.get_tir_pipeline)
# the traversal toolkit (tvm.tir.stmt_functor, tvm.tir.functor); ir_builder: TVM's legacy builder
from . import dtype, functor, ir_builder, pipeline, stmt_functor, transform
from .buffer import Buffer, BufferRegion, MatchBufferRegion, decl_buffer
from .expr import (
    EQ,
    GE,
    GT,
    LE,
    LT,
    NE,
    Add,
    And,
    BinaryOpExpr,
    BufferLoad,
    Call,
    Cast,
    CmpExpr,
    Div,
    FloatImm,
    FloorDiv,
    FloorMod,
    IntImm,
    IterVar,
    IterVarType,
    Let,
    Max,
    Min,
    Mod,
    Mul,
    Not,
    Or,
    PrimExpr,
    Range,
    RangeByBounds,
    Select,
    SizeVar,
    StringImm,
    Sub,
    Var,
    cast,
    const,
    convert,
)
from .expr_vector import Broadcast, Ramp, vscale
from .function import PrimFunc
from .functor import PyStmtExprMutator, PyStmtExprVisitor
from .op import *  # noqa: F403 - the intrinsics: exp, log, sqrt, ...
from .op import call_intrin, if_then_else, max_value, min_value
from .op_extern import (
    address_of,
    call_extern,
    call_packed,
    call_pure_extern,
    register_extern,
    tvm_access_ptr,
    type_annotation,
)
from .pipeline import get_default_tir_pipeline, get_tir_pipeline, register_tir_pipeline
from .schedule import BlockRV, ExprRV, LoopRV, Schedule, ScheduleError, Trace
from .schedule.layout import IndexMap
from .schedule.tensor_intrin import TensorIntrin
from .stmt import (
    Allocate,
    AssertStmt,
    AttrStmt,
    Block,
    BlockRealize,
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


def __getattr__(name: str):
    # only names tir does not have: say which was meant (tir.Schedul -> tir.Schedule)
    from mlckit.error import did_you_mean

    raise AttributeError(f"module 'mlckit.tir' has no attribute {name!r}"
                         + did_you_mean(name, globals()))


# TVM's Range lives in tvm.ir, built from bounds; its node holds TIR expressions, so TIR
# registers it there (the ir layer cannot import tir)
from mlckit import ir as _ir  # noqa: E402

_ir.Range = RangeByBounds
