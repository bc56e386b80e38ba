"""TIR statements: stores, loops, blocks and the rest of a PrimFunc's body."""

from __future__ import annotations

from enum import IntEnum
from typing import Any

from mlckit.ir.node import Node, node

from .buffer import Buffer
from .expr import IterVar, PrimExpr, Var, convert


class ForKind(IntEnum):
    """How a loop runs, with TVM's numbering."""

    SERIAL = 0
    PARALLEL = 1
    VECTORIZED = 2
    UNROLLED = 3
    THREAD_BINDING = 4


@node
class Stmt(Node):
    """Base of TIR statements."""


@node
class BufferStore(Stmt):
    """``buffer[indices] = value``."""

    buffer: Buffer
    value: PrimExpr
    indices: list

    def __post_init__(self):
        self.indices = list(self.indices)


@node
class LetStmt(Stmt):
    var: Var
    value: PrimExpr
    body: Stmt

    _def_fields = ("var",)
    _eq_order = ("value", "var", "body")


@node
class AttrStmt(Stmt):
    node: Any
    attr_key: str
    value: Any
    body: Stmt


@node
class AssertStmt(Stmt):
    condition: PrimExpr
    message: PrimExpr
    body: Stmt


@node
class For(Stmt):
    """A loop ``for loop_var in range(min, min + extent)`` of some ``kind``."""

    loop_var: Var
    min: PrimExpr
    extent: PrimExpr
    kind: ForKind
    body: Stmt
    thread_binding: IterVar | None = None
    annotations: dict = None  # type: ignore[assignment]

    _def_fields = ("loop_var",)
    _eq_order = ("min", "extent", "loop_var", "kind", "thread_binding", "annotations", "body")

    def __post_init__(self):
        self.min = convert(self.min, self.loop_var.dtype)
        self.extent = convert(self.extent, self.loop_var.dtype)
        self.kind = ForKind(self.kind)
        self.annotations = dict(self.annotations or {})


@node
class While(Stmt):
    condition: PrimExpr
    body: Stmt


@node
class SeqStmt(Stmt):
    seq: list

    def __post_init__(self):
        self.seq = list(self.seq)

    def __getitem__(self, i):
        return self.seq[i]

    def __len__(self):
        return len(self.seq)


@node
class IfThenElse(Stmt):
    condition: PrimExpr
    then_case: Stmt
    else_case: Stmt | None = None


@node
class Evaluate(Stmt):
    value: PrimExpr

    def __post_init__(self):
        self.value = convert(self.value)


@node
class Allocate(Stmt):
    buffer_var: Var
    dtype: str
    extents: list
    condition: PrimExpr
    body: Stmt
    annotations: dict = None  # type: ignore[assignment]

    _def_fields = ("buffer_var",)


@node
class DeclBuffer(Stmt):
    buffer: Buffer
    body: Stmt

    _def_fields = ("buffer",)


@node
class Block(Stmt):
    """A TensorIR block: iterators, accessed regions, optional init, and a body.

    ``T.block("Y")`` with ``vi, vj, vk = T.axis.remap("SSR", [i, j, k])`` is a Block with three
    iter_vars (two spatial, one reduce) inside a BlockRealize binding them to ``i, j, k``.
    """

    iter_vars: list
    reads: list
    writes: list
    name_hint: str
    body: Stmt
    init: Stmt | None = None
    alloc_buffers: list = None  # type: ignore[assignment]
    match_buffers: list = None  # type: ignore[assignment]
    annotations: dict = None  # type: ignore[assignment]

    _def_fields = ("iter_vars", "alloc_buffers", "match_buffers")
    _eq_ignore = ("name_hint",)  # as TVM: block names are hints, not structure
    _eq_order = (
        "iter_vars", "name_hint", "alloc_buffers", "match_buffers", "reads", "writes",
        "annotations", "init", "body",
    )

    def __post_init__(self):
        self.iter_vars = list(self.iter_vars)
        self.reads = list(self.reads)
        self.writes = list(self.writes)
        self.alloc_buffers = list(self.alloc_buffers or [])
        self.match_buffers = list(self.match_buffers or [])
        self.annotations = dict(self.annotations or {})


@node
class BlockRealize(Stmt):
    """A Block placed in a loop nest: its iterators take ``iter_values`` when ``predicate``."""

    iter_values: list
    predicate: PrimExpr
    block: Block

    def __post_init__(self):
        self.iter_values = list(self.iter_values)
        self.predicate = convert(self.predicate)


def stmt_seq(*stmts) -> Stmt:
    """One statement from several: flattens nested SeqStmts, unwraps a single statement."""
    flat = []
    for s in stmts:
        if isinstance(s, SeqStmt):
            flat.extend(s.seq)
        elif s is not None:
            flat.append(s)
    if len(flat) == 1:
        return flat[0]
    return SeqStmt(flat)
