"""Whether the lanes of a ``T.vectorized`` loop interfere.

TVM computes a vectorized loop as one vector operation: every lane reads before any lane
writes. A backend that runs the loop one lane after another (lnumpy) gets the same numbers
only when no lane reads an element another lane writes and no two lanes write one element.
This analysis names the first place where that fails.

Example::

    @T.prim_func
    def shift(A: T.Buffer((8,), "float32")):
        for j in T.vectorized(7):
            A[j + 1] = A[j] * T.float32(2)

    interfering_lanes(shift)
    # "in the T.vectorized loop 'j', a lane reads A[j], an element another lane writes
    #  (A[j + 1]): TVM reads every lane before any writes"
"""

from __future__ import annotations

from mlckit.arith.analyzer import Analyzer
from mlckit.ir import structural_equal
from mlckit.tir import stmt as S
from mlckit.tir.expr import BufferLoad, IntImm
from mlckit.tir.traversal import post_order_visit, substitute, uses_var

__all__ = ["interfering_lanes"]


def interfering_lanes(func) -> str | None:
    """A sentence saying how the lanes of some ``T.vectorized`` loop of ``func`` (a PrimFunc
    or a statement) interfere, or None when no lanes do.  Block iterators are replaced by
    their bindings, so two blocks of one loop compare in the loop's variables."""
    body = getattr(func, "body", func)
    found: list = []

    def visit(node):
        if not found and isinstance(node, S.For) and node.kind == S.ForKind.VECTORIZED:
            message = _loop_interference(node)
            if message:
                found.append(message)

    post_order_visit(body, visit)
    return found[0] if found else None


def _loop_interference(loop: S.For) -> str | None:
    if isinstance(loop.extent, IntImm) and loop.extent.value <= 1:
        return None  # one lane
    stores, loads = [], []
    _accesses(loop.body, {}, stores, loads)
    var = loop.loop_var
    name = var.name
    for buf, index in stores:
        if not any(uses_var(i, lambda v: v is var) for i in index):
            return (f"in the T.vectorized loop {name!r}, every lane writes "
                    f"{_show(buf, index)}: TVM keeps the last lane's value")
    written = {id(buf) for buf, _ in stores}
    inner: set = set()
    units: dict = {}  # a loop of one iteration inside is its start (ax0_1 of compute_at)

    def note(n):
        if isinstance(n, S.For):
            inner.add(id(n.loop_var))
            if isinstance(n.extent, IntImm) and n.extent.value == 1:
                units[n.loop_var] = n.min

    post_order_visit(loop.body, note)
    if units:
        ana = Analyzer()
        stores = [(b, [ana.simplify(substitute(i, units)) for i in idx]) for b, idx in stores]
        loads = [(b, [ana.simplify(substitute(i, units)) for i in idx]) for b, idx in loads]
    for buf, index in loads:
        if id(buf) not in written:
            continue
        for sbuf, sindex in stores:
            if sbuf is buf and not _lane_owned(index, sindex, var, inner) and \
                    _may_meet(index, sindex, var, loop.extent):
                return (f"in the T.vectorized loop {name!r}, a lane reads "
                        f"{_show(buf, index)}, an element another lane writes "
                        f"({_show(sbuf, sindex)}): TVM reads every lane before any writes")
    return None


def _lane_owned(load, store, var, inner: set) -> bool:
    """Whether some dimension of both accesses is the same expression of the lane ``var``
    alone (and of loops outside the vectorized one), one-to-one in it: there each lane
    touches its own elements (``C[ax0, j]`` written and ``C[ax0, k]`` read, ``ax0`` the
    lane, ``j`` and ``k`` loops inside it)."""
    ana = Analyzer()
    for a, b in zip(load, store):
        if not structural_equal(a, b) or uses_var(a, lambda v: id(v) in inner):
            continue
        terms, _ = ana.linear_terms(a)
        steps = [c for atom, c in terms if atom is var]
        if steps and steps[0] != 0 and not any(
                atom is not var and uses_var(atom, lambda v: v is var) for atom, _ in terms):
            return True
    return False


def _may_meet(load, store, var, extent) -> bool:
    """Whether lane ``j`` may read the element lane ``j' != j`` writes.  Exact when the two
    index lists differ in one affine index by a constant (``A[j + 8]`` read, ``A[j]``
    written over 8 lanes: never); otherwise True unless they are equal."""
    if structural_equal(list(load), list(store)):
        return False
    differing = [(a, b) for a, b in zip(load, store) if not structural_equal(a, b)]
    if len(differing) != 1 or not isinstance(extent, IntImm):
        return True
    ana = Analyzer()
    terms, gap = ana.linear_terms(differing[0][0] - differing[0][1])
    if terms:  # not a constant distance
        return True
    step = [c for atom, c in ana.linear_terms(differing[0][1])[0] if atom is var]
    if len(step) != 1 or step[0] == 0:
        return True
    lanes, rest = divmod(abs(gap), abs(step[0]))
    return rest == 0 and 0 < lanes < extent.value


def _accesses(stmt, env: dict, stores: list, loads: list) -> None:
    """The stores and loads under ``stmt``, block iterators replaced by their bindings."""
    if isinstance(stmt, S.BlockRealize):
        inner = dict(env)
        for iv, value in zip(stmt.block.iter_vars, stmt.iter_values):
            inner[id(iv.var)] = substitute(value, env) if env else value
        for part in (stmt.predicate, stmt.block.init, stmt.block.body):
            if part is not None:
                _accesses(part, inner, stores, loads)
        return
    if isinstance(stmt, S.BufferStore):
        stores.append((stmt.buffer, [substitute(i, env) for i in stmt.indices]))
        _loads(stmt.value, env, loads)
        for i in stmt.indices:
            _loads(i, env, loads)
        return
    if isinstance(stmt, S.Stmt):
        for field in stmt.field_names():
            value = getattr(stmt, field)
            for child in value if isinstance(value, (list, tuple)) else [value]:
                if isinstance(child, S.Stmt):
                    _accesses(child, env, stores, loads)
                elif child is not None and hasattr(child, "dtype"):
                    _loads(child, env, loads)


def _loads(expr, env: dict, loads: list) -> None:
    post_order_visit(expr, lambda n: isinstance(n, BufferLoad) and loads.append(
        (n.buffer, [substitute(i, env) for i in n.indices])))


def _show(buf, index) -> str:
    return f"{buf.name}[{', '.join(str(i) for i in index)}]"
