"""dlight: default schedules for functions nobody scheduled, as ``tvm.dlight``.

``ApplyDefaultSchedule(*rules)`` is a module pass: for each PrimFunc not yet scheduled it tries
the rules in order and keeps the first schedule one returns.  The GPU rules, most specific
first: ``gpu.Matmul`` (shared-memory tiles, register micro-tiles), ``gpu.GEMV`` (rows on
threadIdx.y, dot products over threadIdx.x), ``gpu.Reduction`` (a thread block per output),
``gpu.GeneralReduction`` (softmax, layer norm: a thread block per row) and ``gpu.Fallback``
(each block's loops on ``blockIdx.x`` / ``threadIdx.x``, one output per thread).  Each rule
returns None for a function it does not match.  ``analysis.normalize_prim_func`` is what the
rules look at; ``ScheduleRule.from_callable`` makes a rule of a function.

Example::

    import mlckit.dlight as dl
    mod = relax.transform.LegalizeOps()(MLP)
    with mlckit.target.Target("cuda"):
        mod = dl.ApplyDefaultSchedule(dl.gpu.Matmul(), dl.gpu.GEMV(), dl.gpu.Reduction(),
                                      dl.gpu.GeneralReduction(), dl.gpu.Fallback())(mod)
    ex = relax.build(mod, target="cuda")
"""

from . import analysis, gpu
from .base import ApplyDefaultSchedule, ScheduleRule

__all__ = ["ApplyDefaultSchedule", "ScheduleRule", "analysis", "gpu"]
