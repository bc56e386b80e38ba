"""ThreadSync: barriers (``T.tvm_storage_sync("shared")``) where the threads of a GPU block
hand shared memory to each other.

TIR's meaning is sequential; on a GPU the threads of a block run at once, so wherever one
thread may read a ``"shared"`` element another wrote (or overwrite one another still has to
read), every thread must first wait at a barrier.  As TVM's ``tir.transform.ThreadSync``
(``thread_storage_sync.cc``), the pass walks each kernel (the code under its outermost
``T.launch_thread``) statement by statement, keeping the shared reads and writes since the
last barrier, and puts a barrier before the first statement that conflicts with them:

- a read after a write, or a write after a read, of the same buffer (two writes need none);
- unless both touch the same single element, indexed by the innermost thread index (each
  thread then reads back only what it wrote itself);
- a loop is simulated twice: what its body leaves unsynchronized at the end meets the next
  iteration's first statements (the fetch of the next tile overwriting the one still read),
  which puts a barrier at the top of the body; inside the loop, an index that moves with the
  loop variable touches a range, not one element.

A barrier must be reached by every thread of the block, so one that would have to go inside
an ``if`` (or a ``while``) is an error, as in TVM; the whole ``if`` counts as one statement
of the sequence around it, so the barrier goes before it when its accesses conflict::

    tx = T.launch_thread("threadIdx.x", 64)             tx = T.launch_thread("threadIdx.x", 64)
    S = T.decl_buffer((64,), scope="shared")            S = T.decl_buffer((64,), scope="shared")
    for k in range(4):                           ──►    for k in range(4):
        S[tx] = A[k * 64 + tx]                              T.tvm_storage_sync("shared")
        for j in range(64):                                 S[tx] = A[k * 64 + tx]
            acc[0] = acc[0] + S[j]                          T.tvm_storage_sync("shared")
                                                            for j in range(64):
                                                                acc[0] = acc[0] + S[j]

Where mlckit differs from TVM, to keep a barrier out of code not every thread runs:

- it also runs on TIR that still has blocks and ``T.thread_binding`` loops (what the CUDA
  backend writes kernels from): the outermost thread-bound loop is the kernel, a bound loop
  nested in it is its thread index (not a loop: no second round), a block with iterators is
  one statement of the sequence (its barrier goes before it), and its ``T.where`` and
  ``T.init()`` are conditions;
- a thread loop or ``T.launch_thread`` shorter than the kernel's launch along its axis (it
  runs under ``if tx < extent``) and a loop whose bounds depend on a thread index are
  conditions too (TVM's UnifyThreadBinding, which mlckit does not have, makes every launch
  of an axis one);
- "the innermost thread index" an element's index must use, for a thread to read back only
  what it wrote, skips thread scopes of extent 1 (one thread: its index is fixed), so that a
  reduction run by one thread per row (``Y[ty] += ...`` under ``threadIdx.x`` of extent 1)
  needs no barrier inside; and two accesses that only thread (0, 0, 0) makes (scopes of
  extent 1 along every ``threadIdx`` axis the kernel launches: a row's maximum added up by
  one thread) never conflict.

``tvm_access_ptr`` arguments are not counted as accesses (TVM counts them); scope
``"global"`` (TVM's global barrier across blocks) is refused.

Example::

    mod = tvm.tir.transform.ThreadSync("shared")(mod)
"""

from __future__ import annotations

from dataclasses import dataclass, field

from mlckit.error import TVMError, TVMValueError
from mlckit.ir.structural import structural_equal
from mlckit.tir import expr as E
from mlckit.tir import stmt as S
from mlckit.tir.expr_vector import Ramp
from mlckit.tir.function import PrimFunc
from mlckit.tir.op import tvm_storage_sync
from mlckit.tir.stmt_functor import node_rewriter
from mlckit.tir.traversal import post_order_visit, substitute, uses_var

from ._pass import make_pass

__all__ = ["ThreadSync", "ThreadSyncError", "thread_sync"]

READ, WRITE, SYNC = "read", "write", "sync"


class ThreadSyncError(TVMError):
    """A barrier is needed where not every thread of the block arrives (under a condition).

    >>> from mlckit.error import TVMError
    >>> from mlckit.tir.transform import ThreadSyncError
    >>> issubclass(ThreadSyncError, TVMError)
    True
    """


