"""Relax: the graph-level IR of mlckit (names as in ``tvm.relax``)."""

from . import expr_functor, transform
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
)
from .struct_info import (
    FuncStructInfo,
    ObjectStructInfo,
    PrimStructInfo,
    ShapeStructInfo,
    StructInfo,
    TensorStructInfo,
    TupleStructInfo,
)


def __getattr__(name: str):
    # relax.VirtualMachine / relax.Executable live in mlckit.runtime.vm (above relax):
    # imported on first use, as the layering rule asks.
    if name in ("VirtualMachine", "Executable"):
        import importlib

        return getattr(importlib.import_module("mlckit.runtime.vm"), name)
    raise AttributeError(f"module 'mlckit.relax' has no attribute {name!r}")
