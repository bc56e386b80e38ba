"""Simplify: every index and value in its simplest form, knowing what holds where it is.

The arithmetic simplifier (``arith.Analyzer``) rewrites each expression of each statement,
knowing the range of every enclosing loop variable and the condition of every enclosing
``if`` (its negation in the ``else``) and ``assert``; a conditional whose condition becomes
a constant keeps only the branch that runs, an integer let of a pure value is inlined, and
storing what was just loaded from the same place is removed::

    Y[T.Add(k * 128 + j_0 * 4, 0)] = ...     ──►   Y[k * 128 + j_0 * 4] = ...
    for i in range(4):                              for i in range(4):
        if i == n:                         ──►          if i == n:
            if i < n + 1:                                   A[i] = 0
                A[i] = 0
    A[0] = A[0]                            ──►      T.evaluate(0)

TVM's options, given as ``PassContext(config={"tir.Simplify": {...}})``, all off by
default: ``transitively_prove_inequalities`` (``i < j`` and ``j < k`` prove ``i < k``),
``apply_constraints_to_boolean_branches`` (each side of ``and``/``or`` simplified knowing
the other), ``convert_boolean_to_and_of_ors`` (conditions as an AND of ORs) and
``propagate_knowns_to_prove_conditional`` (here: a ``T.assume`` holds for the statements
after it).  Where we differ from TVM: the buffer contents TVM tracks with those last two
``propagate_knowns_*`` options are not tracked (the options are accepted and change nothing
more).  Integer lets are inlined as TVM v0.23 does (TVM 0.27's StmtSimplify keeps every
LetStmt).  ``tvm.tir.transform.Simplify`` is TVM v0.23's name; TVM 0.27 calls it
``StmtSimplify`` (both are here).

Example::

    mod = tvm.tir.transform.Simplify()(mod)
"""

from __future__ import annotations

from mlckit.arith import constraints
from mlckit.arith.analyzer import Analyzer
from mlckit.ir.transform import FunctionPass, PassContext
from mlckit.tir import dtype as dt
from mlckit.tir import expr as E
from mlckit.tir import stmt as S
from mlckit.tir import traversal
from mlckit.tir.function import PrimFunc

from ._pass import make_pass, post_order_rewrite

__all__ = ["Simplify", "StmtSimplify", "simplify"]

# the options of ``tvm.transform.PassContext(config={"tir.Simplify": {...}})``, all off by
# default as in TVM (see the module's docstring for what each does here)
_OPTIONS = ("transitively_prove_inequalities", "propagate_knowns_to_prove_conditional",
            "propagate_knowns_to_simplify_expressions", "convert_boolean_to_and_of_ors",
            "apply_constraints_to_boolean_branches")


def _config() -> dict:
    config = PassContext.current().config
    given = config.get("tir.Simplify", config.get("tirx.StmtSimplify")) or {}
    if not isinstance(given, dict):
        given = {k: getattr(given, k) for k in _OPTIONS if hasattr(given, k)}
    unknown = set(given) - set(_OPTIONS)
    if unknown:
        from mlckit.error import TVMError

        raise TVMError(f"tir.Simplify: unknown option(s) {sorted(unknown)}; "
                       f"the options are {list(_OPTIONS)}")
    return {k: bool(given.get(k, False)) for k in _OPTIONS}


