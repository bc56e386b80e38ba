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
loops, registers as scalars, vectors lane by lane or as NumPy slices, typed float
constants).  The generator prints: every rewrite that makes the code fast is a TIR pass the
backend runs first (``numba_cpu.lower``), visible in TVMScript.

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

from dataclasses import dataclass

from mlckit.error import TVMTypeError
from mlckit.tir.buffer import Buffer
from mlckit.tir.expr import IntImm, Var
from mlckit.tir.function import PrimFunc
from mlckit.tir.stmt import (
    Stmt,
)
from mlckit.tir.transform.flatten_buffer import declare_buffer_views

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
from .codegen_flat import FlatParams, ParamViews
from .codegen_local import LocalScalars, _NotScalar
from .codegen_stmt import OpenLoop, StmtWriter
from .codegen_vector import VectorExprs
from .codegen_vector_llvm import LLVMVectorExprs

__all__ = ["CodegenError", "Flavour", "GeneratedSource", "LNUMPY", "NUMBA", "generate", "func_name"]


class GeneratedSource(str):
    """Generated Python source (a ``str``) that remembers where each TIR statement went.

    ``line_to_stmt[n]`` is the TIR statement that line ``n`` (1-based) was written for;
    ``stmt_lines(stmt)`` the lines a statement produced (several for a vector store);
    ``line_context[n]`` the Python names of the loop variables and block iterators in scope
    at line ``n``.

    >>> from mlckit import lnumpy
    >>> from mlckit.script import tir as T
    >>> @T.prim_func
    ... def double(a: T.Buffer((8,), "float32"), b: T.Buffer((8,), "float32")):
    ...     for i in range(8):
    ...         with T.block("B"):
    ...             vi = T.axis.spatial(8, i)
    ...             b[vi] = a[vi] * T.float32(2)
    >>> src = lnumpy.to_source(double)
    >>> print(src)
    def double(a, b):
        for i in range(8):
            # block "B"
            vi = i
            b[vi] = a[vi] * 2.0
    <BLANKLINE>
    >>> type(src.line_to_stmt[2]).__name__, src.line_context[5]
    ('For', (('i',), ('vi',)))
    """

    func: PrimFunc
    func_name: str
    line_to_stmt: dict
    line_context: dict
    uses_prange: bool
    uses_lanes: bool  # a vector store written lane by lane (codegen_vector)
    uses_math: bool
    helpers: tuple
    externs: dict  # the extern functions the code calls: name -> (return, argument dtypes)
    extern_names: dict  # name -> the Python name the code calls it by (usually the same)
    uses_packed: bool  # calls call_packed(name, ...) (T.call_packed)
    uses_flat_view: bool  # calls flat_view(A) (numba_cpu.views)
    uses_workspaces: bool  # calls workspace_alloc / workspace_free (numba_cpu.workspace)
    vector_names: tuple  # the names of numba_cpu.vectors it calls (ramp, broadcast, ...)

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



class _Generator(StmtWriter, ExprWriter, LocalScalars, VectorExprs, LLVMVectorExprs, FlatParams,
                 ParamViews, ExternCalls):
    def __init__(self, func: PrimFunc, name: str, flavour: Flavour, not_scalar: frozenset = frozenset()):
        self.func = func
        # a PrimFunc named like a builtin the generated code calls (Relax names the PrimFunc
        # of R.max "max") gets a trailing "_"; callers find it as GeneratedSource.func_name
        self.name = name + "_" if name in RESERVED else name
        self.flavour = flavour
        self.not_scalar = not_scalar  # ids of buffers that stay arrays
        self.scalars: dict[int, tuple] = {}  # id(buffer) -> (buffer, its name, loop depth)
        self.out: list = []
        self.indent = 1
        self.names: dict[int, str] = {}  # id(Var or Buffer) -> Python name
        self.keep: list = []  # keep named objects alive (ids stay unique)
        self.name_dtype: dict[str, str] = {}  # every name ever used -> its type key
        self.live: list[set] = [set()]  # names in scope, innermost last
        self.loops: list[OpenLoop] = []
        self.ctx_loops: list[str] = []
        self.ctx_iters: list[str] = []
        self.helpers: set[str] = set()
        self.uses_prange = False
        self.uses_lanes = False
        self.uses_math = False
        self.alloc_extents: dict[int, list] = {}  # id(data var) -> its Allocate's extents
        self.top_pre: list = []
        self.pending: list[str] = []  # lines an expression needs before its statement
        self.flat: dict = {}  # id(constant-shape parameter) -> [None, its row-major strides]
        self.lane_ranges: list = []  # (Var, extent) of the loops over a vector's chunks
        self.guards: list = []  # the conditions of the ifs around the statement printed
        self.in_lanes = False  # writing a vector store's lanes (codegen_vector)
        self.lane_names: dict | None = None  # index text -> its name, in a store's lanes
        self.lazy_views: dict = {}  # id(view) -> (its place, its line, flat_view?) until used
        self.externs: dict = {}  # extern function name -> (return dtype, argument dtypes)
        self.extern_names: dict = {}  # extern function name -> its Python name in the code
        self.data_owner: dict = {}  # id(buffer data Var) -> the buffer owning that memory
        self.let_values: dict = {}  # id(index let Var) -> its value, through outer lets
        self.uses_flat_view = False  # a parameter's flat view: flat_view(A)
        self.uses_workspaces = False  # workspace_alloc / workspace_free (numba_cpu.workspace)
        self.vector_names: set = set()  # ramp, ramps, broadcast: LLVM vectors (codegen_vector)
        self.in_vectors = False  # writing a vector store as LLVM vectors (codegen_vector)
        self.vector_bases: dict | None = None  # a text named before the store -> its name
        self.vector_patterns: dict | None = None  # id(index) -> its ramps, in one store
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
        return candidate

    def name_of(self, obj) -> str:
        if id(obj) in self.scalars:  # used other than by an element access
            raise _NotScalar(id(obj))
        if id(obj) in self.lazy_views:
            slot, line, flat_view = self.lazy_views.pop(id(obj))
            slot.append(line)
            self.uses_flat_view = self.uses_flat_view or flat_view
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
        self.live.pop()

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
        self.out.append(self.top_pre)
        start = len(self.out)
        self.stmt(func.body)
        if len(self.out) == start and not self.top_pre:
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
        src.uses_lanes = self.uses_lanes
        src.uses_math = self.uses_math
        src.helpers = tuple(helpers)
        src.externs = dict(self.externs)
        src.extern_names = dict(self.extern_names)
        src.uses_packed = self.uses_packed
        src.uses_flat_view = self.uses_flat_view
        src.uses_workspaces = self.uses_workspaces
        src.vector_names = tuple(sorted(self.vector_names))
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



def generate(func: PrimFunc, flavour: Flavour = LNUMPY, name: str | None = None) -> GeneratedSource:
    """Python source of ``func`` in ``flavour`` (``LNUMPY`` or ``NUMBA``).

    Example::

        src = generate(mm_relu)            # def mm_relu(A, B, C): ...
        src.stmt_lines(some_store)         # [12]
    """
    if not isinstance(func, PrimFunc):
        raise TVMTypeError(f"expected a tir.PrimFunc, got {type(func).__name__}")
    func = declare_buffer_views(func)  # lowered TIR indexes flat views it never declares
    not_scalar: frozenset = frozenset()
    while True:
        try:
            return _Generator(func, name or func_name(func), flavour, not_scalar).run()
        except _NotScalar as err:  # that buffer stays an array: generate again
            not_scalar = not_scalar | {err.key}


