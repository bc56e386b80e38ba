"""The statements of the generated Python: one method per TIR statement (stores, lets,
asserts, ifs, loops, blocks with their iterators, predicates and
``T.init()``, allocations), mixed into the generator of ``codegen``.

Example::

    src = generate(mm_relu)      # StmtWriter writes its loops, blocks and stores
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from mlckit.arith.analyzer import Analyzer
from mlckit.tir.buffer import Buffer
from mlckit.tir.expr import FloatImm, IntImm, IterVarType, StringImm, Var
from mlckit.tir.stmt import (
    Allocate,
    AssertStmt,
    AttrStmt,
    BlockRealize,
    BufferStore,
    DeclBuffer,
    Evaluate,
    For,
    ForKind,
    IfThenElse,
    LetStmt,
    SeqStmt,
    Stmt,
    While,
)
from mlckit.tir.traversal import post_order_visit

from .codegen_common import (
    P_ADD,
    P_ATOM,
    P_NOT,
    CodegenError,
    is_index_arithmetic,
    np_dtype_text,
    np_scalar,
)


def _lines(items):
    """The generated lines in ``items`` (nested lists of lines), in order."""
    for item in items:
        if isinstance(item, list):
            yield from _lines(item)
        else:
            yield item


def drop_or_inline(out: list, let, name: str, summand: str, wrapped: str) -> None:
    """The index let ``let`` (the line ``name = ...`` in ``out``) dropped when the lines after
    it read ``name`` nowhere (a parameter's N-D index printed through it), written into its
    one use when read once (``summand`` where a sum needs no parentheses, else ``wrapped``):
    the source reads as the indices it computes."""
    at = next(k for k, item in enumerate(out) if item is let)
    word = re.compile(rf"\b{re.escape(name)}\b")
    uses = [line for line in _lines(out[at + 1:]) for _ in word.finditer(line.text)]
    if len(uses) > 1:
        return
    del out[at]
    if uses:
        (line,) = uses
        line.text = word.sub(lambda m: summand if _a_summand(line.text, m) else wrapped,
                             line.text)


def _a_summand(text: str, m) -> bool:
    """Whether the match ``m`` in ``text`` is a term of a sum alone: what comes before it
    starts an expression, adds to it or compares with it, what follows ends it, adds or
    compares (``Y[x]``, ``x + 3``, ``C[i, x]``, ``if x == 0:``), so a sum written there needs
    no parentheses."""
    before, after = text[:m.start()], text[m.end():]
    return before.endswith(("[", "(", ", ", "= ", " + ", "if ", "< ", "> ")) \
        and (after == "" or after.startswith(("]", ")", ",", ":", " + ", " - ", " == ", " != ",
                                              " < ", " > ", " <= ", " >= ")))


@dataclass
class OpenLoop:
    """A loop the statement printed is inside."""

    var: Var
    kind: ForKind
    stmt: For


class StmtWriter:
    """The statement half of the generator (its expressions: ``ExprWriter``)."""

    # -- statements -------------------------------------------------------------------------
    def stmt(self, s: Stmt):
        method = getattr(self, "stmt_" + type(s).__name__, None)
        if method is None:
            raise CodegenError(f"{self.name}: TIR statement {type(s).__name__} is not supported")
        method(s)

    def stmt_SeqStmt(self, s: SeqStmt):
        for x in s.seq:
            self.stmt(x)

    def stmt_BufferStore(self, s: BufferStore):
        if self.vector_store(s):  # T.Ramp / T.Broadcast: codegen_vector
            return
        target = self.buffer_access(s.buffer, s.indices)
        # a scalar variable must keep its type: constants stored to it are typed
        scalar = id(s.buffer) in self.scalars
        value = self.expr_text(s.value, store=not scalar)
        if scalar and isinstance(s.value, (IntImm, FloatImm)) and not value.startswith("np."):
            value = f"{np_scalar(s.buffer.dtype)}({value})"
        self.emit(f"{target} = {value}", s)

    def stmt_Evaluate(self, s: Evaluate):
        v = s.value
        if self.packed_statement(s):
            return
        if isinstance(v, (IntImm, FloatImm)):
            self.emit("pass", s)
            return
        self.emit(self.expr_text(v), s)

    def stmt_LetStmt(self, s: LetStmt):
        if self.vector_let(s):  # a float32x4 value: codegen_vector
            return
        value = self.expr_text(s.value)
        self.push_scope()
        # a Python int literal is an int64 to Numba, as a loop variable (an unrolled copy's
        # ``j_1 = 3`` may then reuse the loop's name)
        key = "int64" if isinstance(s.value, IntImm) and s.var.dtype.startswith("int") else s.var.dtype
        name = self.bind(s.var, s.var.name_hint, key)
        index = is_index_arithmetic(s.value)
        if index:  # a parameter's N-D index sees through it (codegen_flat.ParamViews)
            self.let_values[id(s.var)] = self.through_lets(s.value)
            texts = self.expr(s.value, P_ADD), self.expr(s.value, P_ATOM)
        self.emit(f"{name} = {value}", s)
        out, line = self.out, self.out[-1]
        self.stmt(s.body)
        if index:
            del self.let_values[id(s.var)]
            drop_or_inline(out, line, name, *texts)
        self.pop_scope()

    def stmt_AttrStmt(self, s: AttrStmt):
        """A thread launched by lowered TIR (``T.launch_thread("threadIdx.x", 16) as j``,
        what LowerOpaqueBlock makes of a bound loop) runs as a serial loop on the CPU, as the
        bound loop does in un-lowered TIR; other attributes print their body."""
        iv = s.node
        if s.attr_key in ("thread_extent", "virtual_thread") and hasattr(iv, "thread_tag"):
            self.stmt_For(For(iv.var, IntImm(iv.var.dtype, 0), s.value, ForKind.THREAD_BINDING,
                              s.body, thread_binding=iv))
            return
        self.stmt(s.body)

    def stmt_AssertStmt(self, s: AssertStmt):
        cond = self.expr(s.condition, P_NOT + 1)
        msg = s.message.value if isinstance(s.message, StringImm) else "assertion failed"
        self.emit(f"if not {cond}:", s)
        self.emit(f"    raise AssertionError({msg!r})", s)
        self.stmt(s.body)

    def stmt_IfThenElse(self, s: IfThenElse):
        self.emit(f"if {self.expr_text(s.condition)}:", s)
        self.guards.append(s.condition)  # known to hold in the then-branch (index_conditions)
        self.body(s.then_case)
        self.guards.pop()
        if s.else_case is not None:
            self.emit("else:", s)
            self.body(s.else_case)

    def stmt_While(self, s: While):
        self.emit(f"while {self.expr_text(s.condition)}:", s)
        self.body(s.body)

    def body(self, s: Stmt):
        """An indented suite; ``pass`` if it produced nothing."""
        self.indent += 1
        self.push_scope()
        start = len(self.out)
        self.stmt(s)
        if len(self.out) == start:
            self.emit("pass", s)
        self.pop_scope()
        self.indent -= 1

    def stmt_For(self, s: For):
        kind = s.kind
        extent = s.extent
        if isinstance(s.min, IntImm) and s.min.value == 0:
            bounds = self.expr_text(extent)
        else:
            bounds = f"{self.expr_text(s.min)}, {self.expr_text(s.min + extent)}"
        rng = "range"
        comment = ""
        if kind == ForKind.PARALLEL:
            if self.flavour.prange:
                rng = "prange"
                self.uses_prange = True
            else:
                comment = "  # T.parallel"
        elif kind == ForKind.VECTORIZED:
            comment = "  # T.vectorized"
        elif kind == ForKind.UNROLLED:
            comment = "  # T.unroll"
        elif kind == ForKind.THREAD_BINDING:
            tag = s.thread_binding.thread_tag if s.thread_binding is not None else "thread"
            comment = f"  # T.thread_binding: {tag} (run as a serial loop)"
        self.push_scope()
        var = self.bind(s.loop_var, s.loop_var.name_hint, "int64")
        self.emit(f"for {var} in {rng}({bounds}):{comment}", s)
        self.loops.append(OpenLoop(s.loop_var, kind, s))
        self.ctx_loops.append(var)
        self.body(s.body)
        self.ctx_loops.pop()
        self.loops.pop()
        self.pop_scope()

    def stmt_BlockRealize(self, s: BlockRealize):
        block = s.block
        is_root = not block.iter_vars and block.name_hint == "root"
        pred = s.predicate
        conditional = not (isinstance(pred, IntImm) and pred.value)
        if conditional:
            self.emit(f"if {self.expr_text(pred)}:  # T.where", s)
            self.indent += 1
        self.push_scope()
        if not is_root:
            self.emit(f'# block "{block.name_hint}"', s)
        n_iters = len(self.ctx_iters)
        for iv, value in zip(block.iter_vars, s.iter_values):
            text = self.expr_text(value)
            name = self.bind(iv.var, iv.var.name_hint, "int64")
            self.ctx_iters.append(name)
            self.emit(f"{name} = {text}", s)
        allocated = [self.alloc(buf, s) for buf in block.alloc_buffers]
        if block.match_buffers:
            self.match_buffers(block, s)
        if block.init is not None:
            reduce_vars = [iv for iv in block.iter_vars if iv.iter_type == IterVarType.CommReduce]
            if reduce_vars:
                conds = [f"{self.names[id(iv.var)]} == {self.expr_text(iv.dom.min)}" for iv in reduce_vars]
                self.emit(f"if {' and '.join(conds)}:", block.init)
                self.body(block.init)
            else:
                self.stmt(block.init)
        self.stmt(block.body)
        for name in reversed(allocated):
            self.emit_free(name, s)
        del self.ctx_iters[n_iters:]
        self.pop_scope()
        if conditional:
            self.indent -= 1

    def stmt_Allocate(self, s: Allocate):
        if self.register_decl(s):
            return
        self.push_scope()
        shape = ", ".join(self.expr_text(e) for e in s.extents)
        if len(s.extents) == 1:
            shape += ","
        name = self.bind(s.buffer_var, s.buffer_var.name_hint, f"buffer:{s.dtype}:{len(s.extents)}",
                         scoped=False)
        self.emit_allocation(name, shape, s.dtype, s)
        self.alloc_extents[id(s.buffer_var)] = (s.dtype, s.extents)
        self.stmt(s.body)
        self.emit_free(name, s)
        self.pop_scope()

    def stmt_DeclBuffer(self, s: DeclBuffer):
        buf = s.buffer
        self.check_buffer_supported(buf)
        held = self.scalars.get(id(buf.data))
        if held is not None and id(buf.data) not in self.names and buf.dtype == held[0].dtype \
                and _const_size(buf.shape) == 1:
            # a second one-element view of a register (StorageRewrite shares its memory):
            # the same scalar
            self.scalars[id(buf)] = held
            self.stmt(s.body)
            return
        if id(buf.data) not in self.names:
            raise CodegenError(f"{self.name}: T.decl_buffer {buf.name!r} has no allocation")
        data = self.names[id(buf.data)]
        self.note_data(buf)  # an allocation's first view: its memory for T.tvm_access_ptr
        alloc_dtype, extents = self.alloc_extents.get(id(buf.data), (None, None))
        if alloc_dtype == buf.dtype and extents is not None \
                and _same_constants(extents, buf.shape):
            # the allocation's own shape (FlattenBuffer's view of a flat Allocate): the
            # array itself, no second name for it
            self.names[id(buf)] = data
            self.keep.append(buf)
            self.stmt(s.body)
            return
        shape = ", ".join(self.expr_text(e) for e in buf.shape)
        if len(buf.shape) == 1:
            shape += ","
        name = self.bind(buf, buf.name, f"buffer:{buf.dtype}:{buf.ndim}", scoped=False)
        size = _const_size(buf.shape)
        if extents is not None and size is not None and size != _const_size(extents):
            data = f"{data}[0:{size}]"  # a smaller buffer sharing memory (StorageRewrite)
        if self.flavour.flat_params:  # written where first used (lanes index the array)
            view = self.flat_view_of_param(buf, data) if self.flavour.flat_view else None
            slot: list = []
            self.emit("", s, into=slot)
            slot[-1].text = f"{name} = {view or f'{data}.reshape(({shape}))'}"
            self.lazy_views[id(buf)] = (slot, slot.pop(), view is not None)
            self.out.append(slot)
        else:
            self.emit(f"{name} = {data}.reshape(({shape}))", s)
        self.stmt(s.body)

    def flat_view_of_param(self, buf: Buffer, data: str) -> str | None:
        """A 1-D view of an N-D parameter's memory (what FlattenBuffer declares: ``A_1 =
        T.Buffer((16384,), data=A.data)`` of a 128 x 128 ``A``) as ``flat_view(A)``, or its
        first elements, ``flat_view(A)[0:8]``; None for any other view (``reshape``) and in
        a function with ``prange`` loops, which keep the ``reshape`` Numba's parallel pass
        was written for (before ``flat_view`` was registered with Numba's alias analysis,
        the pass dropped a loop whose only writes went through it: a ``C_1[j] = 0.5`` under
        ``prange`` never ran)."""
        if self.has_parallel_loops:
            return None
        owner = self.data_owner.get(id(buf.data))
        if owner is None or owner is buf or buf.ndim != 1 or owner.ndim < 2 \
                or owner.dtype != buf.dtype \
                or not any(owner is b for b in self.func.buffer_map.values()):
            return None
        size = owner.shape[0]
        for extent in owner.shape[1:]:
            size = size * extent
        ana = Analyzer()
        if ana.can_prove(size == buf.shape[0]):
            return f"flat_view({data})"
        if ana.can_prove(buf.shape[0] < size):
            return f"flat_view({data})[0:{self.expr_text(buf.shape[0])}]"
        return None

    @functools.cached_property
    def has_parallel_loops(self) -> bool:
        """Whether the function has a loop printed as ``prange``."""
        found = []
        post_order_visit(self.func.body, lambda x: found.append(
            isinstance(x, For) and x.kind == ForKind.PARALLEL))
        return self.flavour.prange and any(found)

    def alloc(self, buf: Buffer, stmt: Stmt) -> str:
        """``T.alloc_buffer`` -> ``np.empty`` where the block allocates it; its name."""
        self.check_buffer_supported(buf)
        self.note_data(buf)
        shape = ", ".join(self.expr_text(e) for e in buf.shape)
        if len(buf.shape) == 1:
            shape += ","
        name = self.bind(buf, buf.name, f"buffer:{buf.dtype}:{buf.ndim}", scoped=False)
        self.emit_allocation(name, shape, buf.dtype, stmt)
        return name

    @functools.cached_property
    def allocates_workspaces(self) -> bool:
        """Whether allocations are printed as workspaces (``Flavour.workspaces``)."""
        return self.flavour.workspaces and not self.has_parallel_loops

    def emit_allocation(self, name: str, shape: str, dtype: str, stmt: Stmt) -> None:
        """``name = np.empty((shape), dtype=...)``, or ``workspace_alloc((shape), ...)``."""
        dtype = np_dtype_text(dtype, self.flavour.dtype_types)
        if self.allocates_workspaces:
            self.uses_workspaces = True
            self.emit(f"{name} = workspace_alloc(({shape}), {dtype})", stmt)
        else:
            self.emit(f"{name} = np.empty(({shape}), dtype={dtype})", stmt)

    def emit_free(self, name: str, stmt: Stmt) -> None:
        """``workspace_free(name)`` where a workspace's scope ends (nothing for ``np.empty``)."""
        if self.allocates_workspaces:
            self.emit(f"workspace_free({name})", stmt)


def _same_constants(a, b) -> bool:
    """Whether the extents ``a`` and ``b`` are the same constants."""
    return len(a) == len(b) and all(isinstance(x, IntImm) and isinstance(y, IntImm)
                                    and x.value == y.value for x, y in zip(a, b))


def _const_size(extents) -> int | None:
    """The number of elements of constant ``extents`` (None: not all constant, or none)."""
    if not extents or not all(isinstance(e, IntImm) for e in extents):
        return None
    size = 1
    for e in extents:
        size *= e.value
    return size
