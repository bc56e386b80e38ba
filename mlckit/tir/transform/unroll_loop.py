"""UnrollLoop: a ``T.unroll`` loop becomes one copy of its body per iteration.

``sch.unroll(j_1)`` only marks the loop; this pass writes the copies out, the loop variable
replaced by each value (as in TVM, the indices are not simplified here: ``Simplify`` after it
turns ``x + 0`` into ``x``)::

    for j_1 in T.unroll(4):                         Y[T.Add(i * 4, 0)] = ...
        Y[i * 4 + j_1] = ...               ──►      Y[i * 4 + 1] = ...
                                                    Y[i * 4 + 2] = ...
                                                    Y[i * 4 + 3] = ...

Serial loops with a constant extent are unrolled too when the ``tir.UnrollLoop`` config
(``PassContext(config={"tir.UnrollLoop": {...}})``) asks for it, with TVM's rules and
defaults:

- ``auto_max_step`` (0): a serial loop with no ordinary (kept) loop inside, nested at most
  ``auto_max_depth`` (8) unrolled loops deep, is unrolled when its extent times the number
  of statements its body runs (stores and evaluates, unrolled loops counted out) is at most
  this.  ``T.attr(0, "pragma_auto_unroll_max_step", n)`` sets it for the statements inside
  (the attribute itself goes).
- ``auto_max_extent`` (0): ... or when its extent is at most this; at ``1`` a loop of extent
  0 or 1 is always written out, whatever it contains.
- ``explicit_unroll`` (True): write the copies out; False only marks the loop ``T.unroll``
  (``T.attr(0, "pragma_unroll_explicit", b)`` sets it inside).
- ``unroll_local_access`` (False): a loop whose variable indexes a ``local`` or ``warp``
  buffer is unrolled, so the accesses can become registers.

Variables and buffers defined inside the body get fresh copies, so every copy defines its
own (TVM runs ConvertSSA after the pass for this).

Example::

    mod = tvm.tir.transform.UnrollLoop()(mod)
    with tvm.transform.PassContext(config={"tir.UnrollLoop": {"auto_max_step": 16}}):
        mod = tvm.tir.transform.UnrollLoop()(mod)
"""

from __future__ import annotations

from dataclasses import dataclass

from mlckit.arith.analyzer import Analyzer
from mlckit.error import InternalError
from mlckit.ir.transform import FunctionPass, PassContext, PassInfo
from mlckit.tir import expr as E
from mlckit.tir import stmt as S
from mlckit.tir.function import PrimFunc
from mlckit.tir.stmt_functor import node_rewriter, post_order_visit

from ._config import pass_config
from ._pass import post_order_rewrite

__all__ = ["UnrollLoop", "UnrollLoopConfig", "unroll_loop"]

# the memory whose accesses ``unroll_local_access`` wants as registers (TVM's kLocal, kWarp)
_REGISTER_SCOPES = ("local", "warp")


@dataclass(frozen=True)
class UnrollLoopConfig:
    """The ``tir.UnrollLoop`` pass config (TVM's ``UnrollLoopConfig``, same fields and
    defaults); see the module's docstring for what each does."""

    auto_max_step: int = 0
    auto_max_depth: int = 8
    auto_max_extent: int = 0
    explicit_unroll: bool = True
    unroll_local_access: bool = False

    @classmethod
    def from_context(cls, ctx: PassContext | None = None) -> UnrollLoopConfig:
        """The config of ``ctx`` (the current PassContext by default)."""
        return pass_config(cls, "tir.UnrollLoop", ctx)


def _defined_inside(body) -> set[int]:
    """The ids of the variables and buffers ``body`` defines (loop variables, allocations)."""
    found: set[int] = set()

    def visit(node):
        for name in getattr(type(node), "_def_fields", ()):
            value = getattr(node, name)
            for v in (value if isinstance(value, list) else [value]):
                found.add(id(v))
                if hasattr(v, "data"):  # a buffer's data pointer is defined with it
                    found.add(id(v.data))
        return node

    post_order_rewrite(body, visit)
    return found


