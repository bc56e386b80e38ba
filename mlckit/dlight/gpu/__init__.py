"""GPU schedule rules (``tvm.dlight.gpu``): ``Matmul``, ``GEMV``, ``Reduction``,
``GeneralReduction`` and ``Fallback``, tried in that order by
``ApplyDefaultSchedule(Matmul(), GEMV(), Reduction(), GeneralReduction(), Fallback())``."""

from .base import GPUScheduleRule
from .fallback import Fallback
from .gemv import GEMV
from .general_reduction import GeneralReduction
from .low_batch_gemv import LowBatchGEMV
from .matmul import Matmul
from .reduction import Reduction
from .rmsnorm import RMSNorm
from .transpose import Transpose

__all__ = ["GEMV", "Fallback", "GPUScheduleRule", "GeneralReduction", "LowBatchGEMV", "Matmul", "RMSNorm", "Reduction",
           "Transpose"]
