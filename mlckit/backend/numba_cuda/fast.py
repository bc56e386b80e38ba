"""The fast path without a GPU: thread-bound TIR run on the CPU through ``numba_cpu``.

TIR's meaning is sequential: a loop bound to ``threadIdx.x`` is still a loop, and the
barriers a GPU needs only make the parallel execution agree with it.  So the reference result
of a GPU schedule is the schedule run as loops.  Here the GPU-lowered PrimFunc (shared
buffers compacted to one copy per thread block, local ones to one per thread) goes through
``tir.transform.ThreadBindingsToLoops`` (each kernel's outermost ``blockIdx`` loop a
``prange``, the other bound loops plain loops) and is built by numba_cpu.

Example::

    f = cpu_build(lowered, "main")     # a numba_cpu function; f.source is its Python
"""

from __future__ import annotations

from mlckit.tir.transform.thread_bindings_to_loops import thread_bindings_to_loops

from ..numba_cpu import NumbaCompileError
from ..numba_cpu import build as numba_build

__all__ = ["cpu_build"]


def cpu_build(func, name: str, fastmath: bool = False):
    """The numba_cpu build of the GPU-lowered ``func``: blocks in parallel where Numba
    accepts it, else all serial (the same result).  numba_cpu lowers it with TVM's pipeline
    (the loops ``pragma_auto_unroll_max_step`` picks stay loops: written out, dlight's
    matmul took Numba 310 s, as loops 1 s)."""
    try:
        return numba_build(thread_bindings_to_loops(func, parallel=True), name, fastmath=fastmath)
    except NumbaCompileError:
        return numba_build(thread_bindings_to_loops(func, parallel=False), name, fastmath=fastmath)
