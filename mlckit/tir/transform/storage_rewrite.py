"""StorageRewrite: allocations whose lifetimes do not overlap share memory, and every
allocation moves to the top of its function (or of its parallel loop / thread launch).

After ``FlattenBuffer`` each intermediate buffer is an ``Allocate`` + ``DeclBuffer`` placed
where it is used.  As TVM's pass of this name, this one

1. *finds lifetimes*: walking the statements in order, a buffer lives from the first
   statement touching it to the last one, both taken at the level of its allocation (a loop
   that uses it counts as a whole, so a buffer allocated outside a loop lives through all of
   its iterations);
2. *plans memory*: when a buffer's life starts, it takes over the memory of a dead buffer of
   the same scope if one is free (the closest size first, within a factor of 16; the memory
   grows to the larger of the two), or else gets new memory.  A statement that reads a
   buffer for the last time and writes a new one element by element
   (``C[i] = 2 * B[i]``) may write in place;
3. *rewrites*: one ``Allocate`` per memory block, at the top of the function (or at the
   start of the enclosing ``T.parallel`` loop or thread launch); each buffer sharing it is
   declared on its memory (``C = T.decl_buffer(16, data=B.data)``); an allocation nothing
   uses disappears::

    for i in range(16):                        B = T.decl_buffer((16,))
        B = T.decl_buffer((16,))               C = T.decl_buffer((16,), data=B.data)
        ...B[i]...                    ──►      for i in range(16): ...B[i]...
    C = T.decl_buffer((16,))                   for i in range(16): C[i] = 2 * B[i]
    for i in range(16): C[i] = 2 * B[i]

As TVM, ``"local"`` (and ``"warp"``) buffers and buffers of at most 32 bits keep their own
memory (registers are the compiler's business), and the buffers of a special memory scope
(a tagged one, ``"local.L0A"``) are packed one after the other into one allocation, their
indices moved by their start.  Unlike TVM, ordinary memory is shared only between buffers
of one dtype, as TVM does for Vulkan and WebGPU: a NumPy array has one element type.  TVM's
rewrite of buffers to vector types (``int32x8``) is not done.

Example::

    mod = tvm.tir.transform.StorageRewrite()(mod)
"""

from __future__ import annotations

import bisect

from mlckit.error import TVMTypeError
from mlckit.ir.node import Node
from mlckit.ir.structural import structural_equal
from mlckit.ir.transform import FunctionPass
from mlckit.tir import dtype as dt
from mlckit.tir import expr as E
from mlckit.tir import stmt as S
from mlckit.tir.function import PrimFunc

from ._pass import make_pass

__all__ = ["StorageRewrite", "storage_rewrite"]

_MATCH_RANGE = 16  # a free block is reused for a buffer from 1/16 to 16 times its size


class _Entry:
    """One statement of the linear sequence: a leaf touching a buffer, or the begin
    (``offset > 0``) or end (``offset < 0``) of a scope (loop, if, let, thread launch)."""

    __slots__ = ("stmt", "offset", "touched")

    def __init__(self, stmt=None):
        self.stmt, self.offset, self.touched = stmt, 0, []


