"""CommonSubexprElimTIR: an index expression computed more than once in a loop's body is
computed once, into a variable (TVM's ``CommonSubexprElimTIR``, 0.27's ``CommonSubexprElim``).

Each loop body (and the function's body) is a scope.  An expression that appears at least
twice among the statements of a scope (nested loops are scopes of their own) is bound by a
``LetStmt`` at the top of the scope and each occurrence reads the variable; the largest
expressions are named first, then the parts they still share with the rest::

    for i, j_0, k, j_1 in T.grid(128, 32, 128, 4):      for i, j_0, k, j_1 in T.grid(128, 32, 128, 4):
        if k == 0:                                          cse_var_1: T.int32 = i * 128
            Y[i * 128 + j_0 * 4 + j_1] = 0.0      ──►       cse_var_2: T.int32 = j_0 * 4
        Y[i * 128 + j_0 * 4 + j_1] = (                      cse_var_3: T.int32 = cse_var_1 + cse_var_2 + j_1
            Y[i * 128 + j_0 * 4 + j_1]                      if k == 0:
            + A[i * 128 + k] * B[k * 128 + j_0 * 4 + j_1])      Y[cse_var_3] = 0.0
                                                            Y[cse_var_3] = Y[cse_var_3] + A[cse_var_1 + k] * B[k * 128 + cse_var_2 + j_1]

What is named: integer arithmetic (``+ - * // %``, ``min``, ``max``, casts) on variables and
constants, not a lone variable or constant.  As in TVM, nothing that reads memory or calls
a function is named (a load's value may change between two reads).  TVM also names
floating-point arithmetic of that kind; mlckit names index arithmetic only, which is what
TIR repeats after FlattenBuffer.  Division and remainder are named only by a constant other
than zero, so that evaluating one at the top of the scope, where an ``if`` guarded it, cannot
fail.  An expression using a variable bound inside the scope (a ``LetStmt``) stays.

Why mlckit runs it: Numba types and lowers each occurrence of an index separately; the
course's ``mm_relu`` with its index named once compiles about 10% faster, and the generated
Python reads as TVM's lowered TIR does.

Example::

    mod = tvm.tir.transform.CommonSubexprElimTIR()(mod)
"""

from __future__ import annotations

import itertools

from mlckit.tir import dtype as dt
from mlckit.tir import expr as E
from mlckit.tir import stmt as S
from mlckit.tir.expr_vector import lanes_of
from mlckit.tir.function import PrimFunc

from ._pass import make_pass

__all__ = ["CommonSubexprElim", "CommonSubexprElimTIR", "common_subexpr_elim"]

_ARITH = (E.Add, E.Sub, E.Mul, E.Min, E.Max)
_BY_CONSTANT = (E.FloorDiv, E.FloorMod, E.Div, E.Mod)
# statements whose statements are scopes of their own (a loop's body, a block's init and
# body; a launched thread's body too, _in_scope): the variables they bind are bound there
_SCOPES = (S.For, S.While, S.Block)
_THREAD_KEYS = ("thread_extent", "virtual_thread")  # T.launch_thread binds its variable


class _Table:
    """The occurrences of every nameable expression among one scope's statements."""

    def __init__(self):
        self.inner_vars: set[int] = set()  # ids of the variables bound inside the scope
        self.keys: dict[int, tuple | None] = {}  # id(expr) -> its key (None: not nameable)
        self.count: dict[tuple, int] = {}
        self.first: dict[tuple, E.PrimExpr] = {}  # key -> its first occurrence
        self.size: dict[tuple, int] = {}  # key -> its number of nodes
        self.parts: dict[tuple, list] = {}  # key -> the keys of its nameable operands

    def key(self, e) -> tuple | None:
        """``e``'s structural key when it is nameable arithmetic, or a variable or constant
        that can be part of one; else None."""
        k = self.keys.get(id(e), ...)
        if k is ...:
            k = self.keys[id(e)] = self._key(e)
        return k

    def _key(self, e) -> tuple | None:
        if isinstance(e, E.Var):
            return None if id(e) in self.inner_vars else ("var", id(e))
        if isinstance(e, E.IntImm):
            return ("int", e.dtype, e.value)
        if isinstance(e, _BY_CONSTANT) and not (isinstance(e.b, E.IntImm) and e.b.value):
            return None  # a division by a variable could fail where an ``if`` guarded it
        if not (isinstance(e, (*_ARITH, *_BY_CONSTANT, E.Cast)) and lanes_of(e) == 1
                and dt.is_int(e.dtype)):
            return None
        keys = [self.key(c) for c in _operands(e)]
        return None if None in keys else (type(e).__name__, e.dtype, *keys)

    def note_stmt(self, s) -> None:
        """A statement of the scope: a ``LetStmt`` binds its variable inside it (met before
        its body, where the variable is used)."""
        if isinstance(s, S.LetStmt):
            self.inner_vars.add(id(s.var))

    def visit(self, e) -> None:
        """Count every nameable expression in ``e``, each occurrence."""
        if not isinstance(e, E.Let):  # its variable is bound inside it: nothing below is named
            for x in _operands(e):
                self.visit(x)
        k = self.key(e)
        if k is not None and k[0] not in ("var", "int"):
            self.count[k] = self.count.get(k, 0) + 1
            if k not in self.first:  # its operands are counted already
                self.first[k] = e
                self.size[k] = 1 + sum(self.size.get(p, 1) for p in k[2:])
                self.parts[k] = [p for p in k[2:] if p in self.size]

    def chosen(self) -> list[tuple]:
        """The keys to name, largest first: each one still computed twice once the larger
        ones are named (naming one leaves one occurrence of its parts, in its value)."""
        count = dict(self.count)
        chosen = []
        for k in sorted(self.count, key=lambda k: -self.size[k]):  # stable: first seen first
            if count[k] < 2:
                continue
            chosen.append(k)
            for part, times in self._occurrences(k).items():
                count[part] -= (count[k] - 1) * times
        return chosen

    def _occurrences(self, k) -> dict:
        """How many times each nameable part occurs inside the expression of key ``k``."""
        out: dict = {}
        for p in self.parts[k]:
            out[p] = out.get(p, 0) + 1
            for q, n in self._occurrences(p).items():
                out[q] = out.get(q, 0) + n
        return out


