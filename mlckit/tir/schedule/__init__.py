"""TensorIR schedules: ``Schedule``, its random variables, errors and traces (``tvm.tir.schedule``)."""

from .error import ScheduleError
from .instruction import INSTRUCTION_KINDS, Instruction, InstructionKind
from .rv import BlockRV, ExprRV, LoopRV
from .schedule import Schedule
from .state import ScheduleState, StmtSRef
from .trace import Trace

__all__ = [
    "BlockRV", "ExprRV", "INSTRUCTION_KINDS", "Instruction", "InstructionKind", "LoopRV",
    "Schedule", "ScheduleError", "ScheduleState", "StmtSRef", "Trace",
]
