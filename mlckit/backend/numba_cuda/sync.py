"""Insert ``T.tvm_storage_sync("shared")`` (``cuda.syncthreads()``) where threads of a block
hand shared memory to each other.

TIR's meaning is sequential; on a GPU the threads of a block run at once, so wherever one
thread may read a shared buffer another wrote (or write what another still has to read), all
of them must wait at a barrier first.  As TVM's ``ThreadSync`` pass does, this walks each
kernel's statements in order, remembering which shared buffers were read and written since
the last barrier, and puts one before the first statement that conflicts:

- read after write (the cooperative fetch, then the compute reading the tile);
- write after read (the next iteration's fetch overwriting the tile): a loop's body is walked
  as if its own accesses had just happened, which puts the barrier at the top of the body.

A barrier must be reached by every thread, so it is never put inside a condition (a
``T.where``, an ``if``, a thread loop shorter than the launch): such a statement is handled as
a whole and the barrier goes before it.  Two writes of the same buffer need no barrier (the
fetch's threads write disjoint elements); mlckit does not check which thread reads which
element, so it may add a barrier TVM would prove unnecessary, never omit one it needs.

Example::

    body = insert_syncs(kernel.stmt, {id(b) for b in kernel.shared}, kernel.extents)
"""

from __future__ import annotations

from mlckit.ir.op import Op, register_op
from mlckit.tir import stmt as S
from mlckit.tir.expr import BufferLoad, Call, IntImm, StringImm, Var

__all__ = ["barrier", "insert_syncs"]

register_op("tir.tvm_storage_sync")


def barrier() -> S.Evaluate:
    """``T.tvm_storage_sync("shared")``: every thread of the block waits here."""
    return S.Evaluate(Call("int32", Op.get("tir.tvm_storage_sync"), [StringImm("shared")]))


def insert_syncs(stmt: S.Stmt, shared: set, extents: dict) -> S.Stmt:
    """``stmt`` (one kernel) with barriers before the statements that need them."""
    if not shared:
        return stmt
    return _Sync(shared, extents).run(stmt)


class _State:
    def __init__(self, reads=(), writes=()):
        self.reads, self.writes = set(reads), set(writes)

    def conflicts(self, reads: set, writes: set) -> bool:
        return bool(reads & self.writes) or bool(writes & self.reads)

    def add(self, reads: set, writes: set) -> _State:
        return _State(self.reads | reads, self.writes | writes)


class _Sync:
    def __init__(self, shared: set, extents: dict):
        self.shared = shared
        self.extents = extents
        self.thread_vars: set = set()

    def run(self, stmt):
        out, _ = self.stmt(stmt, _State())
        return S.stmt_seq(*out)

    # -- what a statement touches -----------------------------------------------------------
    def accesses(self, node) -> tuple[set, set]:
        reads, writes = set(), set()

        def walk(x):
            if isinstance(x, BufferLoad) and id(x.buffer) in self.shared:
                reads.add(id(x.buffer))
            elif isinstance(x, S.BufferStore) and id(x.buffer) in self.shared:
                writes.add(id(x.buffer))
            if isinstance(x, (list, tuple)):
                for y in x:
                    walk(y)
            elif hasattr(x, "field_names"):
                for name in x.field_names():
                    walk(getattr(x, name))

        walk(node)
        return reads, writes

    def uses_thread(self, e) -> bool:
        found = False

        def walk(x):
            nonlocal found
            if found:
                return
            if isinstance(x, Var) and id(x) in self.thread_vars:
                found = True
            elif isinstance(x, (list, tuple)):
                for y in x:
                    walk(y)
            elif hasattr(x, "field_names") and not isinstance(x, S.Stmt):
                for name in x.field_names():
                    walk(getattr(x, name))

        walk(e)
        return found

    # -- the walk -----------------------------------------------------------------------------
    def atomic(self, s, state: _State):
        reads, writes = self.accesses(s)
        if not reads and not writes:
            return [s], state
        if state.conflicts(reads, writes):
            return [barrier(), s], _State(reads, writes)
        return [s], state.add(reads, writes)

    def stmt(self, s, state: _State):
        """(statements replacing ``s``, the state after them)."""
        if isinstance(s, S.SeqStmt):
            out = []
            for x in s.seq:
                new, state = self.stmt(x, state)
                out += new
            return [S.stmt_seq(*out)] if out else [], state
        if isinstance(s, S.For):
            return self.loop(s, state)
        if isinstance(s, S.BlockRealize):
            pred = s.predicate
            if s.block.init is not None or not (isinstance(pred, IntImm) and pred.value):
                return self.atomic(s, state)
            pre = []
            if s.block.iter_vars and state.conflicts(*self.accesses(s)):
                pre, state = [barrier()], _State()  # before the block, not inside it
            (body,), state = self.wrap(s.block.body, state)
            return [*pre, s.replace(block=s.block.replace(body=body))], state
        if isinstance(s, (S.LetStmt, S.AttrStmt)):
            (body,), state = self.wrap(s.body, state)
            return [s.replace(body=body)], state
        return self.atomic(s, state)

    def wrap(self, body, state):
        new, state = self.stmt(body, state)
        return [S.stmt_seq(*new) if len(new) != 1 else new[0]], state

    def loop(self, s: S.For, state: _State):
        if s.kind == S.ForKind.THREAD_BINDING:
            tag = s.thread_binding.thread_tag if s.thread_binding is not None else ""
            self.thread_vars.add(id(s.loop_var))
            if not _is_full(s, self.extents.get(tag)):  # runs under ``if tx < extent``
                return self.atomic(s, state)
            (body,), state = self.wrap(s.body, state)  # threads, not iterations: no carry
            return [s.replace(body=body)], state
        if self.uses_thread(s.min) or self.uses_thread(s.extent):
            return self.atomic(s, state)
        reads, writes = self.accesses(s.body)
        if not reads and not writes:
            return [s], state
        out = []
        if state.conflicts(reads, writes):
            out.append(barrier())
            state = _State()
        # the next iteration follows this one: its accesses count as already done
        (body,), end = self.wrap(s.body, state.add(reads, writes))
        out.append(s.replace(body=body))
        return out, end


def _is_full(s: S.For, full) -> bool:
    """Whether the bound loop ``s`` covers its axis's whole launch extent ``full``."""
    from mlckit.ir import structural_equal

    if not (isinstance(s.min, IntImm) and s.min.value == 0) or full is None:
        return False
    if isinstance(full, IntImm) and isinstance(s.extent, IntImm):
        return full.value == s.extent.value
    return structural_equal(full, s.extent)
