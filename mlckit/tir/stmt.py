"""TIR statements: stores, loops, blocks and the rest of a PrimFunc's body."""

from __future__ import annotations

from dataclasses import field
from enum import IntEnum
from typing import Any

from mlckit.ir.node import Node, node

from .buffer import Buffer
from .expr import IterVar, PrimExpr, Var, convert


class ForKind(IntEnum):
    """How a loop runs, with TVM's numbering.

    >>> from mlckit import tir
    >>> from mlckit.script import tir as T
    >>> @T.prim_func
    ... def copy(a: T.Buffer((4,), "float32"), b: T.Buffer((4,), "float32")):
    ...     for i in range(4):
    ...         with T.block("B"):
    ...             vi = T.axis.spatial(4, i)
    ...             b[vi] = a[vi]
    >>> loop = copy.body.block.body
    >>> loop.kind, tir.ForKind.PARALLEL
    (<ForKind.SERIAL: 0>, <ForKind.PARALLEL: 1>)
    """

    SERIAL = 0
    PARALLEL = 1
    VECTORIZED = 2
    UNROLLED = 3
    THREAD_BINDING = 4


@node
class Stmt(Node):
    """Base of TIR statements.

    >>> from mlckit import tir
    >>> x = tir.Var("x", "int32")
    >>> isinstance(tir.Evaluate(x), tir.Stmt)
    True
    """


@node
class BufferStore(Stmt):
    """``buffer[indices] = value``.

    >>> from mlckit import tir
    >>> from mlckit.script import tir as T
    >>> @T.prim_func
    ... def copy(a: T.Buffer((4,), "float32"), b: T.Buffer((4,), "float32")):
    ...     for i in range(4):
    ...         with T.block("B"):
    ...             vi = T.axis.spatial(4, i)
    ...             b[vi] = a[vi]
    >>> loop = copy.body.block.body
    >>> store = loop.body.block.body
    >>> type(store).__name__, store.buffer.name, store.indices, store.value
    ('BufferStore', 'b', [vi], a[vi])
    """

    buffer: Buffer
    value: PrimExpr
    indices: list

    def __post_init__(self):
        self.indices = list(self.indices)


@node
class LetStmt(Stmt):
    """``var = value`` bound for the statements of ``body``.

    >>> from mlckit import tir
    >>> x = tir.Var("x", "int32")
    >>> let = tir.LetStmt(x, 4, tir.Evaluate(x + 1))
    >>> let.var, let.value
    (x, 4)
    """
    var: Var
    value: PrimExpr
    body: Stmt

    _def_fields = ("var",)
    _eq_order = ("value", "var", "body")


@node
class AttrStmt(Stmt):
    """An attribute ``attr_key = value`` attached to ``node`` for the statements of ``body``.

    >>> from mlckit import tir
    >>> x = tir.Var("x", "int32")
    >>> attr = tir.AttrStmt(x, "pragma_unroll", 1, tir.Evaluate(x))
    >>> attr.attr_key, attr.value
    ('pragma_unroll', 1)
    """
    node: Any
    attr_key: str
    value: Any
    body: Stmt


@node
class AssertStmt(Stmt):
    """Check ``condition`` at run time (failing with ``message``), then run ``body``.

    >>> from mlckit import tir
    >>> x = tir.Var("x", "int32")
    >>> check = tir.AssertStmt(x > 0, tir.StringImm("x must be positive"), tir.Evaluate(x))
    >>> check.condition
    x > 0
    """
    condition: PrimExpr
    message: PrimExpr
    body: Stmt


@node
class For(Stmt):
    """A loop ``for loop_var in range(min, min + extent)`` of some ``kind``.

    >>> from mlckit import tir
    >>> from mlckit.script import tir as T
    >>> @T.prim_func
    ... def copy(a: T.Buffer((4,), "float32"), b: T.Buffer((4,), "float32")):
    ...     for i in range(4):
    ...         with T.block("B"):
    ...             vi = T.axis.spatial(4, i)
    ...             b[vi] = a[vi]
    >>> loop = copy.body.block.body
    >>> type(loop).__name__, loop.loop_var, loop.extent, loop.kind
    ('For', i, 4, <ForKind.SERIAL: 0>)
    """

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
    """``while condition: body``.

    >>> from mlckit import tir
    >>> x = tir.Var("x", "int32")
    >>> loop = tir.While(x < 4, tir.Evaluate(x))
    >>> loop.condition
    x < 4
    """
    condition: PrimExpr
    body: Stmt


