"""``s_tir.Schedule``: TVM >= 0.24's name for the TensorIR schedule, printing its trace in
TVM 0.27's names.

The schedule is :class:`mlckit.tir.Schedule` itself (every primitive, the same checks); what
differs is the trace's text: ``def apply_trace(sch: s_tir.Schedule)`` and
``sch.get_sblock(...)`` (JSON kind ``"GetSBlock"``), as TVM 0.27 prints it.  A schedule made
through ``tir.Schedule`` keeps printing TVM v0.23's names (``sch.get_block``).

Example::

    from mlckit import s_tir
    sch = s_tir.Schedule(MyModule)
    block_Y = sch.get_sblock("Y")
    i, j, k = sch.get_loops(block_Y)
    sch.split(j, factors=[None, 8])
    print(sch.trace)      # b0 = sch.get_sblock(name="Y", func_name="main") ...
"""

from __future__ import annotations

from mlckit.tir.schedule import schedule as _tir_schedule
from mlckit.tir.schedule import trace as _tir_trace
from mlckit.tir.schedule.error import ScheduleError
from mlckit.tir.schedule.instruction import Instruction, InstructionKind
from mlckit.tir.schedule.rv import BlockRV as SBlockRV
from mlckit.tir.schedule.rv import ExprRV, LoopRV
from mlckit.tir.schedule.state import ScheduleState, StmtSRef

__all__ = ["ExprRV", "Instruction", "InstructionKind", "LoopRV", "SBlockRV", "Schedule",
           "ScheduleError", "ScheduleState", "StmtSRef", "Trace"]


class Trace(_tir_trace.Trace):
    """A schedule's trace, printed in TVM >= 0.24's names.

    Example::

        print(sch.trace)
        # # from tvm import s_tir
        # def apply_trace(sch: s_tir.Schedule) -> None:
        #   b0 = sch.get_sblock(name="Y", func_name="main")
    """

    module_name = "s_tir"
    renamed_kinds = {"GetBlock": ("GetSBlock", "get_sblock")}


class Schedule(_tir_schedule.Schedule):
    """A TensorIR schedule (TVM >= 0.24's ``s_tir.Schedule``); see the module doc.

    Example::

        sch = s_tir.Schedule(MyModule)
        sch.reorder(*sch.get_loops(sch.get_sblock("Y")))
    """

    def __init__(self, mod, *, seed: int | None = None, debug_mask=None,
                 error_render_level: str = "detail", enable_check: bool = True):
        super().__init__(mod, seed=seed, debug_mask=debug_mask,
                         error_render_level=error_render_level, enable_check=enable_check)
        self._trace = Trace()