class _LoopUnroller:
    """TVM's LoopUnroller: a post-order walk counting the statements run (``step_count``),
    the unrolled loops (``unroll_depth``) and kept loops (``normal_loop_depth``) below."""

    def __init__(self, config: UnrollLoopConfig, register_vars: set[int]):
        self.max_step = config.auto_max_step
        self.max_depth = config.auto_max_depth
        self.max_extent = config.auto_max_extent
        self.explicit = config.explicit_unroll
        self.local_access = config.unroll_local_access
        self.register_vars = register_vars  # ids of the data of local / warp memory
        self.step_count = 0
        self.unroll_depth = 0
        self.normal_loop_depth = 0
        self.touched_local: set[int] = set()  # ids of variables indexing local memory
        self.analyzer = Analyzer()

    # -- statements ---------------------------------------------------------------------
    def visit(self, s):
        if isinstance(s, S.AttrStmt) and s.attr_key == "pragma_auto_unroll_max_step":
            saved, self.max_step = self.max_step, int(getattr(s.value, "value", s.value))
            try:
                return self.visit(s.body)  # the pragma has done its work: it goes
            finally:
                self.max_step = saved
        if isinstance(s, S.AttrStmt) and s.attr_key == "pragma_unroll_explicit":
            saved, self.explicit = self.explicit, bool(getattr(s.value, "value", s.value))
            try:
                return self.visit(s.body)
            finally:
                self.explicit = saved
        if isinstance(s, S.SeqStmt):
            return self.seq(s)
        if isinstance(s, (S.BufferStore, S.Evaluate)):
            self.step_count += 1
        if isinstance(s, S.BufferStore):
            self.mark_local(s.buffer, s.indices)
        self.mark_loads(s)
        s = self.children(s)
        return self.loop(s) if isinstance(s, S.For) else s

    def children(self, s):
        changes = {}
        for name in type(s).field_names():
            value = getattr(s, name)
            if isinstance(value, S.Stmt):
                new = self.visit(value)
                if new is not value:
                    changes[name] = new
        return s.replace(**changes) if changes else s

    def seq(self, s: S.SeqStmt):
        out = []
        for x in s.seq:  # each statement counted on its own, the loop depths the deepest
            step, unroll, normal = self.step_count, self.unroll_depth, self.normal_loop_depth
            self.step_count = self.unroll_depth = self.normal_loop_depth = 0
            out.append(self.visit(x))
            self.step_count += step
            self.normal_loop_depth = max(normal, self.normal_loop_depth)
            self.unroll_depth = max(unroll, self.unroll_depth)
        if all(a is b for a, b in zip(out, s.seq)):
            return s
        return S.stmt_seq(*out) if out else S.Evaluate(0)

    def loop(self, op: S.For):
        value = self.extent(op)
        auto = (op.kind == S.ForKind.SERIAL and value >= 0 and self.normal_loop_depth == 0
                and self.unroll_depth <= self.max_depth
                and (value * self.step_count <= self.max_step or value <= self.max_extent))
        if op.kind == S.ForKind.UNROLLED:
            if value < 0:
                raise InternalError(f"Cannot unroll non-constant loop: {op.loop_var.name!r} "
                                    f"is marked T.unroll but its extent {op.extent} is not "
                                    f"a constant (as TVM, UnrollLoop refuses it)")
            auto = True
        if self.local_access and value > 0 and id(op.loop_var) in self.touched_local:
            auto = True  # its accesses of local memory can then become registers
        if auto:
            self.step_count *= value
            self.unroll_depth += 1
        else:
            self.normal_loop_depth += 1
        if (auto and self.explicit) or (self.max_extent == 1 and 0 <= value <= 1):
            return self.unroll(op, value)
        if auto and op.kind != S.ForKind.UNROLLED:
            return op.replace(kind=S.ForKind.UNROLLED)
        return op

    def unroll(self, op: S.For, value: int):
        defined = _defined_inside(op.body)
        copies = []
        for step in range(value):
            if isinstance(op.min, E.IntImm):
                start = E.IntImm(op.loop_var.dtype, op.min.value + step)
            else:  # as TVM's min + i: folded only when i is 0
                start = op.min if step == 0 else op.min + E.IntImm(op.loop_var.dtype, step)
            copy = node_rewriter(
                lambda x, start=start: start if x is op.loop_var else None,
                copy=lambda x: id(x) in defined)
            copies.append(copy(op.body))
        return S.stmt_seq(*copies) if copies else S.Evaluate(0)

    def extent(self, op: S.For) -> int:
        """The loop's extent if a constant (that fits 32 bits), else -1, as TVM."""
        extent = self.analyzer.simplify(op.extent)
        if isinstance(extent, E.IntImm) and extent.value <= 2**31 - 1:
            return int(extent.value)
        return -1

    # -- local memory accesses ---------------------------------------------------------------
    def is_register_memory(self, buffer) -> bool:
        return id(buffer.data) in self.register_vars or buffer.scope in _REGISTER_SCOPES

    def mark_local(self, buffer, indices) -> None:
        if self.local_access and self.is_register_memory(buffer):
            for index in indices:
                post_order_visit(index, lambda n: self.touched_local.add(id(n))
                                 if isinstance(n, E.Var) else None)

    def mark_loads(self, s) -> None:
        if not self.local_access:
            return
        for name in type(s).field_names():
            values = getattr(s, name)
            for value in (values if isinstance(values, list) else [values]):
                if isinstance(value, E.PrimExpr):
                    post_order_visit(value, lambda n: self.mark_local(n.buffer, n.indices)
                                     if isinstance(n, E.BufferLoad) else None)


def _register_memory(body) -> set[int]:
    found: set[int] = set()
    post_order_visit(body, lambda n: found.add(id(n.buffer_var))
                     if isinstance(n, S.Allocate) and n.scope in _REGISTER_SCOPES else None)
    return found


def unroll_loop(func: PrimFunc, config: UnrollLoopConfig | None = None) -> PrimFunc:
    """``func`` with every ``T.unroll`` loop written out, and the serial loops ``config``
    (by default the current PassContext's ``tir.UnrollLoop``) asks for.

    Example::

        func = unroll_loop(func, UnrollLoopConfig(auto_max_step=16))
    """
    config = config or UnrollLoopConfig.from_context()
    body = _LoopUnroller(config, _register_memory(func.body)).visit(func.body)
    return func if body is func.body else func.replace(body=body)


def UnrollLoop() -> FunctionPass:  # noqa: N802 - TVM's name
    """The pass writing out the loops marked ``T.unroll``, as ``tvm.tir.transform.UnrollLoop``.

    >>> import mlckit as tvm
    >>> from mlckit.script import tir as T
    >>> @T.prim_func
    ... def f(a: T.Buffer((2,), "float32")):
    ...     for i in T.unroll(2):
    ...         a[i] = T.float32(0)
    >>> print(tvm.tir.transform.UnrollLoop()(tvm.IRModule({"f": f}))["f"].script())
    # from tvm.script import tir as T
    <BLANKLINE>
    @T.prim_func
    def f(a: T.Buffer((2,), "float32")):
        a[0] = T.float32(0.0)
        a[1] = T.float32(0.0)
    """
    return FunctionPass(lambda func, mod, ctx: unroll_loop(func, UnrollLoopConfig.from_context(ctx)),
                        PassInfo(0, "UnrollLoop"), PrimFunc)