@dataclass
class _Access:
    kind: str  # READ, WRITE or SYNC
    data: int | str | None = None  # id of the buffer's data variable
    # per index: the index expression when it is one element, None when a range
    touched: list = field(default_factory=list)
    threads: tuple = ()  # the thread variables around the access, outermost first
    one_thread: bool = False  # only thread (0, 0, 0) of the block runs it


@dataclass
class _Entry:
    stmt: S.Stmt
    accesses: list


def thread_sync(func: PrimFunc, storage_scope: str = "shared") -> PrimFunc:
    """``func`` with a barrier ``T.tvm_storage_sync(storage_scope)`` before each statement
    of a kernel whose ``storage_scope`` accesses conflict with the unsynchronized ones
    before it (see the module's docstring).

    Example::

        func = thread_sync(lowered, "shared")
    """
    if storage_scope == "global" or storage_scope.startswith("global."):
        raise TVMValueError("ThreadSync('global'): a barrier across thread blocks (TVM's "
                            "global barrier) is not supported by mlckit; use 'shared'")
    planner = _Planner(storage_scope)
    planner.stmt(func.body)
    if not planner.syncs:
        return func
    body = _insert(func.body, planner.syncs, storage_scope)
    return func.replace(body=body)


def ThreadSync(storage_scope: str = "shared"):  # noqa: N802 - TVM's name
    """The pass inserting barriers for ``storage_scope``, as
    ``tvm.tir.transform.ThreadSync(storage_scope)``.

    >>> import mlckit as tvm
    >>> tvm.tir.transform.ThreadSync("shared").info.name
    'tir.ThreadSync'
    """
    return make_pass("tir.ThreadSync", lambda f: thread_sync(f, storage_scope))


