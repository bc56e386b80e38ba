"""Postprocessors: run on each sampled schedule before measuring (TVM's names).

``Postproc.create("llvm")``: ``DisallowDynamicLoop``, ``RewriteParallelVectorizeUnroll``,
``RewriteReductionBlock`` — TVM's CPU list without ``RewriteLayout`` (mlckit measures with
the layouts the function declares).
"""

from .disallow_dynamic_loop import DisallowDynamicLoop
from .postproc import DEFAULTS, Postproc
from .rewrite_parallel_vectorize_unroll import RewriteParallelVectorizeUnroll
from .rewrite_reduction_block import RewriteReductionBlock


def _llvm_postprocs() -> list[Postproc]:
    return [DisallowDynamicLoop(), RewriteParallelVectorizeUnroll(), RewriteReductionBlock()]


DEFAULTS.update({"llvm": _llvm_postprocs, "c": _llvm_postprocs})

__all__ = ["DisallowDynamicLoop", "Postproc", "RewriteParallelVectorizeUnroll",
           "RewriteReductionBlock"]