class _Finder:
    """The linear sequence of statements and, per allocated variable, its Allocate and the
    scope level it is allocated at."""

    def __init__(self):
        self.seq: list[_Entry] = []
        self.scopes: list[_Entry] = []
        self.allocs: dict[int, tuple] = {}  # id(var) -> (Allocate, level)
        self.accessed: set[int] = set()  # ids of buffers loaded or stored
        self.scopes_of: dict[int, str] = {}  # id(data var) -> scope of a buffer accessing it
        self.in_thread = False

    def touch(self, var, buffer=None) -> None:
        if buffer is not None:  # the scope of memory declared without a DeclBuffer
            self.scopes_of.setdefault(id(var), buffer.scope or "global")
        info = self.allocs.get(id(var))
        if info is not None and info[1] < len(self.scopes):
            self.scopes[info[1]].touched.append(var)

    def leaf(self, s) -> None:
        self.scopes.append(_Entry())
        if isinstance(s, S.BufferStore):
            self.accessed.add(id(s.buffer))
            for i in s.indices:
                self.expr(i)
            self.expr(s.value)
            self.touch(s.buffer.data, s.buffer)
        else:
            self.expr(s.value)
        e = self.scopes.pop()
        if e.touched:
            e.stmt = s
            self.seq.append(e)

    def scope(self, s, visit) -> None:
        self.scopes.append(_Entry())
        begin = len(self.seq)
        self.seq.append(_Entry(s))
        visit()
        end = _Entry(s)
        end.touched = self.scopes.pop().touched
        end.offset = begin - len(self.seq)
        self.seq[begin].offset = len(self.seq) - begin
        self.seq.append(end)

    def stmt(self, s) -> None:
        if isinstance(s, (S.BufferStore, S.Evaluate)):
            self.leaf(s)
        elif isinstance(s, S.Allocate):
            self.allocs[id(s.buffer_var)] = (s, len(self.scopes))
            for x in s.extents:
                self.expr(x)
            self.stmt(s.body)
        elif isinstance(s, S.DeclBuffer):
            self.stmt(s.body)
        elif isinstance(s, S.SeqStmt):
            for x in s.seq:
                self.stmt(x)
        elif isinstance(s, S.AttrStmt) and s.attr_key == "thread_extent" and not self.in_thread:
            self.in_thread = True
            self.scope(s, lambda: self.fields(s))
            self.in_thread = False
        elif isinstance(s, S.AttrStmt) and s.attr_key in ("virtual_thread", "extern_scope"):
            self.scope(s, lambda: self.fields(s))
        elif isinstance(s, (S.For, S.While, S.IfThenElse, S.AssertStmt, S.LetStmt)):
            self.scope(s, lambda: self.fields(s))
        else:
            self.fields(s)

    def fields(self, node) -> None:
        for name in node.field_names():
            v = getattr(node, name)
            for x in v if isinstance(v, list) else [v]:
                if isinstance(x, S.Stmt):
                    self.stmt(x)
                elif isinstance(x, E.PrimExpr):
                    self.expr(x)

    def expr(self, e) -> None:
        if isinstance(e, E.Var):
            self.touch(e)  # the data pointer itself (T.address_of, an extern call)
        elif isinstance(e, E.BufferLoad):
            self.accessed.add(id(e.buffer))
            for i in e.indices:
                self.expr(i)
            self.touch(e.buffer.data, e.buffer)
        elif isinstance(e, Node) and not isinstance(e, E.IterVar):
            for name in e.field_names():
                v = getattr(e, name)
                for x in v if isinstance(v, list) else [v]:
                    if isinstance(x, E.PrimExpr):
                        self.expr(x)


class _Storage:
    """A block of memory: the allocations placed in it, where it is allocated."""

    def __init__(self, attach, scope: str, dtype: str, nbits: int):
        self.attach, self.scope, self.dtype, self.nbits = attach, scope, dtype, nbits
        self.allocs: list = []


def _elem_bits(dtype: str) -> int:
    lanes = int(dtype.split("x")[1]) if "x" in dtype else 1  # float32x4: 4 lanes
    return 64 if dtype == "handle" else dt.bits(dtype.split("x")[0]) * lanes


def _const_nbits(alloc) -> int:
    total = _elem_bits(alloc.dtype)
    for x in alloc.extents:
        if not isinstance(x, E.IntImm):
            return 0
        total *= x.value
    return total


def _special(scope: str) -> bool:
    """A memory with a tag of its own (``"local.L0A"``): all its buffers of one scope are
    packed into one allocation, as in TVM."""
    tag = scope[scope.find("."):] if "." in scope else ""
    return tag not in ("", ".dyn", ".workspace", ".vtcm")


