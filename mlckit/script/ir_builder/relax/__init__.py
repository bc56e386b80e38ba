"""IRBuilder for the Relax dialect (``R.function()``, ``R.emit``, ``R.dataflow()`` …)."""

from . import frame, ir, struct_info
from .frame import BlockFrame, ElseFrame, FunctionFrame, IfFrame, ThenFrame
from .ir import *  # noqa: F403
from .struct_info import (
    Callable,
    Object,
    Prim,
    Shape,
    StructInfoProxy,
    Tensor,
    Tuple,
    to_struct_info,
)
