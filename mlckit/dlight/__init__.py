"""dlight: default schedules for functions nobody scheduled, as ``tvm.dlight``.

``ApplyDefaultSchedule(*rules)`` is a module pass: for each PrimFunc not yet scheduled it tries
the rules in order and keeps the first schedule one returns.  mlckit has one rule,
``gpu.Fallback``, which binds the loops of each block to ``blockIdx.x`` / ``threadIdx.x``: enough
to run a legalized high-level Relax module on a GPU (slowly, one output per thread).

Example::

    import mlckit.dlight as dl
    mod = relax.transform.LegalizeOps()(MLP)
    with mlckit.target.Target("cuda"):
        mod = dl.ApplyDefaultSchedule(dl.gpu.Fallback())(mod)
    ex = relax.build(mod, target="cuda")
"""

from . import gpu
from .base import ApplyDefaultSchedule, ScheduleRule

__all__ = ["ApplyDefaultSchedule", "ScheduleRule", "gpu"]