def _operands(e) -> list:
    """The expressions directly inside ``e``."""
    out = []
    for name in type(e).field_names():
        value = getattr(e, name)
        out.extend(x for x in (value if isinstance(value, list) else [value])
                   if isinstance(x, E.PrimExpr))
    return out


def _in_scope(s, name: str) -> bool:
    """Whether the statement in field ``name`` of ``s`` belongs to ``s``'s scope (a loop's
    body, a block's init and body, a launched thread's body do not)."""
    return not (isinstance(s, _SCOPES) or (isinstance(s, S.AttrStmt)
                                           and s.attr_key in _THREAD_KEYS))


def _walk_scope(s, on_stmt, on_expr):
    """``on_stmt`` on each statement of ``s``'s scope, ``on_expr`` on each of their
    expressions; a nested scope's own expressions (a loop's extent) belong to this one."""
    on_stmt(s)
    for name in type(s).field_names():
        value = getattr(s, name)
        for x in value if isinstance(value, list) else [value]:
            if isinstance(x, E.PrimExpr):
                on_expr(x)
            elif isinstance(x, S.Stmt) and _in_scope(s, name):
                _walk_scope(x, on_stmt, on_expr)


def _rebuild(s, on_expr, on_stmt):
    """``s`` with each expression field rewritten by ``on_expr`` and each statement field by
    ``on_stmt(parent, field, stmt)``; unchanged fields keep their objects."""
    changes = {}
    for name in type(s).field_names():
        old = getattr(s, name)
        if isinstance(old, E.PrimExpr):
            new = on_expr(old)
        elif isinstance(old, S.Stmt):
            new = on_stmt(s, name, old)
        elif isinstance(old, list) and old and isinstance(old[0], (E.PrimExpr, S.Stmt)):
            new = [on_expr(x) if isinstance(x, E.PrimExpr) else on_stmt(s, name, x) for x in old]
            new = old if all(a is b for a, b in zip(new, old)) else new
        else:
            continue
        if new is not old:
            changes[name] = new
    return s.replace(**changes) if changes else s


class _Namer:
    def __init__(self):
        self.counter = itertools.count(1)

    def scope(self, body: S.Stmt) -> S.Stmt:
        """``body`` with its repeated expressions named, then its nested scopes'."""
        table = _Table()
        _walk_scope(body, table.note_stmt, table.visit)
        chosen = table.chosen()
        if chosen:
            body = self._bind(body, table, chosen)
        return self.nested(body)

    def _bind(self, body: S.Stmt, table: _Table, chosen: list) -> S.Stmt:
        # defined smallest first (a value uses only names chosen after it), numbered so
        names = {k: E.Var(f"cse_var_{next(self.counter)}", table.first[k].dtype)
                 for k in reversed(chosen)}

        def rewrite(e, top=False):
            if not top and table.keys.get(id(e)) in names:
                return names[table.keys[id(e)]]
            if isinstance(e, (E.Var, E.IntImm, E.FloatImm, E.StringImm, E.Let)):
                return e
            return _rebuild(e, rewrite, lambda parent, name, x: x)

        def in_scope(s):
            return _rebuild(s, rewrite, lambda parent, name, x: in_scope(x)
                            if _in_scope(parent, name) else x)

        body = in_scope(body)
        for k in chosen:  # wrapped largest first: the smallest ends outermost
            body = S.LetStmt(names[k], rewrite(table.first[k], top=True), body)
        return body

    def nested(self, s: S.Stmt) -> S.Stmt:
        """``s`` with the body of each scope inside it named (``scope``)."""
        return _rebuild(s, lambda e: e, lambda parent, name, x: self.nested(x)
                        if _in_scope(parent, name) else self.scope(x))


def common_subexpr_elim(func: PrimFunc) -> PrimFunc:
    """``func`` with each scope's repeated index expressions computed once (module
    docstring).

    Example::

        lowered = common_subexpr_elim(numba_cpu.lower(mm_relu))
    """
    body = _Namer().scope(func.body)
    return func if body is func.body else func.replace(body=body)


def CommonSubexprElimTIR():  # noqa: N802 - TVM's name
    """The pass: each loop body's repeated index arithmetic computed once (module docstring).

    Example::

        mod = tvm.tir.transform.CommonSubexprElimTIR()(mod)
    """
    return make_pass("CommonSubexprElimTIR", common_subexpr_elim)


def CommonSubexprElim():  # noqa: N802 - TVM 0.27's name
    """``CommonSubexprElimTIR`` under TVM 0.27's name (``tvm.tirx.transform``).

    Example::

        mod = tvm.tirx.transform.CommonSubexprElim()(mod)
    """
    return make_pass("CommonSubexprElim", common_subexpr_elim)
