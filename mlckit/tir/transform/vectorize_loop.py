"""VectorizeLoop: a ``T.vectorized`` loop of constant extent becomes vector operations.

The loop variable becomes the ramp ``T.Ramp(0, 1, lanes)``; each expression that uses it
becomes a vector (scalars beside it are broadcast), so loads and stores touch all lanes at
once and the loop disappears, as TVM's ``tir.transform.VectorizeLoop``::

    for j in T.vectorized(4):                      A[i * 4:i * 4 + 4] = (
        A[i * 4 + j] = B[i * 4 + j] * 2.0   ──►        B[T.Ramp(i * 4, 1, 4)]
                                                       * T.Broadcast(T.float32(2), 4))

Where a statement cannot become vectors — a condition that differs between lanes
(``if j < n``), an intrinsic that has no vector form, a ``T.if_then_else`` whose condition is a
vector — that statement (the smallest one holding it) becomes a serial loop over the lanes
instead (``for j_s in range(4):``), as TVM scalarizes it.  ``VectorizeLoop(False)`` turns
every vectorized loop into a serial one.

A loop of extent ``T.vscale() * k`` becomes scalable vectors (``T.Ramp(0, 1, T.vscale() *
4)``, dtype ``float32xvscalex4``) when the target has them (Arm SVE: ``-mattr=+sve``; the
target is the function's ``"target"`` attribute, a ``T.attr(target, "target", 0)`` around
the loop, or the ``with target:`` in force); any other extent that is not a positive
constant is an error.  mlckit's backends refuse scalable vectors: they exist at the IR level.

Differences from TVM, which mlckit does not need: no buffer-level predication (an SVE
feature), an allocation or a ramp of ramps inside the loop is scalarized rather than widened
(TVM would build a Shuffle), an intrinsic with a vector form (``T.exp``) becomes a
scalable call inside a scalable loop (TVM stops with an internal error there), and a
vectorized loop inside a vectorized loop is vectorized first (TVM leaves it a loop).

Example::

    mod = tvm.tir.transform.VectorizeLoop()(mod)
"""

from __future__ import annotations

import warnings

from mlckit.arith.analyzer import Analyzer, uses_var
from mlckit.error import InternalError, TVMValueError
from mlckit.ir.transform import FunctionPass, PassInfo
from mlckit.target import Target
from mlckit.tir import dtype as dt
from mlckit.tir import expr as E
from mlckit.tir import stmt as S
from mlckit.tir.expr_vector import (
    Broadcast,
    Ramp,
    broadcast_to,
    is_vscale,
    lanes_of,
    vscale_factor_of,
)
from mlckit.tir.function import PrimFunc
from mlckit.tir.stmt_functor import node_rewriter, post_order_visit

from ._pass import post_order_rewrite

__all__ = ["VECTORIZABLE_OPS", "VectorizeLoop", "vectorize_loop"]

#: intrinsics with a vector form (TVM's ``TVectorizable`` op attribute): a vector argument
#: makes a vector call; any other intrinsic with a vector argument is scalarized
VECTORIZABLE_OPS = frozenset(
    f"tir.{n}" for n in ("pow", "fabs", "floor", "ceil", "round", "trunc", "exp", "exp2",
                         "exp10", "tanh", "sigmoid", "sqrt", "log", "log2", "log10", "tan",
                         "cos", "cosh", "sin", "sinh", "call_llvm_pure_intrin",
                         "call_llvm_intrin"))

_BINARY = (E.Div, E.Mod, E.FloorDiv, E.FloorMod, E.Min, E.Max, E.EQ, E.NE, E.LT, E.LE, E.GT,
           E.GE, E.And, E.Or)


class _Scalarize(Exception):
    """Raised inside an expression that cannot become a vector (TVM's ``need_scalarize_``):
    the statement holding it becomes a serial loop over the lanes."""


