"""Relax passes (names as in ``tvm.relax.transform``), one module per pass.

Graph-level optimization (``relax.get_pipeline("zero")`` runs them in this order)::

    LegalizeOps → AnnotateTIROpPattern → FoldConstant → FuseOps → FuseTIR

clean-ups (``DeadCodeElimination``, ``CanonicalizeBindings``, ``ConvertToDataflow``,
``Normalize``, ``LambdaLift``, ``DecomposeOpsForInference``, ``ExpandTupleArguments``,
``RemoveUnusedParameters``, ``BindParams``, ``BindSymbolicVars``), tuned kernels from a
``meta_schedule`` database (``MetaScheduleApplyDatabase``), and the VM lowering that
``relax.build`` runs (``relax.pipeline.default_build_pipeline()``)::

    LegalizeOps → ToNonDataflow → CallTIRRewrite → StaticPlanBlockMemory → LowerAllocTensor
    → VMShapeLower

Every pass is an ``mlckit.transform.Pass``: call it on a module, or put it in a
``Sequential``::

    mod = relax.transform.FuseTIR()(relax.transform.FuseOps()(mod))
"""

from mlckit.ir.transform import FunctionPass, function_pass

from .annotate_tir_op_pattern import AnnotateTIROpPattern
from .bind_params import BindParams
from .bind_symbolic_vars import BindSymbolicVars
from .call_tir_rewrite import CallTIRRewrite
from .canonicalize_bindings import CanonicalizeBindings
from .convert_to_dataflow import ConvertToDataflow
from .dead_code_elimination import DeadCodeElimination
from .decompose_ops import DecomposeOpsForInference
from .expand_tuple_arguments import ExpandTupleArguments
from .fold_constant import FoldConstant
from .fuse_ops import FuseOps
from .fuse_tir import FuseTIR
from .fuse_transpose_matmul import FuseTransposeMatmul
from .lambda_lift import LambdaLift
from .legalize_ops import LegalizeOps
from .lower_alloc_tensor import LowerAllocTensor
from .meta_schedule_apply_database import MetaScheduleApplyDatabase
from .normalize import Normalize
from .remove_unused_parameters import RemoveUnusedParameters
from .static_plan_block_memory import StaticPlanBlockMemory
from .to_non_dataflow import ToNonDataflow
from .vm_shape_lower import VMShapeLower

__all__ = ["AnnotateTIROpPattern", "BindParams", "BindSymbolicVars", "CallTIRRewrite",
           "CanonicalizeBindings", "ConvertToDataflow", "DeadCodeElimination",
           "DecomposeOpsForInference", "ExpandTupleArguments", "FoldConstant", "FunctionPass",
           "FuseOps", "FuseTIR", "FuseTransposeMatmul", "LambdaLift", "LegalizeOps",
           "LowerAllocTensor", "MetaScheduleApplyDatabase", "Normalize",
           "RemoveUnusedParameters", "StaticPlanBlockMemory", "ToNonDataflow", "VMShapeLower",
           "function_pass"]

# library dispatch (relax.backend): pattern-based partitioning and external codegen
from .fuse_ops_by_pattern import FuseOpsByPattern, FusionPattern, PatternCheckContext  # noqa: E402

__all__ += ["FuseOpsByPattern", "FusionPattern", "PatternCheckContext"]
from .run_codegen import RunCodegen  # noqa: E402

__all__ += ["RunCodegen"]
