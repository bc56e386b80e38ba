"""``tvm.tir.ir_builder``: TVM's older imperative way to write TIR statement by statement.

``ib = ir_builder.create()`` opens a statement list; ``with ib.for_range(0, n) as i:`` opens a
loop, ``A = ib.allocate("float32", 16)`` an allocation for the statements that follow,
``A[i] = A[i] + 1`` emits a store; ``ib.get()`` returns the statement built.  TVM's own pass
tests (and older tutorials) build their inputs this way.

Example::

    ib = tvm.tir.ir_builder.create()
    n = te.var("n")
    with ib.for_range(0, n, name="i") as i:
        A = ib.allocate("float32", 16, name="A", scope="global")
        A[i % 16] = 1.0
    func = tvm.tir.PrimFunc([n], ib.get())
"""

from __future__ import annotations

from mlckit.error import TVMValueError
from mlckit.tir import stmt as S
from mlckit.tir.buffer import decl_buffer
from mlckit.tir.expr import BufferLoad, IntImm, Var
from mlckit.tir.expr_build import convert

__all__ = ["BufferVar", "IRBuilder", "create"]


class _Scope:
    def __init__(self, value, on_exit):
        self.value, self.on_exit = value, on_exit

    def __enter__(self):
        return self.value

    def __exit__(self, *exc):
        self.on_exit()


class BufferVar:
    """An allocation seen from the builder: ``A[i]`` loads, ``A[i] = v`` emits a store."""

    def __init__(self, builder: IRBuilder, buffer):
        self._builder, self.buffer = builder, buffer

    @property
    def dtype(self) -> str:
        return self.buffer.dtype

    def asobject(self):
        """The buffer (a ``tir.PrimFunc`` parameter given as this BufferVar is that buffer)."""
        return self.buffer

    @property
    def data(self) -> Var:
        return self.buffer.data

    def _indices(self, index) -> list:
        return [convert(i) for i in (index if isinstance(index, tuple) else (index,))]

    def __getitem__(self, index):
        return BufferLoad(self.buffer, self._indices(index))

    def __setitem__(self, index, value):
        value = convert(value, self.buffer.dtype)
        if value.dtype != self.buffer.dtype:
            raise TVMValueError(f"ir_builder: storing a {value.dtype} value into "
                                f"{self.buffer.name!r}, a {self.buffer.dtype} buffer")
        self._builder.emit(S.BufferStore(self.buffer, value, self._indices(index)))


class IRBuilder:
    """Builds a statement: each ``emit`` appends to the innermost open statement list;
    a scope (loop, while, if, attribute, allocation) wraps what follows it in that list."""

    def __init__(self):
        self._seq: list[list] = [[]]

    def _pop_seq(self):
        seq = self._seq.pop()
        body = None
        for item in reversed(seq):  # a callable wraps the statements after it
            if callable(item):
                body = item(body if body is not None else S.Evaluate(0))
            else:
                body = item if body is None else S.stmt_seq(item, body)
        return body if body is not None else S.Evaluate(0)

    def emit(self, stmt) -> None:
        """Append ``stmt`` (or a function wrapping the statements that follow)."""
        if not callable(stmt) and not isinstance(stmt, S.Stmt):
            stmt = S.Evaluate(convert(stmt))
        self._seq[-1].append(stmt)

    def scope_attr(self, node, attr_key: str, value) -> None:
        """An ``AttrStmt`` around the statements that follow."""
        value = convert(value) if not isinstance(value, str) else value
        self.emit(lambda body: S.AttrStmt(node, attr_key, value, body))

    def for_range(self, begin, end, name: str = "i", dtype: str | None = None,
                  kind: str = "serial"):
        """A loop ``for name in range(begin, end)`` (``kind``: serial, parallel, vectorize,
        unroll); ``with`` gives its variable."""
        begin, end = convert(begin), convert(end)
        var = Var(name, dtype or getattr(end, "dtype", "int32"))
        kinds = {"serial": S.ForKind.SERIAL, "parallel": S.ForKind.PARALLEL,
                 "vectorize": S.ForKind.VECTORIZED, "unroll": S.ForKind.UNROLLED}
        if kind not in kinds:
            raise TVMValueError(f"ir_builder.for_range: unknown kind {kind!r} "
                                f"(one of {sorted(kinds)})")
        self._seq.append([])
        extent = end if isinstance(begin, IntImm) and begin.value == 0 else end - begin

        def close():
            self.emit(S.For(var, begin, extent, kinds[kind], self._pop_seq()))

        return _Scope(var, close)

    def while_loop(self, condition):
        """``while condition:`` around the statements inside the ``with``."""
        self._seq.append([])
        return _Scope(None, lambda: self.emit(S.While(convert(condition), self._pop_seq())))

    def if_scope(self, cond):
        """``if cond:`` around the statements inside the ``with``."""
        self._seq.append([])
        return _Scope(None, lambda: self.emit(S.IfThenElse(convert(cond), self._pop_seq())))

    def else_scope(self):
        """The ``else`` of the ``if_scope`` just closed."""
        prev = self._seq[-1][-1] if self._seq[-1] else None
        if not isinstance(prev, S.IfThenElse) or prev.else_case is not None:
            raise TVMValueError("ir_builder.else_scope must follow an if_scope")
        self._seq[-1].pop()
        self._seq.append([])

        def close():
            self.emit(prev.replace(else_case=self._pop_seq()))

        return _Scope(None, close)

    def allocate(self, dtype: str, shape, name: str = "buf", axis_separators=None,
                 scope: str = "") -> BufferVar:
        """An allocation of ``shape`` ``dtype`` elements for the statements that follow."""
        shape = [convert(s) for s in (shape if isinstance(shape, (list, tuple)) else [shape])]
        buf = decl_buffer(shape, dtype, name, scope=scope or "global",
                          axis_separators=axis_separators)
        self.emit(lambda body: S.Allocate(buf.data, dtype, shape, IntImm("bool", 1), body,
                                          scope=buf.scope))
        return BufferVar(self, buf)

    def pointer(self, content_type: str, name: str = "ptr", scope: str = "") -> BufferVar:
        """A pointer to ``content_type`` elements, loaded and stored through as a
        one-element buffer, as TVM's ``ib.pointer`` (a PrimFunc takes it as its data Var)."""
        return BufferVar(self, decl_buffer([1], content_type, name, scope=scope or "global"))

    def likely(self, expr):
        """``expr`` marked as probably true (``T.likely``)."""
        from .op import call_intrin

        return call_intrin("bool", "tir.likely", convert(expr))

    def buffer_ptr(self, buf) -> BufferVar:
        """``buf`` (a Buffer, e.g. ``tir.decl_buffer``) to load and store through."""
        return BufferVar(self, buf)

    def get(self):
        """The statement built."""
        body = self._pop_seq()
        self._seq.append([])
        return body


def create() -> IRBuilder:
    """A new IRBuilder, as ``tvm.tir.ir_builder.create()``.

    >>> from mlckit.tir import ir_builder
    >>> ib = ir_builder.create()
    >>> with ib.for_range(0, 4, name="i") as i:
    ...     A = ib.allocate("float32", 4, name="A")
    ...     A[i] = 1.0
    >>> type(ib.get()).__name__
    'For'
    """
    return IRBuilder()
