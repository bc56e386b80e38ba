"""GPU schedule rules (``tvm.dlight.gpu``): ``Matmul``, ``GEMV``, ``Reduction``,
``GeneralReduction`` and ``Fallback``, tried in that order by
``ApplyDefaultSchedule(Matmul(), GEMV(), Reduction(), GeneralReduction(), Fallback())``;
and ``LowBatchGEMV`` (a symbolic-batch matrix product as GEMVs), ``Transpose`` (a 2-D
transpose through a shared tile) and ``RMSNorm`` (a thread block per row), which TVM's
DLight tutorial lists in its rule catalog."""

from .base import GPUScheduleRule
from .fallback import Fallback
from .gemv import GEMV
from .general_reduction import GeneralReduction
from .low_batch_gemv import LowBatchGEMV
from .matmul import Matmul
from .reduction import Reduction
from .rmsnorm import RMSNorm
from .transpose import Transpose

__all__ = ["GEMV", "Fallback", "GPUScheduleRule", "GeneralReduction", "LowBatchGEMV", "Matmul",
           "RMSNorm", "Reduction", "Transpose"]