# -- planning: which statements get a barrier before them --------------------------------------
class _Planner:
    def __init__(self, scope: str):
        self.scope = scope
        self.syncs: set[int] = set()
        self.scopes: list[list[_Entry]] = [[]]
        self.threads: list = []  # thread variables around the current statement
        self.single: set[int] = set()  # ids of those of a scope of one thread
        self.tags: list = []  # (thread tag, whether one thread) of the scopes around
        self.bound: dict = {}  # id of a block iterator around -> its value (in loop variables)
        self.in_device = False
        self.conditions: list[str] = []  # why the current statement may not run on all threads
        self.launch: dict = {}  # thread tag -> the kernel's launch extent along it

    # the statements
    def stmt(self, s):
        handler = getattr(self, f"stmt_{type(s).__name__}", None)
        if handler is not None:
            handler(s)
        elif isinstance(s, (S.Allocate, S.DeclBuffer)):
            self.stmt(s.body)
        elif isinstance(s, S.AssertStmt):
            self.plain(s, [s.condition])
            self.stmt(s.body)

    def stmt_SeqStmt(self, s):
        for x in s.seq:
            self.stmt(x)

    def stmt_BufferStore(self, s):
        accesses = []
        if self.enabled(s.buffer):
            accesses.append(self.access(WRITE, s.buffer, s.indices))
        accesses += self.loads([*s.indices, s.value])
        self.scopes[-1].append(_Entry(s, accesses))

    def stmt_Evaluate(self, s):
        self.plain(s, [s.value])

    def stmt_LetStmt(self, s):
        self.scopes[-1].append(_Entry(s, self.loads([s.value])))
        self.stmt(s.body)

    def plain(self, s, exprs):
        accesses = self.loads(exprs)
        if accesses:
            self.scopes[-1].append(_Entry(s, accesses))

    def stmt_AttrStmt(self, s):
        if s.attr_key == "thread_extent" and isinstance(s.node, E.IterVar):
            self.thread_scope(s, s.node.var, s.node.thread_tag, E.IntImm("int32", 0), s.value)
        else:
            self.stmt(s.body)

    def stmt_For(self, s):
        if s.kind == S.ForKind.THREAD_BINDING and s.thread_binding is not None:
            self.thread_scope(s, s.loop_var, s.thread_binding.thread_tag, s.min, s.extent)
            return
        threads = {id(t) for t in self.threads}
        bounds_vary = self.in_device and uses_var([s.min, s.extent], threads)
        if bounds_vary:
            self.conditions.append(f"the loop over {s.loop_var.name_hint}, whose bounds "
                                   "depend on the thread index")
        self.scopes.append([])
        self.stmt(s.body)
        unit = isinstance(s.extent, E.IntImm) and s.extent.value == 1
        # one iteration has no next one to meet (TVM has dropped such loops by now)
        accesses = self.summarize(self.scopes.pop(), loop=not unit)
        if bounds_vary:
            self.conditions.pop()
        for acc in accesses:  # over the loop, an index moving with it touches a range
            acc.touched = [t if t is None or not _uses(t, s.loop_var)
                           else substitute(t, {s.loop_var: s.min}) if unit else None
                           for t in acc.touched]
        if accesses:
            self.scopes[-1].append(_Entry(s, accesses))

    def stmt_IfThenElse(self, s):
        invariant = _is_thread_invariant(s.condition)
        accesses = self.loads([s.condition])
        if not invariant:
            self.conditions.append(f"the condition `if {_short(s.condition)}`")
        accesses += self.branch(s.then_case)
        if s.else_case is not None:
            accesses += self.branch(s.else_case)
        if not invariant:
            self.conditions.pop()
        self.scopes[-1].append(_Entry(s, accesses))

    def stmt_While(self, s):
        invariant = _is_thread_invariant(s.condition)
        accesses = self.loads([s.condition])
        if not invariant:
            self.conditions.append(f"the condition `while {_short(s.condition)}`")
        accesses += self.branch(s.body)
        if not invariant:
            self.conditions.pop()
        self.scopes[-1].append(_Entry(s, accesses))

    def stmt_BlockRealize(self, s):
        block = s.block
        guarded = not (isinstance(s.predicate, E.IntImm) and s.predicate.value)
        if not block.iter_vars and not guarded and block.init is None:
            self.stmt(block.body)  # the root block, an opaque block: only a scope
            return
        accesses = self.loads([*s.iter_values, s.predicate] if guarded else s.iter_values)
        outer = self.bound
        self.bound = {**outer, **{id(iv.var): substitute(v, outer) if outer else v
                                  for iv, v in zip(block.iter_vars, s.iter_values)}}
        if guarded:
            self.conditions.append(f'the T.where of block "{block.name_hint}"')
        if block.init is not None:
            self.conditions.append(f'the T.init() of block "{block.name_hint}"')
            accesses += self.branch(block.init)
            self.conditions.pop()
        accesses += self.branch(block.body)
        self.bound = outer
        if guarded:
            self.conditions.pop()
        self.scopes[-1].append(_Entry(s, accesses))

    def branch(self, body) -> list:
        self.scopes.append([])
        self.stmt(body)
        return self.summarize(self.scopes.pop(), loop=False)

    def thread_scope(self, s, var, tag: str, lo, extent):
        """A kernel (the outermost thread scope) or a thread index inside one."""
        self.threads.append(var)
        single = isinstance(extent, E.IntImm) and extent.value == 1 and _zero(lo)
        if single:
            self.single.add(id(var))
        self.tags.append((tag, single))
        if not self.in_device:
            self.in_device = True
            self.launch = _launch_extents(s)
            self.scopes.append([])
            self.stmt(s.body)
            self.summarize(self.scopes.pop(), loop=False)  # the kernel's end syncs all
            self.in_device = False
        elif _covers(lo, extent, self.launch.get(tag)):
            self.stmt(s.body)  # every thread runs it: the statements join the sequence
        else:
            self.conditions.append(f"the {tag} scope of {var.name_hint}, shorter than the "
                                   f"kernel's launch of {self.launch.get(tag)} threads")
            accesses = self.branch(s.body)
            self.conditions.pop()
            self.scopes[-1].append(_Entry(s, accesses))
        self.threads.pop()
        self.tags.pop()
        self.single.discard(id(var))

    # the accesses
    def enabled(self, buf) -> bool:
        return self.in_device and (buf.scope or "global") == self.scope

    def access(self, kind, buf, indices) -> _Access:
        # a block's iterators as the loop variables they stand for, as after lowering
        touched = [None if _has_ramp(i) else substitute(i, self.bound) for i in indices]
        threads = tuple(t for t in self.threads if id(t) not in self.single)
        # the "shared.dyn" buffers are views of one dynamic allocation: planned as one
        data = "shared.dyn" if self.scope == "shared.dyn" else id(buf.data)
        return _Access(kind, data, touched, threads, self.one_thread())

    def one_thread(self) -> bool:
        """Whether only thread (0, 0, 0) of the block runs here: along every threadIdx axis
        the kernel launches, the innermost scope is one of one thread."""
        innermost: dict = {}
        for tag, single in self.tags:
            innermost[tag] = single
        return all(innermost.get(tag, False) for tag in self.launch
                   if tag.startswith("threadIdx"))

    def loads(self, exprs) -> list[_Access]:
        found: list[_Access] = []

        def visit(x):
            if isinstance(x, E.BufferLoad) and self.enabled(x.buffer):
                found.append(self.access(READ, x.buffer, x.indices))
            elif isinstance(x, E.Call) and getattr(x.op, "name", "") == "tir.tvm_storage_sync":
                arg = x.args[0] if x.args else None
                if self.in_device and not (isinstance(arg, E.StringImm) and arg.value == "warp"):
                    found.append(_Access(SYNC, threads=tuple(self.threads)))

        post_order_visit(list(exprs), visit)
        return found

    # TVM's planner: one sequence of statements
    def summarize(self, seq: list[_Entry], loop: bool) -> list[_Access]:
        reads: list[_Access] = []
        writes: list[_Access] = []
        for entry in seq:
            sync_before = id(entry.stmt) in self.syncs
            if sync_before:
                reads, writes = [], []
            for acc in entry.accesses:
                if acc.kind == READ and _conflict(writes, acc):
                    sync_before = True
                    break
                if acc.kind == WRITE and _conflict(reads, acc):
                    sync_before = True
                    break
                if acc.kind == SYNC:
                    reads, writes = [], []
            if sync_before:
                reads, writes = [], []
            for acc in entry.accesses:
                if acc.kind == READ:
                    reads.append(acc)
                elif acc.kind == WRITE:
                    writes.append(acc)
                else:
                    reads, writes = [], []
            if sync_before:
                self.insert_before(entry.stmt)
        if loop:  # the next iteration meets what this one leaves unsynchronized
            for entry in seq:
                if id(entry.stmt) in self.syncs or not (reads or writes):
                    break
                needed = False
                for acc in entry.accesses:
                    if (acc.kind == READ and _conflict(writes, acc)) or (
                            acc.kind == WRITE and _conflict(reads, acc)):
                        needed = True
                        break
                    if acc.kind == SYNC:
                        reads, writes = [], []
                if needed:
                    self.insert_before(entry.stmt)
                    break
        # what the sequence exposes: the accesses before its first barrier and after its last
        head: list[_Access] = []
        tail: list[_Access] = []
        synced = 0
        for entry in seq:
            barriers = [None] if id(entry.stmt) in self.syncs else []
            for item in barriers + list(entry.accesses):
                if item is None or item.kind == SYNC:
                    if synced:
                        tail = []
                    else:
                        head.append(_Access(SYNC, threads=tuple(self.threads)))
                    synced += 1
                elif synced:
                    tail.append(item)
                else:
                    head.append(item)
        return [_copy(a) for a in head + tail]

    def insert_before(self, stmt):
        if self.conditions:
            raise ThreadSyncError(
                f"ThreadSync: a barrier T.tvm_storage_sync({self.scope!r}) is needed before "
                f"{_describe(stmt)}, but that statement is under {self.conditions[-1]}, which "
                "not every thread of the block may pass, and a barrier must be reached by all "
                "of them. Move the conflicting shared-memory accesses out of the condition (or "
                "split them into separate statements around it)")
        self.syncs.add(id(stmt))


