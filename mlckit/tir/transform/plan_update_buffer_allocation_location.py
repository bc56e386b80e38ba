"""PlanAndUpdateBufferAllocationLocation: allocate each buffer where it is used.

A schedule leaves intermediate buffers where ``T.alloc_buffer`` first put them, usually at
the top of the function, although after ``compute_at`` they may only be used inside one
loop.  As TVM's pass of this name, each buffer a block allocates moves to the lowest common
ancestor of its accesses (``tir.analysis.detect_buffer_access_lca``): the block found there,
or, under a loop, a new opaque block (no iterators, no name) wrapped around the loop's body.
A buffer nothing uses is dropped.  Afterwards ``CompactBufferAllocation`` can shrink each
buffer to what one iteration of the loops around it touches::

    B = T.alloc_buffer((16, 16))                 for i_0 in range(16):
    for i_0 in range(16):                            with T.block(""):
        for j_0 in range(16):            ──►             T.reads(A[i_0, 0:16])
            with T.block(): ... B[i, j] = ...             T.writes(C[i_0, 0:16])
        for j_0 in range(16):                            B = T.alloc_buffer((16, 16))
            with T.block(): ... = B[i, j] ...            for j_0 in range(16): ...

A block's ``T.reads`` / ``T.writes`` no longer list a buffer allocated inside it.  The pass
runs after ``LowerInitBlock`` (a block with ``T.init()`` is refused), as in TVM's pipeline.

Example::

    mod = tvm.tir.transform.PlanAndUpdateBufferAllocationLocation()(mod)
"""

from __future__ import annotations

from mlckit.error import TVMError, TVMTypeError
from mlckit.ir.transform import FunctionPass
from mlckit.tir import expr as E
from mlckit.tir import stmt as S
from mlckit.tir.analysis.block_access_region import get_block_access_region
from mlckit.tir.analysis.buffer_access_lca import detect_buffer_access_lca
from mlckit.tir.function import PrimFunc

from ._pass import make_pass

__all__ = ["PlanAndUpdateBufferAllocationLocation", "plan_update_buffer_allocation_location"]


def _allocations(s, out: list) -> list:
    """The buffers blocks allocate, in the order they are declared."""
    if isinstance(s, S.Block):
        out.extend(s.alloc_buffers)
    if isinstance(s, (S.Stmt,)):
        for name in s.field_names():
            v = getattr(s, name)
            for x in v if isinstance(v, list) else [v]:
                if isinstance(x, S.Stmt):
                    _allocations(x, out)
    return out


class _Locator:
    def __init__(self, func: PrimFunc):
        lca = detect_buffer_access_lca(func)
        params = list((func.buffer_map or {}).values())
        managed = _allocations(func.body, [])
        managed_ids = {id(b) for b in managed}
        self.alloc_at: dict[int, list] = {}  # id(For or Block) -> buffers to allocate there
        for buf in managed:
            if buf in lca and not any(buf is p for p in params):
                self.alloc_at.setdefault(id(lca[buf]), []).append(buf)
        # what a block's regions may name: the parameters, and buffers not allocated by a
        # block (T.decl_buffer); the allocations of enclosing blocks join while inside them
        self.visible = params + [b for b in lca if id(b) not in managed_ids
                                 and not any(b is p for p in params)]

    def stmt(self, s):
        if isinstance(s, S.For):
            allocs = self.alloc_at.get(id(s), [])
            n = len(self.visible)
            self.visible.extend(allocs)
            body = self.stmt(s.body)
            del self.visible[n:]
            if allocs:
                body = self.inject(body, allocs)
            return s if body is s.body else s.replace(body=body)
        if isinstance(s, S.BlockRealize):
            block = self.block(s.block)
            return s if block is s.block else s.replace(block=block)
        if isinstance(s, S.SeqStmt):
            seq = [self.stmt(x) for x in s.seq]
            return s if all(a is b for a, b in zip(seq, s.seq)) else s.replace(seq=seq)
        changes = {}
        for name in s.field_names():
            v = getattr(s, name)
            if isinstance(v, S.Stmt):
                nv = self.stmt(v)
                if nv is not v:
                    changes[name] = nv
        return s.replace(**changes) if changes else s

    def block(self, block: S.Block) -> S.Block:
        if block.init is not None:
            raise TVMError(f"PlanAndUpdateBufferAllocationLocation: block "
                           f"{block.name_hint!r} still has a T.init(); run "
                           "tir.transform.LowerInitBlock() first, as TVM's pipeline does")
        allocs = self.alloc_at.get(id(block), [])
        n = len(self.visible)
        self.visible.extend(allocs)
        self.visible.extend(mb.buffer for mb in block.match_buffers)
        body = self.stmt(block.body)
        del self.visible[n:]
        reads = [r for r in block.reads if any(r.buffer is b for b in self.visible)]
        writes = [w for w in block.writes if any(w.buffer is b for b in self.visible)]
        if (body is block.body and len(reads) == len(block.reads)
                and len(writes) == len(block.writes)
                and [id(b) for b in allocs] == [id(b) for b in block.alloc_buffers]):
            return block
        return block.replace(body=body, reads=reads, writes=writes, alloc_buffers=list(allocs))

    def inject(self, body, allocs: list) -> S.BlockRealize:
        """``body`` in an opaque block allocating ``allocs``, reading and writing what
        ``body`` reads and writes of the buffers visible here."""
        block = S.Block([], [], [], "", body, None, list(allocs))
        reads, writes = get_block_access_region(block, self.visible)
        return S.BlockRealize([], E.IntImm("bool", 1),
                              block.replace(reads=reads, writes=writes))


def plan_update_buffer_allocation_location(func: PrimFunc) -> PrimFunc:
    """``func`` with each block-allocated buffer allocated at the lowest common ancestor
    of its accesses (see the module's docstring).

    >>> from mlckit.script import tir as T
    >>> @T.prim_func
    ... def f(a: T.Buffer((4, 4), "float32"), c: T.Buffer((4, 4), "float32")):
    ...     b = T.alloc_buffer((4, 4))
    ...     for i in range(4):
    ...         for j in range(4):
    ...             with T.block("B"):
    ...                 vi, vj = T.axis.remap("SS", [i, j])
    ...                 b[vi, vj] = a[vi, vj]
    ...         for j in range(4):
    ...             with T.block("C"):
    ...                 vi, vj = T.axis.remap("SS", [i, j])
    ...                 c[vi, vj] = b[vi, vj]
    >>> planned = plan_update_buffer_allocation_location(f)
    >>> loop_i = planned.body.block.body
    >>> [b.name for b in loop_i.body.block.alloc_buffers]
    ['b']
    """
    if not isinstance(func, PrimFunc):
        raise TVMTypeError(f"PlanAndUpdateBufferAllocationLocation expects a tir.PrimFunc, "
                           f"got {type(func).__name__}")
    body = _Locator(func).stmt(func.body)
    return func if body is func.body else func.replace(body=body)


def PlanAndUpdateBufferAllocationLocation() -> FunctionPass:  # noqa: N802 - TVM's name
    """The pass moving each buffer's allocation to where it is used, as
    ``tvm.tir.transform.PlanAndUpdateBufferAllocationLocation``.

    >>> import mlckit as tvm
    >>> tvm.tir.transform.PlanAndUpdateBufferAllocationLocation().info.name
    'PlanAndUpdateBufferAllocationLocation'
    """
    return make_pass("PlanAndUpdateBufferAllocationLocation",
                     plan_update_buffer_allocation_location)
