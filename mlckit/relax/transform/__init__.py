"""Relax passes (names as in ``tvm.relax.transform``), one module per pass.

The VM lowering pipeline that ``relax.build`` runs (as TVM's default pipeline, minus the
passes mlckit does not need)::

    LegalizeOps → ToNonDataflow → CallTIRRewrite → StaticPlanBlockMemory → LowerAllocTensor → VMShapeLower

Every pass is an ``mlckit.transform.Pass``: call it on a module, or put it in a
``Sequential``::

    mod = relax.transform.CallTIRRewrite()(relax.transform.ToNonDataflow()(mod))
"""

from mlckit.ir.transform import FunctionPass, function_pass

from .bind_params import BindParams
from .call_tir_rewrite import CallTIRRewrite
from .legalize_ops import LegalizeOps
from .lower_alloc_tensor import LowerAllocTensor
from .static_plan_block_memory import StaticPlanBlockMemory
from .to_non_dataflow import ToNonDataflow
from .vm_shape_lower import VMShapeLower

__all__ = ["BindParams", "CallTIRRewrite", "FunctionPass", "LegalizeOps", "LowerAllocTensor",
           "StaticPlanBlockMemory", "ToNonDataflow", "VMShapeLower", "function_pass"]