def _copy(a: _Access) -> _Access:
    return _Access(a.kind, a.data, list(a.touched), a.threads, a.one_thread)


def _conflict(prev: list[_Access], curr: _Access) -> bool:
    return any(_conflicts(p, curr) for p in prev)


def _conflicts(prev: _Access, curr: _Access) -> bool:
    """Whether ``prev`` then ``curr`` (one a read, the other a write) need a barrier between:
    not when both are the same single element, indexed by the innermost thread index."""
    if prev.data != curr.data or (prev.one_thread and curr.one_thread):
        return False
    if len(prev.touched) != len(curr.touched):
        return True
    for p, c in zip(prev.touched, curr.touched):
        if p is None or c is None or not structural_equal(p, c, map_free_vars=False):
            return True
    # the same element: a conflict unless each thread has its own, i.e. the index uses the
    # innermost thread index (of the flat index, as TVM sees it after FlattenBuffer: of
    # some axis of a multi-dimensional one)
    thread = curr.threads[-1] if curr.threads else None
    return thread is not None and not any(_uses(c, thread) for c in curr.touched)


def _uses(e, var) -> bool:
    return uses_var(e, lambda v: v is var)


def _has_ramp(e) -> bool:
    """Whether the index ``e`` is a vector (a ``T.Ramp`` in it): many elements, not one."""
    if "x" not in str(e.dtype):
        return False
    found = []
    post_order_visit(e, lambda x: isinstance(x, Ramp) and found.append(x))
    return bool(found)