class _Simplifier:
    def __init__(self, options: dict | None = None):
        self.options = options or {k: False for k in _OPTIONS}
        self.analyzer = Analyzer()
        for flag in ("transitively_prove_inequalities", "apply_constraints_to_boolean_branches",
                     "convert_boolean_to_and_of_ors"):
            setattr(self.analyzer, flag, self.options[flag])
        # pure values of LetStmts, substituted into conditions to prove them (TVM's
        # non_inlined_bindings_)
        self.bindings: dict = {}
        # variables in the definitions of buffers (shape, strides, offset, data), which
        # keep their LetStmts (found when the first LetStmt is met in ``body``)
        self.in_buffer_defs: set | None = None
        self.body = None

    def expr(self, e):
        if not isinstance(e, E.PrimExpr):
            return e

        def inner(node):
            if isinstance(node, E.BufferLoad):
                indices = [self.analyzer.simplify(i) for i in node.indices]
                if any(a is not b for a, b in zip(indices, node.indices)):
                    return node.replace(indices=indices)
            return node

        if dt.lanes(e.dtype) != 1:     # arith.vector leaves the loads inside vectors alone
            e = post_order_rewrite(e, inner)
        out = self.analyzer.simplify(e)
        return e if _same(out, e) else out

    def exprs(self, xs):
        new = [self.expr(x) for x in xs]
        return xs if all(a is b for a, b in zip(new, xs)) else new

    def prove(self, cond):
        """The condition's value when it is known (the let-bound values substituted in)."""
        if self.bindings:
            cond = traversal.substitute(cond, self.bindings)
        cond = self.analyzer.simplify(cond)
        return bool(cond.value) if isinstance(cond, E.IntImm) else None

    def stmt(self, s):
        if isinstance(s, S.SeqStmt):
            return self.seq(s)
        if isinstance(s, S.For):
            self.analyzer.bind(s.loop_var, E.Range(s.min, s.extent))
            body = s.body
            if not (isinstance(s.min, E.IntImm) and isinstance(s.extent, E.IntImm)):
                # a symbolic range is known as two inequalities (TVM's StmtSimplifier)
                bounds = E.And(E.GE(s.loop_var, s.min), E.LT(s.loop_var, s.min + s.extent))
                with self.analyzer.constraint_scope(bounds):
                    body = self.stmt(body)
            else:
                body = self.stmt(body)
            return _changed(s, min=self.expr(s.min), extent=self.expr(s.extent), body=body)
        if isinstance(s, S.BufferStore):
            return self.store(s)
        if isinstance(s, S.IfThenElse):
            return self.if_then_else(s)
        if isinstance(s, S.LetStmt):
            return self.let(s)
        if isinstance(s, S.Allocate):
            return _changed(s, extents=self.exprs(s.extents), body=self.stmt(s.body))
        if isinstance(s, S.AttrStmt):
            if s.attr_key in ("thread_extent", "virtual_thread") and isinstance(s.node, E.IterVar):
                self.analyzer.bind(s.node.var, E.Range(0, s.value))
            value = self.expr(s.value) if isinstance(s.value, E.PrimExpr) else s.value
            return _changed(s, value=value, body=self.stmt(s.body))
        if isinstance(s, (S.DeclBuffer, S.While)):
            return _changed(s, body=self.stmt(s.body))
        if isinstance(s, S.AssertStmt):
            cond = self.expr(s.condition)
            with self.analyzer.constraint_scope(cond):
                body = self.stmt(s.body)
            return _changed(s, condition=cond, body=body)
        if isinstance(s, S.Evaluate):
            return _changed(s, value=self.expr(s.value))
        if isinstance(s, S.BlockRealize):
            block = s.block
            for iv in block.iter_vars:
                self.analyzer.bind(iv.var, iv.dom)
            new_block = _changed(block, body=self.stmt(block.body),
                                 init=None if block.init is None else self.stmt(block.init))
            return _changed(s, predicate=self.expr(s.predicate), block=new_block)
        return s

    def let(self, s):
        """An integer let of a pure value is inlined (TVM's StmtSimplifier); the LetStmt stays
        where the variable is still used (a buffer's definition, which expressions
        simplification does not reach)."""
        value = self.expr(E.convert(s.value, s.var.dtype))
        inline = dt.is_int(value.dtype) and dt.lanes(value.dtype) == 1 \
            and constraints.is_pure(value)
        if inline:
            self.analyzer.bind_value(s.var, value)
        elif constraints.is_pure(value):
            self.bindings[s.var] = value
        body = self.stmt(s.body)
        if self.in_buffer_defs is None:
            self.in_buffer_defs = _vars_in_buffer_definitions(self.body)
        if inline and id(s.var) not in self.in_buffer_defs \
                and not traversal.uses_var(body, lambda v: v is s.var):
            return body
        return _changed(s, value=value, body=body)

    def seq(self, s):
        """Each statement in turn; with ``propagate_knowns_to_prove_conditional``, what a
        ``T.assume`` states holds for the statements after it."""
        out = []
        assumed = []
        for x in s.seq:
            if assumed:
                with self.analyzer.constraint_scope(_all(assumed)):
                    out.append(self.stmt(x))
            else:
                out.append(self.stmt(x))
            if self.options["propagate_knowns_to_prove_conditional"]:
                cond = _assumption(x)
                if cond is not None:
                    assumed.append(cond)
        # an unchanged sequence is kept as it is (TVM's mutators rebuild only what changed);
        # a changed one drops its no-ops, T.evaluate(0), as TVM's SeqStmt::Flatten does
        if all(a is b for a, b in zip(out, s.seq)):
            return s
        kept = [x for x in out if not _is_no_op(x)]
        if not kept:
            return S.Evaluate(E.IntImm("int32", 0))
        return kept[0] if len(kept) == 1 else S.stmt_seq(*kept)

    def store(self, s):
        s = _changed(s, value=self.expr(s.value), indices=self.exprs(s.indices))
        load = s.value
        # storing what was just loaded from the same place does nothing (TVM's Simplify)
        if isinstance(load, E.BufferLoad) and load.buffer.data is s.buffer.data \
                and len(load.indices) == len(s.indices) \
                and all(_same(a, b) for a, b in zip(load.indices, s.indices)) \
                and _same_layout(load.buffer, s.buffer):
            return S.Evaluate(E.IntImm("int32", 0))
        return s

    def if_then_else(self, s):
        known = self.prove(s.condition)
        if known is not None:
            taken = s.then_case if known else s.else_case
            return self.stmt(taken) if taken is not None else S.Evaluate(E.IntImm("int32", 0))
        cond = self.expr(s.condition)
        real = cond.args[0] if _is_likely(cond) else cond
        known_then = real
        if self.bindings:
            substituted = traversal.substitute(real, self.bindings)
            if not _same(substituted, real):
                known_then = E.And(real, substituted)
        with self.analyzer.constraint_scope(known_then):
            then_case = self.stmt(s.then_case)
        else_case = None
        if s.else_case is not None:
            with self.analyzer.constraint_scope(constraints.negate(known_then)):
                else_case = self.stmt(s.else_case)
        return _changed(s, condition=cond, then_case=then_case, else_case=else_case)


