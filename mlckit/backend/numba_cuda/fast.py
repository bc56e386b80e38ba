"""The fast path without a GPU: thread-bound TIR run on the CPU through ``numba_cpu``.

TIR's meaning is sequential: a loop bound to ``threadIdx.x`` is still a loop, and the
barriers a GPU needs only make the parallel execution agree with it.  So the reference result
of a GPU schedule is the schedule run as loops.  Here the GPU-lowered PrimFunc (shared
buffers compacted to one copy per thread block, local ones to one per thread) becomes an
ordinary one: each kernel's outermost ``blockIdx`` loop runs as ``prange`` (thread blocks are
independent, and each has its own shared buffers), the other bound loops as plain loops.

Example::

    f = cpu_build(lowered, "main")     # a numba_cpu function; f.source is its Python
"""

from __future__ import annotations

from mlckit.tir import stmt as S

from ..numba_cpu import NumbaCompileError
from ..numba_cpu import build as numba_build

__all__ = ["as_cpu_func", "cpu_build"]


def as_cpu_func(func, parallel: bool = True):
    """``func`` with thread-bound loops made plain loops (the outermost ``blockIdx`` loop of
    each kernel parallel when ``parallel``)."""

    def visit(s, in_kernel: bool):
        if isinstance(s, S.For):
            kind = s.kind
            if kind == S.ForKind.THREAD_BINDING:
                tag = s.thread_binding.thread_tag if s.thread_binding is not None else ""
                outer = not in_kernel and tag.startswith("blockIdx") and parallel
                kind = S.ForKind.PARALLEL if outer else S.ForKind.SERIAL
                body = visit(s.body, True)
                return s.replace(kind=kind, thread_binding=None, body=body)
            return s.replace(body=visit(s.body, in_kernel))
        if isinstance(s, S.BlockRealize):
            block = s.block
            init = visit(block.init, in_kernel) if block.init is not None else None
            block = block.replace(body=visit(block.body, in_kernel), init=init)
            return s.replace(block=block)
        changes = {}
        for name in s.field_names():
            v = getattr(s, name)
            if isinstance(v, S.Stmt):
                changes[name] = visit(v, in_kernel)
            elif isinstance(v, list) and v and all(isinstance(x, S.Stmt) for x in v):
                changes[name] = [visit(x, in_kernel) for x in v]
        return s.replace(**changes) if changes else s

    return func.replace(body=visit(func.body, False))


def cpu_build(func, name: str, fastmath: bool = False):
    """The numba_cpu build of the GPU-lowered ``func``: blocks in parallel where Numba
    accepts it, else all serial (the same result).

    Compiled un-lowered for now: lowered, a GPU schedule's thread loops become long
    straight-line code that Numba's parallel passes take minutes over (dlight's matmul: 310 s
    against 10 s)."""
    try:
        return numba_build(as_cpu_func(func, parallel=True), name, fastmath=fastmath,
                           lowered=False)
    except NumbaCompileError:
        return numba_build(as_cpu_func(func, parallel=False), name, fastmath=fastmath,
                           lowered=False)
