"""The schedule's state: the IRModule being scheduled and stable references into it.

A ``StmtSRef`` ("schedulable reference", as in TVM) names one block or loop across
transformations: when a primitive rebuilds a loop (its body changed) the new loop keeps the
old loop's sref; when a primitive removes a loop, its sref becomes invalid.  Primitives
compute a whole new function first and only then ``replace_func``: a failing primitive
leaves the state exactly as it was.
"""

from __future__ import annotations

from mlckit.ir.module import IRModule
from mlckit.tir import stmt as S
from mlckit.tir.function import PrimFunc

from .ir_utils import child_stmts


class StmtSRef:
    """A stable reference to a For or Block of the scheduled module.

    >>> from mlckit import tir
    >>> from mlckit.script import tir as T
    >>> @T.prim_func
    ... def double(a: T.Buffer((8,), "float32"), b: T.Buffer((8,), "float32")):
    ...     for i in range(8):
    ...         with T.block("B"):
    ...             vi = T.axis.spatial(8, i)
    ...             b[vi] = a[vi] * T.float32(2)
    >>> sch = tir.Schedule(double)
    >>> sref = sch.get_sref(sch.get_block("B"))
    >>> sref, sref.parent, sref.stmt.name_hint
    (<StmtSRef block 'B'>, <StmtSRef loop 'i'>, 'B')
    """

    __slots__ = ("stmt", "parent", "func_name", "realize", "removed", "__weakref__")

    def __init__(self, stmt, func_name: str):
        self.stmt = stmt
        self.parent: StmtSRef | None = None
        self.func_name = func_name
        self.realize = None  # for a block: its BlockRealize
        # once removed: (what, name, primitive) — "loop", "i_0", "fuse" — for error messages
        self.removed: tuple[str, str, str | None] | None = None

    @property
    def is_block(self) -> bool:
        return isinstance(self.stmt, S.Block)

    @property
    def is_loop(self) -> bool:
        return isinstance(self.stmt, S.For)

    @property
    def valid(self) -> bool:
        return self.stmt is not None

    def __repr__(self) -> str:
        if self.stmt is None:
            return "<StmtSRef (removed)>"
        if isinstance(self.stmt, S.Block):
            return f"<StmtSRef block {self.stmt.name_hint!r}>"
        return f"<StmtSRef loop {self.stmt.loop_var.name_hint!r}>"


class ScheduleState:
    """The IRModule being scheduled plus the srefs of its blocks and loops.

    >>> from mlckit import tir
    >>> from mlckit.script import tir as T
    >>> @T.prim_func
    ... def double(a: T.Buffer((8,), "float32"), b: T.Buffer((8,), "float32")):
    ...     for i in range(8):
    ...         with T.block("B"):
    ...             vi = T.axis.spatial(8, i)
    ...             b[vi] = a[vi] * T.float32(2)
    >>> sch = tir.Schedule(double)
    >>> state = sch.state
    >>> block = sch.get(sch.get_block("B"))
    >>> type(state).__name__, state.get_sref(block)
    ('ScheduleState', <StmtSRef block 'B'>)
    """

    def __init__(self, mod: IRModule):
        self.mod = mod
        self.primitive: str | None = None  # the primitive now changing the module
        self.stmt2ref: dict[int, StmtSRef] = {}
        self.func_refs: dict[str, list[StmtSRef]] = {}
        for gv, func in mod.functions.items():
            if isinstance(func, PrimFunc):
                self._index(gv.name_hint, func, {})

    def _index(self, func_name: str, func: PrimFunc, reuse: dict) -> None:
        old_refs = self.func_refs.get(func_name, [])
        old_by_id = {id(r.stmt): r for r in old_refs}
        new_refs: list[StmtSRef] = []
        new_table: dict[int, StmtSRef] = {}

        def find_old(node):
            seen = 0
            while node is not None and seen < 1000:
                ref = old_by_id.get(id(node))
                if ref is not None and ref.stmt is node:
                    return ref
                node = reuse.get(id(node))
                seen += 1
            return None

        def visit(s, parent, realize):
            ref = None
            if isinstance(s, (S.For, S.Block)):
                ref = find_old(s)
                if ref is None or id(ref) in claimed:
                    ref = StmtSRef(s, func_name)
                claimed.add(id(ref))
                ref.stmt = s
                ref.parent = parent
                ref.func_name = func_name
                ref.realize = realize if isinstance(s, S.Block) else None
                new_refs.append(ref)
                new_table[id(s)] = ref
                parent = ref
            if isinstance(s, S.BlockRealize):
                visit(s.block, parent, s)
                return
            for c in child_stmts(s):
                # as TVM's sref tree: the statements of a block's T.init() get no srefs, so
                # the blocks in there (after blockize) cannot be looked up or scheduled
                if not (isinstance(s, S.Block) and c is s.init):
                    visit(c, parent, None)

        claimed: set = set()
        visit(func.body, None, None)
        for r in old_refs:
            if id(r) not in claimed:
                if r.stmt is not None:
                    r.removed = (("block", r.stmt.name_hint) if isinstance(r.stmt, S.Block)
                                 else ("loop", r.stmt.loop_var.name_hint)) + (self.primitive,)
                r.stmt = None
                r.parent = None
                r.realize = None
        for r in old_refs:
            self.stmt2ref.pop(id(r.stmt), None)
        for k in [k for k, r in self.stmt2ref.items() if r.func_name == func_name]:
            del self.stmt2ref[k]
        self.stmt2ref.update(new_table)
        self.func_refs[func_name] = new_refs

    def replace_func(self, func_name: str, new_func: PrimFunc, reuse: dict) -> None:
        """Install ``new_func`` and move srefs to the nodes that continue theirs."""
        mod = self.mod.copy()
        mod.update_func(func_name, new_func)
        self.mod = mod
        self._index(func_name, new_func, reuse)

    def get_sref(self, stmt) -> StmtSRef | None:
        return self.stmt2ref.get(id(stmt))

    def func_of(self, sref: StmtSRef) -> PrimFunc:
        return self.mod[sref.func_name]

    def copy(self) -> tuple[ScheduleState, dict]:
        """A copy sharing the (immutable) IR; returns it and a map old sref id -> new sref."""
        new = ScheduleState.__new__(ScheduleState)
        new.mod = self.mod.copy()
        new.primitive = None
        new.stmt2ref = {}
        new.func_refs = {}
        mapping: dict[int, StmtSRef] = {}
        for name, refs in self.func_refs.items():
            out = []
            for r in refs:
                c = StmtSRef(r.stmt, r.func_name)
                c.realize = r.realize
                mapping[id(r)] = c
                out.append(c)
            for r in refs:
                mapping[id(r)].parent = mapping.get(id(r.parent)) if r.parent else None
            new.func_refs[name] = out
            for c in out:
                new.stmt2ref[id(c.stmt)] = c
        return new, mapping
