"""Schedule rules: the built-in search space, one rule per module (TVM's names).

``ScheduleRule.create("llvm")`` lists TVM's CPU defaults in order: ``AutoInline``,
``MultiLevelTiling("SSRSRS", write cache at levels 1-2)``, ``ParallelizeVectorizeUnroll``,
``RandomComputeLocation``.
"""

from .auto_inline import AutoInline
from .multi_level_tiling import MultiLevelTiling, ReuseType
from .parallel_vectorize_unroll import ParallelizeVectorizeUnroll
from .random_compute_location import RandomComputeLocation
from .schedule_rule import DEFAULTS, ScheduleRule


def _llvm_rules() -> list[ScheduleRule]:
    return [
        AutoInline(into_producer=False, into_consumer=True),
        MultiLevelTiling(structure="SSRSRS", max_innermost_factor=64,
                         reuse_write=ReuseType(req="may", levels=[1, 2], scope="global")),
        ParallelizeVectorizeUnroll(max_jobs_per_core=16, max_vectorize_extent=64,
                                   unroll_max_steps=[0, 16, 64, 512], unroll_explicit=True),
        RandomComputeLocation(),
    ]


DEFAULTS.update({"llvm": _llvm_rules, "c": _llvm_rules})

__all__ = ["AutoInline", "MultiLevelTiling", "ParallelizeVectorizeUnroll",
           "RandomComputeLocation", "ReuseType", "ScheduleRule"]