def _keeps_own_memory(scope: str, dtype: str, nbits: int) -> bool:
    """Registers and tiny arrays are never shared (TVM: the compiler allocates registers)."""
    tagless = "." not in scope  # "local.L0A": a special memory, planned like global
    return tagless and (scope in ("local", "warp") or dtype == "handle" or 0 < nbits <= 32)


class _Planner:
    def __init__(self, finder: _Finder, scopes: dict):
        self.finder, self.var_scope = finder, scopes
        self.thread = None  # the parallel loop / thread launch being planned
        self.free: list = []  # (nbits, n, storage) sorted by size
        self.sym_free: list = []
        self.storages: list[_Storage] = []
        self.of: dict[int, _Storage] = {}  # id(var) -> its storage
        self.gen: dict[int, list] = {}
        self.kill: dict[int, list] = {}
        self.n = 0

    def liveness(self) -> None:
        seq, seen = self.finder.seq, set()
        for e in reversed(seq):
            for v in e.touched:
                if id(v) not in seen:
                    seen.add(id(v))
                    self.kill.setdefault(id(e.stmt), []).append(v)
        seen = set()
        for i, e in enumerate(seq):
            if e.offset < 0:
                continue
            for v in seq[i + e.offset].touched:
                if id(v) not in seen:
                    seen.add(id(v))
                    self.gen.setdefault(id(e.stmt), []).append(v)

    def plan(self) -> None:
        self.liveness()
        in_place: set[int] = set()
        for e in self.finder.seq:
            gens, kills = self.gen.get(id(e.stmt), []), self.kill.get(id(e.stmt), [])
            if e.offset >= 0:
                detect = len(gens) <= 2
                for var in gens:
                    alloc = self.finder.allocs[id(var)][0]
                    dst = self.in_place(e.stmt, var, alloc, kills, in_place) if detect else None
                    if dst is None:
                        dst = self.find(alloc, self.var_scope.get(id(var), "global"))
                    dst.allocs.append(alloc)
                    self.of[id(var)] = dst
            s = e.stmt
            if isinstance(s, S.AttrStmt) and (s.attr_key in ("thread_extent", "virtual_thread")
                                              or s.attr_key.startswith("pragma_")):
                self.new_scope(s)
            elif isinstance(s, S.For) and s.kind == S.ForKind.PARALLEL \
                    and (self.thread is None or self.thread is s):
                self.new_scope(s)
            if e.offset <= 0:
                for var in kills:
                    if id(var) not in in_place:
                        self.release(var)

    def in_place(self, stmt, var, alloc, kills, in_place):
        for src in kills:
            entry = self.of.get(id(src))
            if id(src) in in_place or entry is None:
                continue
            if (entry.scope == self.var_scope.get(id(var), "global") and entry.attach is
                    self.thread and entry.dtype == alloc.dtype
                    and entry.nbits == _const_nbits(alloc) and _in_place_ok(stmt, var, src)):
                in_place.add(id(src))
                return entry
        return None

    def new_scope(self, s) -> None:
        if self.thread is not None:  # leaving it: its free memory is no longer reachable
            self.free = [f for f in self.free if f[2].attach is not s]
            self.sym_free = [f for f in self.sym_free if f.attach is not s]
            self.thread = None
        else:
            self.thread = s

    def new(self, alloc, scope: str, nbits: int) -> _Storage:
        st = _Storage(self.thread, scope, alloc.dtype, nbits)
        self.storages.append(st)
        return st

    def find(self, alloc, scope: str) -> _Storage:
        nbits = _const_nbits(alloc)
        if _keeps_own_memory(scope, alloc.dtype, nbits) or len(alloc.extents) != 1:
            return self.new(alloc, scope, nbits)

        def fits(st, larger=False):
            if st.attach is not self.thread or st.scope != scope:
                return False
            # a special memory may hold another dtype in a larger block, as in TVM
            return st.dtype == alloc.dtype or (larger and _special(scope))

        if nbits:
            keys = [f[0] for f in self.free]
            lo = bisect.bisect_left(keys, nbits // _MATCH_RANGE)
            mid = bisect.bisect_left(keys, nbits)
            hi = bisect.bisect_right(keys, nbits * _MATCH_RANGE)
            for k in [*range(mid, hi), *range(mid - 1, lo - 1, -1)]:  # larger first
                st = self.free[k][2]
                if fits(st, k >= mid):
                    st.nbits = max(st.nbits, nbits)
                    del self.free[k]
                    return st
        else:
            for k, st in enumerate(self.sym_free):
                if fits(st):
                    del self.sym_free[k]
                    return st
        return self.new(alloc, scope, nbits)

    def release(self, var) -> None:
        st = self.of[id(var)]
        if _keeps_own_memory(st.scope, st.allocs[0].dtype, st.nbits):
            return
        if st.nbits:
            keys = [f[0] for f in self.free]
            self.n += 1
            self.free.insert(bisect.bisect_right(keys, st.nbits), (st.nbits, self.n, st))
        else:
            self.sym_free.append(st)


def _in_place_ok(scope_stmt, dst, src) -> bool:
    """Whether ``stmt`` only reads ``src`` at the index it writes ``dst`` (``dst[i] =
    f(src[i])``): then ``dst`` can take ``src``'s memory within the statement."""
    ok = [True]
    store = [None]

    def expr(e, nest):
        if not ok[0]:
            return
        if isinstance(e, E.Var):
            if e is dst or e is src:
                ok[0] = False
            return
        if isinstance(e, E.BufferLoad):
            if e.buffer.data is dst or nest:
                ok[0] = False
                return
            if e.buffer.data is src:
                st = store[0]
                if st is None or st.value.dtype != e.dtype or len(st.indices) != len(e.indices) \
                        or any(not _same(a, b) for a, b in zip(st.indices, e.indices)):
                    ok[0] = False
                    return
            for i in e.indices:
                expr(i, nest + 1)
            return
        if isinstance(e, Node) and not isinstance(e, E.IterVar):
            for name in e.field_names():
                v = getattr(e, name)
                for x in v if isinstance(v, list) else [v]:
                    if isinstance(x, E.PrimExpr):
                        expr(x, nest)

    def stmt(s):
        if not ok[0]:
            return
        if isinstance(s, S.BufferStore):
            for i in s.indices:
                expr(i, 1)
            store[0] = s if s.buffer.data is dst else None
            expr(s.value, 0)
            store[0] = None
            return
        if isinstance(s, S.AttrStmt) and s.attr_key in ("extern_scope", "volatile_scope"):
            ok[0] = False
            return
        for name in s.field_names():
            v = getattr(s, name)
            for x in v if isinstance(v, list) else [v]:
                if isinstance(x, S.Stmt):
                    stmt(x)
                elif isinstance(x, E.PrimExpr):
                    expr(x, 0)

    if not isinstance(scope_stmt, (S.AttrStmt, S.For, S.IfThenElse, S.While, S.BufferStore)):
        return False
    stmt(scope_stmt)
    return ok[0]


def _same(a, b) -> bool:
    return a is b or structural_equal(a, b)


class _Rewriter:
    def __init__(self, planner: _Planner, accessed: set):
        self.planner, self.accessed = planner, accessed
        self.attach: dict[int, list] = {}  # id(attach stmt or None) -> storages
        self.var_of: dict[int, E.Var] = {}  # id(old var) -> the var of its memory
        self.remap: dict[int, object] = {}  # id(old buffer) -> buffer on the shared memory
        self.hoisted: set[int] = set()
        self.nests: dict[int, list] = {}
        self.offset: dict[int, int] = {}  # id(old var) -> its start, in bits, in packed memory
        for st in planner.storages:
            self.attach.setdefault(id(st.attach), []).append(st)
        for storages in self.attach.values():
            self.pack(storages)
        for st in planner.storages:
            if id(st) in self.nests:  # packed
                continue
            first = st.allocs[0]
            for a in st.allocs:
                self.var_of[id(a.buffer_var)] = first.buffer_var
            same = all(a.dtype == first.dtype and len(a.extents) == len(first.extents)
                       and all(_same(x, y) for x, y in zip(a.extents, first.extents))
                       for a in st.allocs[1:])
            if same:
                nest = [S.Allocate(first.buffer_var, first.dtype, first.extents,
                                   first.condition, S.Evaluate(0), first.annotations,
                                   scope=first.scope)]
                if isinstance(first.body, S.DeclBuffer):  # declared beside its allocation
                    nest.append(S.DeclBuffer(first.body.buffer, S.Evaluate(0)))
                    self.hoisted.add(id(first.body.buffer))
            else:
                bits = _elem_bits(first.dtype)
                size = -(-st.nbits // bits) if st.nbits else first.extents[0]
                nest = [S.Allocate(first.buffer_var, first.dtype,
                                   [E.IntImm(first.extents[0].dtype, size)]
                                   if st.nbits else [size], first.condition, S.Evaluate(0),
                                   first.annotations, scope=first.scope)]
            self.nests[id(st)] = nest

    def pack(self, storages: list) -> None:
        """The storages of each special memory scope in one allocation, one after the other
        (each start aligned to 32 bits), as TVM's merge of tagged memory."""
        groups: dict[str, list] = {}
        for st in storages:
            if _special(st.scope) and st.nbits:
                groups.setdefault(st.scope, []).append(st)
        for group in groups.values():
            if len(group) < 2:
                continue
            head = group[0]
            var, total = head.allocs[0].buffer_var, 0
            for st in group:
                for a in st.allocs:
                    self.var_of[id(a.buffer_var)] = var
                    self.offset[id(a.buffer_var)] = total
                total += -(-st.nbits // 32) * 32
                self.nests[id(st)] = []
            bits = _elem_bits(head.dtype)
            first = head.allocs[0]
            self.nests[id(head)] = [S.Allocate(var, head.dtype,
                                               [E.IntImm(first.extents[0].dtype,
                                                         -(-total // bits))],
                                               first.condition, S.Evaluate(0),
                                               scope=first.scope)]

    def attach_to(self, key, body):
        for st in reversed(self.attach.get(key, [])):
            for node in reversed(self.nests[id(st)]):
                body = node.replace(body=body)
        return body

    def indices(self, buf, indices: list) -> list:
        """``indices`` moved by the buffer's start in packed memory."""
        bits = self.offset.get(id(buf.data), 0)
        if not bits:
            return indices
        last = indices[-1]
        return [*indices[:-1], E.IntImm(last.dtype, bits // _elem_bits(buf.dtype)) + last]

    def buffer(self, buf):
        var = self.var_of.get(id(buf.data))
        if var is None or var is buf.data:
            return buf
        hit = self.remap.get(id(buf))
        if hit is None:
            hit = self.remap[id(buf)] = buf.replace(data=var)
        return hit

    def stmt(self, s):
        if isinstance(s, S.Allocate):
            return self.stmt(s.body)
        if isinstance(s, S.DeclBuffer):
            if id(s.buffer) in self.hoisted or id(s.buffer) not in self.accessed:
                return self.stmt(s.body)
            return S.DeclBuffer(self.buffer(s.buffer), self.stmt(s.body))
        if isinstance(s, S.BufferStore):
            return S.BufferStore(self.buffer(s.buffer), self.expr(s.value),
                                 self.indices(s.buffer, [self.expr(i) for i in s.indices]))
        if isinstance(s, S.SeqStmt):
            return S.stmt_seq(*[self.stmt(x) for x in s.seq])
        changes = {}
        for name in s.field_names():
            v = getattr(s, name)
            if isinstance(v, S.Stmt):
                changes[name] = self.stmt(v)
            elif isinstance(v, E.PrimExpr):
                changes[name] = self.expr(v)
        out = s.replace(**changes)
        if isinstance(s, (S.For, S.AttrStmt)) and id(s) in self.attach:
            out = out.replace(body=self.attach_to(id(s), out.body))
        return out

    def expr(self, e):
        if isinstance(e, E.Var):
            return self.var_of.get(id(e), e)
        if isinstance(e, E.BufferLoad):
            return E.BufferLoad(self.buffer(e.buffer),
                                self.indices(e.buffer, [self.expr(i) for i in e.indices]))
        if not isinstance(e, Node) or isinstance(e, E.IterVar):
            return e
        changes = {}
        for name in e.field_names():
            v = getattr(e, name)
            if isinstance(v, E.PrimExpr):
                nv = self.expr(v)
                if nv is not v:
                    changes[name] = nv
            elif isinstance(v, list) and any(isinstance(x, E.PrimExpr) for x in v):
                nv = [self.expr(x) if isinstance(x, E.PrimExpr) else x for x in v]
                if any(a is not b for a, b in zip(nv, v)):
                    changes[name] = nv
        return e.replace(**changes) if changes else e


def _var_scopes(s, out: dict) -> dict:
    """id(data var) -> storage scope: an Allocate's own, else that of the buffers declared on
    it."""
    if isinstance(s, S.Allocate):
        out[id(s.buffer_var)] = s.scope
    if isinstance(s, S.DeclBuffer):
        out.setdefault(id(s.buffer.data), s.buffer.scope or "global")
    if isinstance(s, Node):
        for name in s.field_names():
            v = getattr(s, name)
            for x in v if isinstance(v, list) else [v]:
                if isinstance(x, S.Stmt):
                    _var_scopes(x, out)
    return out


def storage_rewrite(func: PrimFunc) -> PrimFunc:
    """``func`` with memory shared between allocations that are not alive at once, each
    allocation at the top of its function or parallel scope (see the module's docstring).

    >>> from mlckit.script import tir as T
    >>> @T.prim_func
    ... def f(a: T.Buffer((16,), "float32"), d: T.Buffer((16,), "float32")):
    ...     b = T.decl_buffer((16,))
    ...     c = T.decl_buffer((16,))
    ...     for i in range(16):
    ...         b[i] = a[i]
    ...     for i in range(16):
    ...         c[i] = b[i] * T.float32(2)
    ...     for i in range(16):
    ...         d[i] = c[i]
    >>> print(storage_rewrite(f).script())  # doctest: +NORMALIZE_WHITESPACE
    # from tvm.script import tir as T
    <BLANKLINE>
    @T.prim_func
    def f(a: T.Buffer((16,), "float32"), d: T.Buffer((16,), "float32")):
        b = T.decl_buffer((16,))
        c = T.decl_buffer((16,), data=b.data)
        for i in range(16):
            b[i] = a[i]
        for i in range(16):
            c[i] = b[i] * T.float32(2.0)
        for i in range(16):
            d[i] = c[i]
    """
    if not isinstance(func, PrimFunc):
        raise TVMTypeError(f"StorageRewrite expects a tir.PrimFunc, got {type(func).__name__}")
    finder = _Finder()
    finder.stmt(func.body)
    if not finder.allocs:
        return func
    planner = _Planner(finder, {**finder.scopes_of, **_var_scopes(func.body, {})})
    planner.plan()
    rewriter = _Rewriter(planner, finder.accessed)
    body = rewriter.stmt(func.body)
    # at the top, after the flat views of the parameters (FlattenBuffer's ``A_1``)
    params = {id(b.data) for b in (func.buffer_map or {}).values()}
    views = []
    while isinstance(body, S.DeclBuffer) and id(body.buffer.data) in params:
        views.append(body)
        body = body.body
    body = rewriter.attach_to(id(None), body)
    for view in reversed(views):
        body = view.replace(body=body)
    return func.replace(body=body)


def StorageRewrite() -> FunctionPass:  # noqa: N802 - TVM's name
    """The pass sharing memory between allocations that are not alive at once, as
    ``tvm.tir.transform.StorageRewrite``.

    >>> import mlckit as tvm
    >>> tvm.tir.transform.StorageRewrite().info.name
    'StorageRewrite'
    """
    return make_pass("StorageRewrite", storage_rewrite)