@node
class SeqStmt(Stmt):
    """Statements one after the other.

    >>> from mlckit import tir
    >>> x = tir.Var("x", "int32")
    >>> seq = tir.SeqStmt([tir.Evaluate(0), tir.Evaluate(1)])
    >>> len(seq.seq)
    2
    """
    seq: list

    def __post_init__(self):
        self.seq = list(self.seq)

    def __getitem__(self, i):
        return self.seq[i]

    def __len__(self):
        return len(self.seq)


@node
class IfThenElse(Stmt):
    """``if condition: then_case else: else_case``.

    >>> from mlckit import tir
    >>> x = tir.Var("x", "int32")
    >>> tir.IfThenElse(x < 2, tir.Evaluate(0), None)
    x = T.int32()
    if x < 2:
        T.evaluate(0)
    """
    condition: PrimExpr
    then_case: Stmt
    else_case: Stmt | None = None


@node
class Evaluate(Stmt):
    """An expression evaluated for its side effect (``T.evaluate``).

    >>> from mlckit import tir
    >>> x = tir.Var("x", "int32")
    >>> tir.Evaluate(x + 1)
    x = T.int32()
    T.evaluate(x + 1)
    """
    value: PrimExpr

    def __post_init__(self):
        self.value = convert(self.value)


@node
class Allocate(Stmt):
    """Allocate memory for ``extents`` elements of ``dtype`` at ``buffer_var`` for ``body``.

    >>> from mlckit import tir
    >>> data = tir.Var("data", "handle")
    >>> alloc = tir.Allocate(data, "float32", [16], tir.const(True, "bool"), tir.Evaluate(0))
    >>> alloc.dtype, alloc.extents
    ('float32', [16])
    """
    buffer_var: Var
    dtype: str
    extents: list
    condition: PrimExpr
    body: Stmt
    annotations: dict = None  # type: ignore[assignment]
    # the memory it lives in (TVM keeps it in the pointer type of buffer_var)
    scope: str = field(default="global", kw_only=True)

    _def_fields = ("buffer_var",)

    def __post_init__(self):
        self.annotations = dict(self.annotations or {})  # as TVM: always a map, maybe empty


@node
class DeclBuffer(Stmt):
    """Declare ``buffer`` for the statements of ``body``.

    >>> from mlckit import tir
    >>> A = tir.decl_buffer((4,), "float32", name="A")
    >>> tir.DeclBuffer(A, tir.Evaluate(0)).buffer.name
    'A'
    """
    buffer: Buffer
    body: Stmt

    _def_fields = ("buffer",)


@node
class Block(Stmt):
    """A TensorIR block: iterators, accessed regions, optional init, and a body.

    ``T.block("Y")`` with ``vi, vj, vk = T.axis.remap("SSR", [i, j, k])`` is a Block with three
    iter_vars (two spatial, one reduce) inside a BlockRealize binding them to ``i, j, k``.

    >>> from mlckit import tir
    >>> from mlckit.script import tir as T
    >>> @T.prim_func
    ... def copy(a: T.Buffer((4,), "float32"), b: T.Buffer((4,), "float32")):
    ...     for i in range(4):
    ...         with T.block("B"):
    ...             vi = T.axis.spatial(4, i)
    ...             b[vi] = a[vi]
    >>> loop = copy.body.block.body
    >>> block = loop.body.block
    >>> block.name_hint, block.reads, block.writes
    ('B', [a[vi]], [b[vi]])
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
    """A Block placed in a loop nest: its iterators take ``iter_values`` when ``predicate``.

    >>> from mlckit import tir
    >>> from mlckit.script import tir as T
    >>> @T.prim_func
    ... def copy(a: T.Buffer((4,), "float32"), b: T.Buffer((4,), "float32")):
    ...     for i in range(4):
    ...         with T.block("B"):
    ...             vi = T.axis.spatial(4, i)
    ...             b[vi] = a[vi]
    >>> loop = copy.body.block.body
    >>> realize = loop.body
    >>> type(realize).__name__, realize.iter_values, realize.block.name_hint
    ('BlockRealize', [i], 'B')
    """

    iter_values: list
    predicate: PrimExpr
    block: Block

    def __post_init__(self):
        self.iter_values = list(self.iter_values)
        self.predicate = convert(self.predicate)


def stmt_seq(*stmts) -> Stmt:
    """One statement from several: flattens nested SeqStmts, unwraps a single statement.

    >>> from mlckit import tir
    >>> tir.stmt_seq(tir.Evaluate(0), tir.Evaluate(1))
    T.evaluate(0)
    T.evaluate(1)
    >>> tir.stmt_seq(tir.Evaluate(0))
    T.evaluate(0)
    """
    flat = []
    for s in stmts:
        if isinstance(s, SeqStmt):
            flat.extend(s.seq)
        elif s is not None:
            flat.append(s)
    if len(flat) == 1:
        return flat[0]
    return SeqStmt(flat)