def _is_thread_invariant(cond) -> bool:
    return isinstance(cond, E.Call) and getattr(cond.op, "name", "") == "tir.tvm_thread_invariant"


def _describe(stmt) -> str:
    """A statement as an error names it."""
    if isinstance(stmt, S.BlockRealize):
        return f'block "{stmt.block.name_hint}"'
    if isinstance(stmt, S.For):
        return f"the loop over {stmt.loop_var.name_hint}"
    if isinstance(stmt, S.IfThenElse):
        return f"`if {_short(stmt.condition)}`"
    if isinstance(stmt, S.BufferStore):
        indices = ", ".join(_short(i, 30) for i in stmt.indices)
        return f"the store to {stmt.buffer.name}[{indices}]"
    return f"a {type(stmt).__name__}"


def _short(node, limit: int = 70) -> str:
    text = " ".join(str(node).split())
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _launch_extents(kernel) -> dict:
    """Thread tag -> the kernel's launch extent along it: the largest extent bound to it
    (constant), or the one symbolic extent."""
    found: dict = {}

    def visit(x):
        if isinstance(x, S.For) and x.kind == S.ForKind.THREAD_BINDING and x.thread_binding:
            tag, end = x.thread_binding.thread_tag, x.min + x.extent if not _zero(x.min) else x.extent
        elif isinstance(x, S.AttrStmt) and x.attr_key == "thread_extent" \
                and isinstance(x.node, E.IterVar):
            tag, end = x.node.thread_tag, x.value
        else:
            return
        old = found.get(tag)
        if old is None or (isinstance(old, E.IntImm) and isinstance(end, E.IntImm)
                           and end.value > old.value):
            found[tag] = end

    _visit_stmts(kernel, visit)
    return found


def _visit_stmts(s, fn) -> None:
    """Call ``fn`` on every statement under ``s`` (itself included), not on expressions."""
    if s is None:
        return
    fn(s)
    if isinstance(s, S.SeqStmt):
        for x in s.seq:
            _visit_stmts(x, fn)
    elif isinstance(s, S.BlockRealize):
        _visit_stmts(s.block.init, fn)
        _visit_stmts(s.block.body, fn)
    elif isinstance(s, S.IfThenElse):
        _visit_stmts(s.then_case, fn)
        _visit_stmts(s.else_case, fn)
    elif isinstance(getattr(s, "body", None), S.Stmt):
        _visit_stmts(s.body, fn)


def _zero(e) -> bool:
    return isinstance(e, E.IntImm) and e.value == 0


def _covers(lo, extent, launch) -> bool:
    """Whether a thread scope ``[lo, lo + extent)`` covers the kernel's ``launch`` extent."""
    if not _zero(lo) or launch is None:
        return False
    if isinstance(extent, E.IntImm) and isinstance(launch, E.IntImm):
        return extent.value == launch.value
    return structural_equal(extent, launch)


# -- inserting the barriers ---------------------------------------------------------------------
def _insert(body, syncs: set, scope: str):
    """``body`` with a barrier before each statement whose id is in ``syncs``; sequences stay
    flat, as TVM's SeqStmt; expressions are not entered."""

    def rewrite(node):
        if not isinstance(node, S.Stmt):
            return node
        if isinstance(node, S.SeqStmt) and id(node) not in syncs:
            seq = [visit(x) for x in node.seq]
            return node if all(a is b for a, b in zip(seq, node.seq)) else S.stmt_seq(*seq)
        if id(node) not in syncs:
            return None  # rebuilt from its rewritten fields
        changes = {}
        for name in type(node).field_names():
            old = getattr(node, name)
            new = visit(old)
            if new is not old:
                changes[name] = new
        inner = node.replace(**changes) if changes else node
        return S.SeqStmt([S.Evaluate(tvm_storage_sync(scope)), inner])

    visit = node_rewriter(rewrite)
    return visit(body)
