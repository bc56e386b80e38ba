"""``s_tir``: schedulable TensorIR under the name TVM >= 0.24 gives it (``tvm.s_tir``): the
schedule, its blocks and handles, meta-schedule and dlight, the same objects as mlckit's
``tir.Schedule``, ``tir.Block``, ``mlckit.meta_schedule`` and ``mlckit.dlight`` (no second
implementation).

TVM 0.24 renamed the block ``SBlock`` (``T.sblock`` in TVMScript) and its handle
``SBlockRV``; ``Schedule.get_block`` became ``get_sblock``.  ``s_tir.Schedule`` prints its
trace in those names; ``tir.Schedule`` keeps TVM v0.23's.

Example::

    import mlckit as tvm
    from mlckit import s_tir
    sch = tvm.s_tir.Schedule(MyModule)
    block_Y = sch.get_sblock("Y")
    isinstance(block_Y, s_tir.SBlockRV)                  # True
    isinstance(sch.get(block_Y), s_tir.SBlock)           # True
    from mlckit.s_tir import meta_schedule as ms, dlight as dl
"""

import importlib

from mlckit.tir.buffer import MatchBufferRegion
from mlckit.tir.stmt import Block as SBlock
from mlckit.tir.stmt import BlockRealize as SBlockRealize

from . import _alias, analysis, schedule, transform
from .schedule import (
    ExprRV,
    Instruction,
    InstructionKind,
    LoopRV,
    SBlockRV,
    Schedule,
    ScheduleError,
    ScheduleState,
    StmtSRef,
    Trace,
)

_alias.install()

__all__ = ["ExprRV", "Instruction", "InstructionKind", "LoopRV", "MatchBufferRegion", "SBlock",
           "SBlockRV", "SBlockRealize", "Schedule", "ScheduleError", "ScheduleState",
           "StmtSRef", "Trace", "analysis", "dlight", "meta_schedule", "schedule", "transform"]


def __getattr__(name: str):
    # meta_schedule and dlight are imported on first use (as mlckit.meta_schedule is), as the
    # very modules mlckit.meta_schedule / mlckit.dlight (see _alias).
    if name in ("meta_schedule", "dlight"):
        return importlib.import_module(f"mlckit.s_tir.{name}")
    # TensorIntrin (TVM >= 0.24: s_tir.TensorIntrin) is the one of mlckit.tir, wherever mlckit
    # defines it, once it does.
    if name == "TensorIntrin":
        for home in ("mlckit.tir.schedule", "mlckit.tir"):
            found = getattr(importlib.import_module(home), name, None)
            if found is not None:
                return found
    raise AttributeError(f"module 'mlckit.s_tir' has no attribute {name!r}")
