"""PrimFunc -> readable Python source, shared by the lnumpy and numba_cpu backends.

One generator walks the TIR and writes one Python statement per TIR construct, in the style
the MLC course writes low-level NumPy by hand::

    def mm_relu(A, B, C):
        Y = np.empty((128, 128), dtype="float32")
        for i in range(128):
            for j in range(128):
                for k in range(128):
                    # block "Y"
                    vi = i
                    vj = j
                    vk = k
                    if vk == 0:
                        Y[vi, vj] = 0.0
                    Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]
        ...

A :class:`Flavour` selects the few places where the backends differ (``prange`` for parallel
loops, unrolling, hoisting allocations out of loops, typed float constants).

Semantics chosen (documented for learners):

- destination-passing: the function takes every buffer parameter and returns nothing;
  symbolic shape variables are read from the argument arrays (``n = A.shape[0]``);
- a block's iterators are bound from their loop expressions (``vi = i``); a ``T.where``
  predicate wraps the block in ``if``; the ``T.init()`` statement runs when every reduction
  iterator is at the start of its domain (``if vk == 0:``), as TVM lowers it;
- scalars are NumPy scalars of the buffer's dtype, so float32 arithmetic stays float32:
  loads from float32 arrays give ``np.float32``, casts are ``np.float32(x)``, and float32
  constants are written ``np.float32(0.5)`` where a bare Python ``0.5`` would widen the
  computation to float64 (in lnumpy a bare literal is kept where NumPy's promotion rules
  keep float32 anyway, e.g. ``x * 0.5``);
- ``//`` and ``%`` (FloorDiv / FloorMod) have Python's floor semantics, as TIR's; integer
  ``T.Div`` / ``T.Mod`` truncate toward zero (helpers ``truncdiv`` / ``truncmod``);
- intrinsics map to NumPy ufuncs on scalars (``T.exp`` -> ``np.exp``), which keep the dtype.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from mlckit.error import TVMTypeError
from mlckit.tir.buffer import Buffer
from mlckit.tir.expr import FloatImm, IntImm, IterVarType, PrimExpr, StringImm, Var
from mlckit.tir.function import PrimFunc
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

# the generator's parts, one concern each; their public names stay importable from here
from .codegen_common import (  # noqa: F401 - re-exported
    HELPER_DEPS,
    HELPERS,
    LNUMPY,
    NUMBA,
    P_NOT,
    RESERVED,
    CodegenError,
    Flavour,
    _sanitize,
    float_literal,
    func_name,
    np_dtype_text,
    np_scalar,
)
from .codegen_expr import ExprWriter
from .codegen_extern import ExternCalls
from .codegen_flat import FlatParams
from .codegen_lanes import VectorLanes
from .codegen_local import LocalScalars, _NotScalar
from .codegen_promote import RegisterPromotion

__all__ = ["CodegenError", "Flavour", "GeneratedSource", "LNUMPY", "NUMBA", "generate", "func_name"]


class GeneratedSource(str):
    """Generated Python source (a ``str``) that remembers where each TIR statement went.

    ``line_to_stmt[n]`` is the TIR statement that line ``n`` (1-based) was written for;
    ``stmt_lines(stmt)`` the lines a statement produced (several when unrolled);
    ``line_context[n]`` the Python names of the loop variables and block iterators in scope
    at line ``n``.
    """

    func: PrimFunc
    func_name: str
    line_to_stmt: dict
    line_context: dict
    uses_prange: bool
    uses_math: bool
    helpers: tuple
    externs: dict  # the extern functions the code calls: name -> (return, argument dtypes)
    extern_names: dict  # name -> the Python name the code calls it by (usually the same)
    uses_packed: bool  # calls call_packed(name, ...) (T.call_packed)

    def stmt_lines(self, stmt: Stmt) -> list[int]:
        return [n for n, s in self.line_to_stmt.items() if s is stmt]

    def line(self, lineno: int) -> str:
        lines = self.splitlines()
        return lines[lineno - 1] if 0 < lineno <= len(lines) else ""

@dataclass
class _Line:
    indent: int
    text: str
    stmt: Stmt | None
    context: tuple


@dataclass
class _Loop:
    """An open loop, for hoisting allocations: ``pre`` is emitted just before its header."""

    var: Var
    kind: ForKind
    pre: list
    indent: int
    stmt: For
    bound: set = field(default_factory=set)  # ids of vars defined inside the loop


def _binds_copy_of(stmt, var_ids: set) -> bool:
    """Whether a block under ``stmt`` binds an iterator to exactly one of the vars ``var_ids``."""
    if isinstance(stmt, BlockRealize):
        if any(id(v) in var_ids for v in stmt.iter_values):
            return True
        return _binds_copy_of(stmt.block.body, var_ids) or (
            stmt.block.init is not None and _binds_copy_of(stmt.block.init, var_ids))
    if isinstance(stmt, SeqStmt):
        return any(_binds_copy_of(s, var_ids) for s in stmt.seq)
    body = getattr(stmt, "body", None)
    found = body is not None and _binds_copy_of(body, var_ids)
    if isinstance(stmt, IfThenElse):
        found = _binds_copy_of(stmt.then_case, var_ids) or (
            stmt.else_case is not None and _binds_copy_of(stmt.else_case, var_ids))
    return found



def _copies_of(stmt, var_id: int) -> int:
    """How many blocks under ``stmt`` bind an iterator to exactly the var ``var_id``."""
    count = [0]

    def visit(x):
        if isinstance(x, BlockRealize) and any(id(v) == var_id for v in x.iter_values):
            count[0] += 1
        for name in getattr(type(x), "field_names", lambda: ())():
            value = getattr(x, name)
            for v in value if isinstance(value, list) else [value]:
                if isinstance(v, Stmt):
                    visit(v)

    visit(stmt)
    return count[0]


class _Generator(ExprWriter, LocalScalars, VectorLanes, RegisterPromotion, FlatParams,
                 ExternCalls):
    def __init__(self, func: PrimFunc, name: str, flavour: Flavour, not_scalar: frozenset = frozenset()):
        self.func = func
        # a PrimFunc named like a builtin the generated code calls (Relax names the PrimFunc
        # of R.max "max") gets a trailing "_"; callers find it as GeneratedSource.func_name
        self.name = name + "_" if name in RESERVED else name
        self.flavour = flavour
        self.not_scalar = not_scalar  # ids of buffers that stay arrays
        self.scalars: dict[int, tuple] = {}  # id(buffer) -> (buffer, loop depth of its allocation)
        self.consts: dict[int, int] = {}  # id(var) -> its value in the current unrolled copy
        self.out: list = []
        self.indent = 1
        self.names: dict[int, str] = {}  # id(Var or Buffer) -> Python name
        self.keep: list = []  # keep named objects alive (ids stay unique)
        self.name_dtype: dict[str, str] = {}  # every name ever used -> its type key
        self.live: list[set] = [set()]  # names in scope, innermost last
        self.keep_names = 0  # > 0: names stay taken after their scope closes (see unrolled)
        self.loops: list[_Loop] = []
        self.ctx_loops: list[str] = []
        self.ctx_iters: list[str] = []
        self.helpers: set[str] = set()
        self.uses_prange = False
        self.uses_math = False
        self.hoisted: set[int] = set()
        self.top_pre: list = []
        self.pending: list[str] = []  # lines an expression needs before its statement
        self.promoted: dict[int, str] = {}  # id(load/store) -> scalar holding its element
        self.inits_before_loop: set[int] = set()  # id(block) whose T.init() runs before its loop
        self.flat: dict = {}  # constant-shape parameters read through flat views
        self.iter_bindings: dict = {}  # id(block iter var) -> its value in loop variables
        self.flat_pre: list = []
        self.externs: dict = {}  # extern function name -> (return dtype, argument dtypes)
        self.extern_names: dict = {}  # extern function name -> its Python name in the code
        self.data_owner: dict = {}  # id(buffer data Var) -> the buffer owning that memory
        self.uses_packed = False  # T.call_packed: call_packed(...) must be in the namespace

    # -- naming ----------------------------------------------------------------------------
    def bind(self, obj, hint: str, type_key: str, scoped: bool = True) -> str:
        """Give the Var/Buffer ``obj`` a Python name not used by any live name.

        A name may be reused once its first owner went out of scope, but only for a value of
        the same type, so that Numba can type every variable once.
        """
        base = _sanitize(hint)
        live = set().union(*self.live)
        candidate, n = base, 0
        while (
            candidate in RESERVED
            or candidate in live
            or (candidate in self.name_dtype and (not scoped or self.name_dtype[candidate] != type_key))
        ):
            n += 1
            candidate = f"{base}_{n}"
        self.name_dtype[candidate] = type_key if scoped else "__unique__"
        self.names[id(obj)] = candidate
        self.keep.append(obj)
        self.live[-1].add(candidate)
        if self.loops:
            self.loops[-1].bound.add(id(obj))
        return candidate

    def name_of(self, obj) -> str:
        if id(obj) in self.scalars:  # used other than by an element access
            raise _NotScalar(id(obj))
        try:
            return self.names[id(obj)]
        except KeyError:
            kind = "buffer" if isinstance(obj, Buffer) else "variable"
            hint = getattr(obj, "name", None) or getattr(obj, "name_hint", "?")
            raise CodegenError(
                f"{self.name}: the {kind} {hint!r} is used but never defined "
                "(not a parameter, loop variable, block iterator or allocated buffer)"
            ) from None

    def push_scope(self):
        self.live.append(set())

    def pop_scope(self):
        names = self.live.pop()
        if self.keep_names and self.live:
            self.live[-1] |= names  # still taken: see ``unrolled``

    # -- output ---------------------------------------------------------------------------
    def emit(self, text: str, stmt: Stmt | None = None, indent: int | None = None, into=None):
        context = (tuple(self.ctx_loops), tuple(self.ctx_iters))
        target = self.out if into is None else into
        for pre in self.pending:
            target.append(_Line(self.indent if indent is None else indent, pre, stmt, context))
        self.pending = []
        target.append(_Line(self.indent if indent is None else indent, text, stmt, context))

    # -- the function -----------------------------------------------------------------------
    def run(self) -> GeneratedSource:
        func = self.func
        params = []
        for p in func.params:
            buf = func.buffer_map.get(p)
            if buf is not None:
                params.append(self.bind(buf, buf.name, f"buffer:{buf.dtype}:{buf.ndim}", scoped=False))
                self.names[id(buf.data)] = self.names[id(buf)]
                self.note_data(buf)
            else:
                params.append(self.bind(p, p.name_hint, p.dtype, scoped=False))
        self.emit(f"def {self.name}({', '.join(params)}):", indent=0)
        # symbolic shapes: read from the argument arrays
        for p in func.params:
            buf = func.buffer_map.get(p)
            if buf is None:
                continue
            self.check_buffer_supported(buf)
            for axis, dim in enumerate(buf.shape):
                if isinstance(dim, Var) and id(dim) not in self.names:
                    var_name = self.bind(dim, dim.name_hint, dim.dtype, scoped=False)
                    self.emit(f"{var_name} = {self.names[id(buf)]}.shape[{axis}]")
        if self.flavour.flat_params:
            self.plan_flat_params()
            self.out.append(self.flat_pre)
        self.out.append(self.top_pre)
        start = len(self.out)
        self.stmt(func.body)
        if len(self.out) == start and not self.top_pre and not self.flat_pre:
            self.emit("pass")
        return self.finish()

    def top_line(self, text: str) -> _Line:
        """A line at the top of the function body (before its first statement)."""
        return _Line(1, text, None, ((), ()))

    def finish(self) -> GeneratedSource:
        lines: list[_Line] = []

        def flatten(items):
            for item in items:
                if isinstance(item, list):
                    flatten(item)
                else:
                    lines.append(item)

        flatten(self.out)
        header: list[str] = []
        helpers = self.helper_closure()
        for h in helpers:
            if self.flavour.njit_helpers:
                header.append("@njit(cache=True)")
            header.extend(HELPERS[h].rstrip("\n").split("\n"))
            header.extend(["", ""])
        text_lines = list(header)
        line_to_stmt, line_context = {}, {}
        for line in lines:
            text_lines.append("    " * line.indent + line.text)
            if line.stmt is not None:
                line_to_stmt[len(text_lines)] = line.stmt
            line_context[len(text_lines)] = line.context
        src = GeneratedSource("\n".join(text_lines) + "\n")
        src.func = self.func
        src.func_name = self.name
        src.line_to_stmt = line_to_stmt
        src.line_context = line_context
        src.uses_prange = self.uses_prange
        src.uses_math = self.uses_math
        src.helpers = tuple(helpers)
        src.externs = dict(self.externs)
        src.extern_names = dict(self.extern_names)
        src.uses_packed = self.uses_packed
        return src

    def helper_closure(self) -> list[str]:
        need = set(self.helpers)
        for h in list(need):
            need.update(HELPER_DEPS.get(h, ()))
        return [h for h in HELPERS if h in need]

    @staticmethod
    def check_buffer_supported(buf: Buffer):
        if buf.strides:
            raise CodegenError(f"buffer {buf.name!r} has explicit strides, which are not supported")
        off = buf.elem_offset
        if off is not None and not (isinstance(off, IntImm) and off.value == 0):
            raise CodegenError(f"buffer {buf.name!r} has an element offset, which is not supported")

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
        if self.lane is not None:
            self.lane_store(s)
            return
        held = self.promoted.get(id(s))
        if held is not None:  # an element kept in a scalar over the loop
            self.emit(f"{held} = {self.promoted_store_value(s)}", s)
            return
        target = self.buffer_access(s.buffer, s.indices)
        # a scalar variable must keep its type: constants stored to it are typed
        value = self.expr_text(s.value, store=id(s.buffer) not in self.scalars)
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
        value = self.expr_text(s.value)
        self.push_scope()
        name = self.bind(s.var, s.var.name_hint, s.var.dtype)
        self.emit(f"{name} = {value}", s)
        self.stmt(s.body)
        self.pop_scope()

    def stmt_AttrStmt(self, s: AttrStmt):
        self.stmt(s.body)

    def stmt_AssertStmt(self, s: AssertStmt):
        cond = self.expr(s.condition, P_NOT + 1)
        msg = s.message.value if isinstance(s.message, StringImm) else "assertion failed"
        self.emit(f"if not {cond}:", s)
        self.emit(f"    raise AssertionError({msg!r})", s)
        self.stmt(s.body)

    def stmt_IfThenElse(self, s: IfThenElse):
        self.emit(f"if {self.expr_text(s.condition)}:", s)
        self.body(s.then_case)
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
        if kind == ForKind.VECTORIZED and self.lanes_ok(s):
            self.lanes(s)
            return
        if (
            kind == ForKind.UNROLLED
            and self.flavour.unroll_limit
            and isinstance(extent, IntImm)
            and isinstance(s.min, IntImm)
            and 0 < extent.value <= self.flavour.unroll_limit
        ):
            self.unrolled(s)
            return
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
        pre: list = []
        self.out.append(pre)
        self.push_scope()
        var = self.bind(s.loop_var, s.loop_var.name_hint, "int64")
        held = self.promote_begin(s)
        self.emit(f"for {var} in {rng}({bounds}):{comment}", s)
        self.loops.append(_Loop(s.loop_var, kind, pre, self.indent, s))
        self.ctx_loops.append(var)
        # two blocks in a prange body copying its index (C_init's and C_update's `vj = j`
        # after decompose_reduction) get names of their own: see ``unrolled``
        keep = rng == "prange" and _copies_of(s.body, id(s.loop_var)) > 1
        self.keep_names += keep
        self.body(s.body)
        self.keep_names -= keep
        self.ctx_loops.pop()
        self.loops.pop()
        self.promote_end(s, held)
        self.pop_scope()

    def unrolled(self, s: For):
        n, lo = s.extent.value, s.min.value
        # Numba rejects a variable that copies a prange index (``vj = j``) being assigned again
        # directly in the prange's body, so unrolled copies that would do so get names of their
        # own there (``vj_1 = j``).
        parent = self.loops[-1] if self.loops else None
        in_prange = bool(
            self.flavour.prange and parent is not None and parent.kind == ForKind.PARALLEL
            and _binds_copy_of(s.body, {id(parent.var)})
        )
        self.keep_names += in_prange
        self.push_scope()
        var = self.bind(s.loop_var, s.loop_var.name_hint, "int64")
        self.ctx_loops.append(var)
        self.emit(f"# T.unroll: {var} = {', '.join(str(lo + k) for k in range(n))}", s)
        for k in range(n):
            self.emit(f"{var} = {lo + k}", s)
            self.consts[id(s.loop_var)] = lo + k
            self.push_scope()
            self.stmt(s.body)
            self.pop_scope()
        self.consts.pop(id(s.loop_var), None)
        self.ctx_loops.pop()
        self.pop_scope()
        self.keep_names -= in_prange

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
            if self.lane_step(value):  # moves with the lane of a vectorized loop
                self.lane_iter(iv.var, value, s)
                continue
            text = self.expr_text(value)
            self.note_iter_binding(iv.var, value)
            name = self.bind(iv.var, iv.var.name_hint, "int64")
            self.ctx_iters.append(name)
            self.emit(f"{name} = {text}", s)
            value_const = self.const_int(value)
            if value_const is None:
                self.consts.pop(id(iv.var), None)
            else:
                self.consts[id(iv.var)] = value_const
        for buf in block.alloc_buffers:
            self.alloc(buf, s)
        if block.match_buffers:
            self.match_buffers(block, s)
        if block.init is not None and id(block) not in self.inits_before_loop:
            reduce_vars = [iv for iv in block.iter_vars if iv.iter_type == IterVarType.CommReduce]
            if reduce_vars:
                conds = [f"{self.names[id(iv.var)]} == {self.expr_text(iv.dom.min)}" for iv in reduce_vars]
                self.emit(f"if {' and '.join(conds)}:", block.init)
                self.body(block.init)
            else:
                self.stmt(block.init)
        self.stmt(block.body)
        del self.ctx_iters[n_iters:]
        self.pop_scope()
        if conditional:
            self.indent -= 1

    def stmt_Allocate(self, s: Allocate):
        self.push_scope()
        shape = ", ".join(self.expr_text(e) for e in s.extents)
        if len(s.extents) == 1:
            shape += ","
        name = self.bind(s.buffer_var, s.buffer_var.name_hint, f"buffer:{s.dtype}:{len(s.extents)}",
                         scoped=False)
        self.emit(f"{name} = np.empty(({shape}), dtype={np_dtype_text(s.dtype)})", s)
        self.stmt(s.body)
        self.pop_scope()

    def stmt_DeclBuffer(self, s: DeclBuffer):
        buf = s.buffer
        self.check_buffer_supported(buf)
        if id(buf.data) not in self.names:
            raise CodegenError(f"{self.name}: T.decl_buffer {buf.name!r} has no allocation")
        data = self.names[id(buf.data)]
        shape = ", ".join(self.expr_text(e) for e in buf.shape)
        if len(buf.shape) == 1:
            shape += ","
        name = self.bind(buf, buf.name, f"buffer:{buf.dtype}:{buf.ndim}", scoped=False)
        self.emit(f"{name} = {data}.reshape(({shape}))", s)
        self.stmt(s.body)

    def alloc(self, buf: Buffer, stmt: Stmt):
        """``T.alloc_buffer`` -> ``np.empty``, hoisted out of loops where legal (numba)."""
        self.check_buffer_supported(buf)
        self.note_data(buf)
        if self.scalarizable(buf):
            self.alloc_scalars(buf, stmt)
            return
        if id(buf) in self.hoisted:  # an unrolled copy of an allocation already hoisted
            return
        shape = ", ".join(self.expr_text(e) for e in buf.shape)
        if len(buf.shape) == 1:
            shape += ","
        if id(buf) not in self.names:
            self.bind(buf, buf.name, f"buffer:{buf.dtype}:{buf.ndim}", scoped=False)
        name = self.names[id(buf)]
        line = f"{name} = np.empty(({shape}), dtype={np_dtype_text(buf.dtype)})"
        target = None
        if self.flavour.hoist_alloc and self.loops:
            used = _vars_in(buf.shape)
            depth = len(self.loops)
            while depth > 0:
                loop = self.loops[depth - 1]
                if loop.kind == ForKind.PARALLEL or id(loop.var) in used or loop.bound & used:
                    break
                depth -= 1
            if depth < len(self.loops):
                target = (self.loops[depth].pre, depth)
        if target is None:
            self.emit(line, stmt)
            return
        pre, depth = target
        self.hoisted.add(id(buf))
        loop = self.loops[depth]
        self.emit(f"{line}  # hoisted out of the loop over {self.names[id(loop.var)]}",
                  stmt, indent=loop.indent, into=pre)


def _vars_in(exprs) -> set[int]:
    found: set[int] = set()

    def walk(e):
        if isinstance(e, Var):
            found.add(id(e))
        elif isinstance(e, PrimExpr):
            for name in e.field_names():
                v = getattr(e, name)
                if isinstance(v, PrimExpr):
                    walk(v)
                elif isinstance(v, list):
                    for x in v:
                        walk(x)

    for e in exprs:
        walk(e)
    return found




def generate(func: PrimFunc, flavour: Flavour = LNUMPY, name: str | None = None) -> GeneratedSource:
    """Python source of ``func`` in ``flavour`` (``LNUMPY`` or ``NUMBA``).

    Example::

        src = generate(mm_relu)            # def mm_relu(A, B, C): ...
        src.stmt_lines(some_store)         # [12]
    """
    if not isinstance(func, PrimFunc):
        raise TVMTypeError(f"expected a tir.PrimFunc, got {type(func).__name__}")
    not_scalar: frozenset = frozenset()
    while True:
        try:
            return _Generator(func, name or func_name(func), flavour, not_scalar).run()
        except _NotScalar as err:  # that buffer stays an array: generate again
            not_scalar = not_scalar | {err.key}