def _joint_lanes(*exprs) -> int:
    """The lanes an operation on ``exprs`` has (TVM: the largest lane count or vscale factor,
    scalable if one operand is), as ``dtype.lanes`` counts them (-k: ``T.vscale() * k``)."""
    counts = [lanes_of(e) for e in exprs]
    widest = max(abs(n) for n in counts)
    return -widest if any(n < 0 for n in counts) else widest


class _Vectorizer:
    """The body of one vectorized loop rewritten for the lanes of ``var``: ``extent`` of them
    (an int, or ``T.vscale() * k`` for scalable vectors)."""

    def __init__(self, var: E.Var, extent):
        self.var, self.extent = var, extent
        self.lanes = extent if isinstance(extent, int) else -vscale_factor_of(extent)
        self.ramp = Ramp(E.IntImm(var.dtype, 0), E.IntImm(var.dtype, 1), extent)
        self.let_binding: dict[int, E.PrimExpr] = {}
        self.analyzer = Analyzer()

    # -- expressions -------------------------------------------------------------------------
    def expr(self, e):
        if not isinstance(e, E.PrimExpr):
            return e
        method = _EXPR.get(type(e))
        if method is None:
            # a vector inside a node the vectorizer does not know: keep the lanes apart
            if self._uses_var(e):
                raise _Scalarize
            return e
        return method(self, e)

    def _uses_var(self, e) -> bool:
        return uses_var(e, lambda v: v is self.var or id(v) in self.let_binding)

    def leaf(self, e):
        return e

    def var_(self, e: E.Var):
        if e is self.var:
            return self.ramp
        return self.let_binding.get(id(e), e)

    def add_sub(self, e):
        a, b = self.expr(e.a), self.expr(e.b)
        if a is e.a and b is e.b:
            return e
        build = E.add if isinstance(e, E.Add) else E.sub
        lanes = _joint_lanes(a, b)
        if lanes != 1:
            if lanes_of(a) == 1 and isinstance(b, Ramp):
                zero = E.const(0, b.stride.dtype)
                return Ramp(build(a, b.base), build(zero, b.stride), b.lanes)
            if lanes_of(b) == 1 and isinstance(a, Ramp):
                return Ramp(build(a.base, b), a.stride, a.lanes)
        return build(broadcast_to(a, lanes), broadcast_to(b, lanes))

    def mul(self, e):
        a, b = self.expr(e.a), self.expr(e.b)
        if a is e.a and b is e.b:
            return e
        la, lb = lanes_of(a), lanes_of(b)
        if la != 1 and lb != 1 and (la < 0) != (lb < 0):
            raise InternalError("Fixed length and scalable vectors can't be mixed in "
                                "multiplication.")
        if isinstance(a, Ramp) and lb == 1 and self.analyzer.can_prove(b > 0):
            return Ramp(E.mul(a.base, b), E.mul(a.stride, b), a.lanes)
        if isinstance(b, Ramp) and la == 1 and self.analyzer.can_prove(a > 0):
            return Ramp(E.mul(b.base, a), E.mul(b.stride, a), b.lanes)
        lanes = _joint_lanes(a, b)
        return E.Mul(broadcast_to(a, lanes), broadcast_to(b, lanes))

    def binary(self, e):
        a, b = self.expr(e.a), self.expr(e.b)
        if a is e.a and b is e.b:
            return e
        lanes = _joint_lanes(a, b)
        return type(e)(broadcast_to(a, lanes), broadcast_to(b, lanes))

    def not_(self, e: E.Not):
        a = self.expr(e.a)
        return e if a is e.a else E.Not(a)

    def ramp(self, e: Ramp):
        base, stride = self.expr(e.base), self.expr(e.stride)
        if base is e.base and stride is e.stride:
            return e
        if dt.is_scalable(base.dtype):
            raise InternalError("Creating scalable vectors from existing vectors is not "
                                "supported.")
        if dt.is_scalable(stride.dtype):
            raise InternalError("Ramp stride with scalable dtype is not supported")
        if lanes_of(base) == 1 and lanes_of(stride) == 1:  # a let-bound scalar substituted
            return Ramp(base, stride, e.lanes)
        if lanes_of(stride) == 1:
            if not isinstance(e.lanes, int):
                raise InternalError("Vectorizing over existing scalable vectors is not "
                                    "supported.")
            if isinstance(base, Ramp) and self.analyzer.can_prove(
                    E.EQ(base.stride, E.mul(stride, E.const(base.lanes, stride.dtype)))):
                return Ramp(base.base, stride, e.lanes * base.lanes)
        raise _Scalarize  # a ramp of ramps: TVM builds a Shuffle, mlckit keeps lanes apart

    def broadcast(self, e: Broadcast):
        value = self.expr(e.value)
        if lanes_of(value) != 1:
            raise _Scalarize
        return e

    def select(self, e: E.Select):
        c, t, f = self.expr(e.condition), self.expr(e.true_value), self.expr(e.false_value)
        if c is e.condition and t is e.true_value and f is e.false_value:
            return e
        lanes = _joint_lanes(c, t, f)
        return E.Select(broadcast_to(c, lanes), broadcast_to(t, lanes), broadcast_to(f, lanes))

    def cast(self, e: E.Cast):
        value = self.expr(e.value)
        if value is e.value:
            return e
        return E.Cast(dt.with_lanes(e.dtype, lanes_of(value)), value)

    def load(self, e: E.BufferLoad):
        indices = [self.expr(i) for i in e.indices]
        if all(a is b for a, b in zip(indices, e.indices)):
            return e
        return e.replace(indices=indices)

    def let(self, e: E.Let):
        value = self.expr(e.value)
        if lanes_of(value) != lanes_of(e.value):
            new_var = E.Var(e.var.name_hint, value.dtype)
            self.let_binding[id(e.var)] = new_var
            return E.Let(new_var, value, self.expr(e.body))
        body = self.expr(e.body)
        if value is e.value and body is e.body:
            return e
        return E.Let(e.var, value, body)

    def call(self, e: E.Call):
        name = getattr(e.op, "name", "")
        if name == "tir.if_then_else":
            cond = self.expr(e.args[0])
            if lanes_of(cond) != 1:
                raise _Scalarize
            t, f = self.expr(e.args[1]), self.expr(e.args[2])
            if cond is e.args[0] and t is e.args[1] and f is e.args[2]:
                return e
            lanes = _joint_lanes(t, f)
            return E.Call(dt.with_lanes(e.dtype, lanes), e.op,
                          [cond, broadcast_to(t, lanes), broadcast_to(f, lanes)])
        if name == "tir.reinterpret":
            value = self.expr(e.args[0])
            if value is e.args[0]:
                return e
            n = lanes_of(value)
            if n > 0:  # a scalable vector keeps its vscale factor, as TVM
                n = dt.bits(value.dtype) * n // dt.bits(e.dtype)
            return E.Call(dt.with_lanes(e.dtype, n), e.op, [value])
        if name not in VECTORIZABLE_OPS:
            args = [self.expr(a) for a in e.args]
            if any(lanes_of(a) != 1 for a in args):
                raise _Scalarize
            return e if all(a is b for a, b in zip(args, e.args)) else e.replace(args=args)
        skip = 1 if name in ("tir.call_llvm_pure_intrin", "tir.call_llvm_intrin") else 0
        args = list(e.args[:skip]) + [self.expr(a) for a in e.args[skip:]]
        if all(a is b for a, b in zip(args, e.args)):
            return e
        lanes = _joint_lanes(*args[skip:])
        args = args[:skip] + [broadcast_to(a, lanes) for a in args[skip:]]
        return E.Call(dt.with_lanes(e.dtype, lanes), e.op, args)

    # -- statements --------------------------------------------------------------------------
    def stmt(self, s):
        """``s`` vectorized, or (where one of its expressions cannot be) a serial loop over
        the lanes around the original ``s``."""
        method = _STMT.get(type(s))
        try:
            return method(self, s) if method else self.scalarize(s)
        except _Scalarize:
            return self.scalarize(s)

    def scalarize(self, s):
        if not self._stmt_uses_var(s):
            return s
        idx = E.Var(f"{self.var.name_hint}_s", self.var.dtype)
        body = node_rewriter(lambda x: idx if x is self.var else None)(s)
        extent = (E.IntImm(self.var.dtype, self.extent) if isinstance(self.extent, int)
                  else self.extent)
        return S.For(idx, E.IntImm(self.var.dtype, 0), extent, S.ForKind.SERIAL, body)

    def _stmt_uses_var(self, s) -> bool:
        found = []

        def visit(x):
            if x is self.var:
                found.append(x)
            return x

        post_order_rewrite(s, visit)
        return bool(found)

    def store(self, s: S.BufferStore):
        indices = [self.expr(i) for i in s.indices]
        value = self.expr(s.value)
        if value is s.value and all(a is b for a, b in zip(indices, s.indices)):
            return s
        if dt.is_scalable(s.buffer.dtype):
            raise InternalError("Vectorizing over scalable buffer elements is not supported "
                                "in vectorizer.")
        other = dt.lanes(s.buffer.dtype)
        for i in indices[:-1]:
            if dt.is_scalable(i.dtype):
                raise InternalError("Only the last index can be scalable.")
            other *= lanes_of(i)
        last = lanes_of(indices[-1])
        total = max(other * abs(last), abs(lanes_of(value)))
        if total % other:
            raise InternalError(f"When storing to buffer {s.buffer.name}, cannot produce "
                                f"{total} lanes of storage location by changing the last index.")
        sign = -1 if last < 0 else 1  # a scalable last index makes the store scalable
        indices[-1] = broadcast_to(indices[-1], sign * total // other)
        return s.replace(indices=indices, value=broadcast_to(value, sign * total))

    def for_(self, s: S.For):
        if s.kind == S.ForKind.VECTORIZED:
            warnings.warn("Detect vectorize inside vectorized loop, ignoring...", stacklevel=2)
        extent = self.expr(s.extent)
        if lanes_of(extent) != 1:
            return self.scalarize(s)
        body = self.stmt(s.body)
        if extent is s.extent and body is s.body:
            return s
        return s.replace(extent=extent, body=body)

    def if_(self, s: S.IfThenElse):
        cond = self.expr(s.condition)
        then_case = self.stmt(s.then_case)
        else_case = None if s.else_case is None else self.stmt(s.else_case)
        if lanes_of(cond) != 1:
            return self.scalarize(s)
        if cond is s.condition and then_case is s.then_case and else_case is s.else_case:
            return s
        return S.IfThenElse(cond, then_case, else_case)

    def while_(self, s: S.While):
        raise InternalError("A while loop inside a vectorized loop not supported.")

    def let_stmt(self, s: S.LetStmt):
        value = self.expr(s.value)
        if lanes_of(value) != lanes_of(s.value):
            new_var = E.Var(s.var.name_hint, value.dtype)
            self.let_binding[id(s.var)] = new_var
            return S.LetStmt(new_var, value, self.stmt(s.body))
        body = self.stmt(s.body)
        if value is s.value and body is s.body:
            return s
        return s.replace(value=value, body=body)

    def seq(self, s: S.SeqStmt):
        seq = [self.stmt(x) for x in s.seq]
        return s if all(a is b for a, b in zip(seq, s.seq)) else S.SeqStmt(seq)

    def evaluate(self, s: S.Evaluate):
        value = self.expr(s.value)
        return s if value is s.value else S.Evaluate(value)

    def with_body(self, s):  # AttrStmt, DeclBuffer, AssertStmt: only their body changes
        for field in ("condition", "message"):
            if hasattr(s, field) and self._uses_var(getattr(s, field)):
                raise _Scalarize
        if isinstance(s, S.AttrStmt) and self._uses_var(s.value):
            raise _Scalarize
        body = self.stmt(s.body)
        return s if body is s.body else s.replace(body=body)


_EXPR = {E.IntImm: _Vectorizer.leaf, E.FloatImm: _Vectorizer.leaf,
         E.StringImm: _Vectorizer.leaf, E.Var: _Vectorizer.var_, E.SizeVar: _Vectorizer.var_,
         E.Add: _Vectorizer.add_sub, E.Sub: _Vectorizer.add_sub, E.Mul: _Vectorizer.mul,
         E.Not: _Vectorizer.not_, Ramp: _Vectorizer.ramp, Broadcast: _Vectorizer.broadcast,
         E.Select: _Vectorizer.select, E.Cast: _Vectorizer.cast, E.BufferLoad: _Vectorizer.load,
         E.Let: _Vectorizer.let, E.Call: _Vectorizer.call,
         **{cls: _Vectorizer.binary for cls in _BINARY}}

# statements not listed (Allocate, blocks) are scalarized when they use the loop variable
_STMT = {S.BufferStore: _Vectorizer.store, S.For: _Vectorizer.for_,
         S.IfThenElse: _Vectorizer.if_, S.While: _Vectorizer.while_,
         S.LetStmt: _Vectorizer.let_stmt, S.SeqStmt: _Vectorizer.seq,
         S.Evaluate: _Vectorizer.evaluate, S.AttrStmt: _Vectorizer.with_body,
         S.DeclBuffer: _Vectorizer.with_body, S.AssertStmt: _Vectorizer.with_body}


def _target_has_vla(target) -> bool:
    """Whether ``target`` has scalable vectors (TVM's ``arith::TargetHasVLA``): Arm's SVE
    (``-mattr=+sve``, ``+sve2``) or RISC-V's vector extension (``+v``)."""
    if target is None or getattr(target.kind, "device_type", "") != "cpu":
        return False
    mattr = target.attrs.get("mattr", [])
    mattr = [mattr] if isinstance(mattr, str) else list(mattr)
    if any(a in ("+sve", "+sve2") for a in mattr):
        return True
    return "riscv" in str(target.attrs.get("mtriple", "")) and "+v" in mattr


def _target_text(target) -> str:
    """``target`` as TVM prints it (its keys first), or TVM's ``(nullptr)`` for none."""
    if target is None:
        return "(nullptr)"
    keys = ",".join(target.keys)
    rest = str(target).split(" ", 1)[1:]
    return " ".join([target.kind.name, f"-keys={keys}", *rest])


def _has_vscale(e) -> bool:
    found = []
    post_order_visit(e, lambda x: found.append(x) if is_vscale(x) else None)
    return bool(found)


def _extent_text(extent) -> str:
    factor = vscale_factor_of(extent)
    if factor is not None:  # TVM's parser has simplified 4 * T.vscale() to this
        return f"T.vscale() * {factor}"
    return extent.script() if isinstance(extent, E.PrimExpr) else repr(extent)


def _check_extent(loop: S.For, target):
    """The loop's extent as the vectorizer takes it: an int, or ``T.vscale() * k`` when the
    target has scalable vectors; an InternalError naming the extent and target otherwise."""
    extent = loop.extent
    if not isinstance(extent, E.IntImm) or extent.value < 1:
        scalable = isinstance(extent, E.PrimExpr) and _has_vscale(extent)
        if not (scalable and _target_has_vla(target)):
            # TVM's message (its tests match it), then why and which loop: a symbolic extent
            # is refused when the function is built, as TVM 0.27's tvm.compile refuses it
            text = _extent_text(extent)
            why = ("a scalable vector needs a target with SVE" if scalable
                   else "the extent must be a positive constant")
            raise InternalError(f"Failed to vectorize loop with extent {text} for target "
                                f"{_target_text(target)}: {why} (the loop "
                                f"'{loop.loop_var.name_hint} in T.vectorized({text})'; split "
                                "it by a constant factor and vectorize the inner loop)")
        if vscale_factor_of(extent) is None:
            raise InternalError(f"Failed to vectorize loop with extent {_extent_text(extent)}: "
                                "a scalable vector has T.vscale() * k lanes for a constant k")
    if not (isinstance(loop.min, E.IntImm) and loop.min.value == 0):
        raise InternalError(f"vectorized loop {loop.loop_var.name_hint} must start at 0, it "
                            f"starts at {loop.min.script()}")
    return extent.value if isinstance(extent, E.IntImm) else extent


def _vectorize_all(stmt, target):
    """``stmt`` with each ``T.vectorized`` loop vectorized for ``target``, inner loops first
    (a ``T.attr(target, "target", 0)`` inside names the target of its body)."""

    def rewrite(node):
        if isinstance(node, S.AttrStmt) and node.attr_key == "target" and isinstance(
                node.node, Target):
            body = _vectorize_all(node.body, node.node)
            return node if body is node.body else node.replace(body=body)
        if isinstance(node, S.For) and node.kind == S.ForKind.VECTORIZED:
            # inner vectorized loops first (TVM keeps an inner one as a loop, with a warning;
            # mlckit vectorizes it, and the outer loop then scalarizes what it cannot widen)
            body = _vectorize_all(node.body, target)
            inner = body is not node.body
            node = node.replace(body=body) if inner else node
            lanes = _check_extent(node, target)
            try:
                return _Vectorizer(node.loop_var, lanes).stmt(node.body)
            except TVMValueError:  # a vector of the inner loop cannot widen: x3 -> x9
                if not inner:
                    raise
                warnings.warn(f"the vectorized loop {node.loop_var.name!r} holds a vectorized "
                              "loop whose vectors it cannot widen: it stays a serial loop",
                              stacklevel=2)
                return node.replace(kind=S.ForKind.SERIAL)
        if isinstance(node, E.PrimExpr):
            return node  # no loops inside an expression
        return None

    return node_rewriter(rewrite)(stmt)


def _serial(node):
    if isinstance(node, S.For) and node.kind == S.ForKind.VECTORIZED:
        return node.replace(kind=S.ForKind.SERIAL)
    return node


def vectorize_loop(func: PrimFunc, enable_vectorize: bool = True, target=None) -> PrimFunc:
    """``func`` with each ``T.vectorized`` loop made vector operations (serial loops when
    ``enable_vectorize`` is False).  ``target`` decides whether a ``T.vscale() * k`` extent
    can be vectorized: the function's ``"target"`` attribute, else this argument, else the
    ``with target:`` in force.

    Example::

        func = vectorize_loop(func)
    """
    if not enable_vectorize:
        body = post_order_rewrite(func.body, _serial)
    else:
        own = func.attrs.get("target") if func.attrs else None
        target = own if isinstance(own, Target) else target or Target.current()
        body = _vectorize_all(func.body, target)
    return func if body is func.body else func.replace(body=body)


def VectorizeLoop(enable_vectorize: bool = True) -> FunctionPass:  # noqa: N802 - TVM's name
    """The pass making ``T.vectorized`` loops vector operations, as
    ``tvm.tir.transform.VectorizeLoop``.

    >>> import mlckit as tvm
    >>> from mlckit.script import tir as T
    >>> @T.prim_func
    ... def f(A: T.Buffer((4,), "float32")):
    ...     for j in T.vectorized(4):
    ...         A[j] = A[j] * T.float32(2)
    >>> print(tvm.tir.transform.VectorizeLoop()(tvm.IRModule({"f": f}))["f"].script())
    # from tvm.script import tir as T
    <BLANKLINE>
    @T.prim_func
    def f(A: T.Buffer((4,), "float32")):
        A[0:4] = A[T.Ramp(0, 1, 4)] * T.Broadcast(T.float32(2.0), 4)
    """
    return FunctionPass(lambda func, mod, ctx: vectorize_loop(func, enable_vectorize),
                        PassInfo(0, "VectorizeLoop"), PrimFunc)