def _vars_in_buffer_definitions(body) -> set:
    """ids of the variables the definitions of the buffers used in ``body`` mention."""
    buffers = {}

    def visit(node):
        buf = getattr(node, "buffer", None)
        if buf is not None and hasattr(buf, "shape"):
            buffers[id(buf)] = buf

    traversal.post_order_visit(body, visit)
    found: set = set()

    def note(node):
        if isinstance(node, E.Var):
            found.add(id(node))

    for buf in buffers.values():
        for part in (buf.data, buf.elem_offset, *buf.shape, *(buf.strides or [])):
            if isinstance(part, E.PrimExpr):
                traversal.post_order_visit(part, note)
    return found


def _is_no_op(s) -> bool:
    return isinstance(s, S.Evaluate) and isinstance(s.value, E.IntImm) and s.value.value == 0


def _is_likely(e) -> bool:
    return isinstance(e, E.Call) and getattr(e.op, "name", "") == "tir.likely"


def _assumption(s):
    if isinstance(s, S.Evaluate) and isinstance(s.value, E.Call) \
            and getattr(s.value.op, "name", "") == "tir.assume":
        return s.value.args[0]
    return None


def _all(conds):
    out = conds[0]
    for c in conds[1:]:
        out = E.And(out, c)
    return out


def _same_layout(a, b) -> bool:
    fields = ("shape", "strides", "elem_offset")
    return a is b or all(_same(getattr(a, f, None), getattr(b, f, None)) for f in fields)


def _same(a, b) -> bool:
    from mlckit.ir.structural import structural_equal

    return a is b or structural_equal(a, b)


def _changed(node, **fields):
    changes = {k: v for k, v in fields.items() if v is not getattr(node, k)}
    return node.replace(**changes) if changes else node


def simplify(func: PrimFunc) -> PrimFunc:
    """``func`` with its expressions simplified (see the module's docstring).

    Example::

        func = simplify(unroll_loop(func))
    """
    simplifier = _Simplifier(_config())
    simplifier.body = func.body
    # the buffers' shapes are not negative (TVM's MarkBufferMapShapes)
    shapes = [dim for buf in func.buffer_map.values() for dim in buf.shape
              if isinstance(dim, E.PrimExpr) and not isinstance(dim, E.IntImm)]
    if shapes:
        with simplifier.analyzer.constraint_scope(_all([E.GE(d, 0) for d in shapes])):
            body = simplifier.stmt(func.body)
    else:
        body = simplifier.stmt(func.body)
    return func if body is func.body else func.replace(body=body)


def Simplify() -> FunctionPass:  # noqa: N802 - TVM's name
    """The pass simplifying every expression of every PrimFunc, with loop ranges known, as
    ``tvm.tir.transform.Simplify`` (TVM 0.27: ``StmtSimplify``).

    >>> import mlckit as tvm
    >>> from mlckit.script import tir as T
    >>> @T.prim_func
    ... def f(a: T.Buffer((4,), "float32")):
    ...     for i in range(4):
    ...         if i < 8:
    ...             a[i + 0] = T.float32(0)
    >>> print(tvm.tir.transform.Simplify()(tvm.IRModule({"f": f}))["f"].script())
    # from tvm.script import tir as T
    <BLANKLINE>
    @T.prim_func
    def f(a: T.Buffer((4,), "float32")):
        for i in range(4):
            a[i] = T.float32(0.0)
    """
    return make_pass("Simplify", simplify)


def StmtSimplify() -> FunctionPass:  # noqa: N802 - TVM 0.27's name
    """TVM 0.27's name of :func:`Simplify`.

    Example::

        mod = tvm.tirx.transform.StmtSimplify()(mod)
    """
    return make_pass("StmtSimplify", simplify)
