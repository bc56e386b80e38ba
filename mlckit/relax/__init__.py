"""Relax: the graph-level IR of mlckit (names as in ``tvm.relax``)."""

from . import analysis, expr_functor, frontend, op, pipeline, strategy, transform
from .block_builder import BlockBuilder
from .build import build, vm_lowering_pipeline
from .expr import (
    Binding,
    BindingBlock,
    Call,
    Constant,
    DataflowBlock,
    DataflowVar,
    DataTypeImm,
    Expr,
    ExternFunc,
    Function,
    Id,
    If,
    MatchCast,
    PrimValue,
    SeqExpr,
    ShapeExpr,
    StringImm,
    Tuple,
    TupleGetItem,
    Var,
    VarBinding,
    const,
)
from .expr_functor import PyExprMutator, PyExprVisitor
from .op import call_dps_packed, call_pure_packed, call_tir  # as tvm.relax.call_tir …
from .pipeline import get_default_pipeline, get_pipeline, register_pipeline
from .struct_info import (
    FuncStructInfo,
    ObjectStructInfo,
    PrimStructInfo,
    ShapeStructInfo,
    StructInfo,
    TensorStructInfo,
    TupleStructInfo,
)

# TVM >= 0.26 calls the struct infos types (relax.TensorType((n, 128), "float32")).
Type = StructInfo
ObjectType = ObjectStructInfo
ShapeType = ShapeStructInfo
TensorType = TensorStructInfo
TupleType = TupleStructInfo
FuncType = FuncStructInfo


def __getattr__(name: str):
    # relax.VirtualMachine / relax.VMExecutable (relax.Executable: its older name) live in
    # mlckit.runtime.vm, below relax: imported on first use, so that `import mlckit` stays light
    if name in ("VirtualMachine", "VMExecutable", "Executable"):
        from mlckit.runtime import vm

        return getattr(vm, "VMExecutable" if name == "Executable" else name)
    if name in ("backend", "dpl"):  # library dispatch: loaded on first use
        import importlib

        return importlib.import_module(f"mlckit.relax.{name}")
    from mlckit.error import did_you_mean

    raise AttributeError(f"module 'mlckit.relax' has no attribute {name!r}"
                         + did_you_mean(name, [*globals(), "VirtualMachine", "Executable"]))
