"""Relax passes (names as in ``tvm.relax.transform``), one module per pass.

The VM lowering pipeline that ``relax.build`` runs (as TVM's default pipeline, minus the
passes mlckit does not need)::

    ToNonDataflow → CallTIRRewrite → StaticPlanBlockMemory → LowerAllocTensor → VMShapeLower

Every pass is an ``mlckit.transform.Pass``: call it on a module, or put it in a
``Sequential``::

    mod = relax.transform.CallTIRRewrite()(relax.transform.ToNonDataflow()(mod))
"""

from mlckit.ir.transform import FunctionPass, function_pass

from .annotate_tir_op_pattern import AnnotateTIROpPattern
from .bind_params import BindParams
from .bind_symbolic_vars import BindSymbolicVars
from .call_tir_rewrite import CallTIRRewrite
from .canonicalize_bindings import CanonicalizeBindings
from .dead_code_elimination import DeadCodeElimination
from .expand_tuple_arguments import ExpandTupleArguments
from .fold_constant import FoldConstant
from .fuse_ops import FuseOps
from .fuse_tir import FuseTIR
from .lower_alloc_tensor import LowerAllocTensor
from .remove_unused_parameters import RemoveUnusedParameters
from .static_plan_block_memory import StaticPlanBlockMemory
from .to_non_dataflow import ToNonDataflow
from .vm_shape_lower import VMShapeLower

__all__ = ["AnnotateTIROpPattern", "BindParams", "BindSymbolicVars", "CallTIRRewrite",
           "CanonicalizeBindings", "DeadCodeElimination", "ExpandTupleArguments",
           "FoldConstant", "FunctionPass", "FuseOps", "FuseTIR", "LowerAllocTensor", "RemoveUnusedParameters",
           "StaticPlanBlockMemory", "ToNonDataflow", "VMShapeLower", "function_pass"]
