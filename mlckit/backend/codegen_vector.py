"""Vector expressions (``T.Ramp``, ``T.Broadcast``, ``float32x4`` values) printed as Python:
what ``tir.transform.VectorizeLoop`` leaves, shown two ways.  A printer, not a rewrite: the
lowered TIR is printed as it is.

lnumpy writes whole NumPy vectors: a ramp index of constant stride is a slice, a broadcast
is its one value (NumPy broadcasts it beside a vector)::

    A[0:4] = A[T.Ramp(0, 1, 4)] * T.Broadcast(T.float32(2), 4)
    ──►  A[0:4] = A[0:4:1] * np.float32(2.0)

(a load's slice gives its step: lnumpy reads ``A[0:4]`` as a view of A's memory, a tile).

numba (CPU and CUDA) writes lanes: every lane's value first, then every lane stored (a vector store reads
all its lanes before it writes any), which LLVM's SLP vectorizer packs into vector
instructions, as ``codegen_lanes`` does for ``T.vectorized`` loops::

    # a vector store of 4 lanes: each computed before any is stored
    A_v0 = A[0] * np.float32(2.0)
    ...
    A[0] = A_v0
    ...

A vector ``LetStmt`` variable is one scalar per lane in numba (``v_0`` … ``v_3``).

Example::

    lnumpy.build(tvm.lower(mod)["main"]).source     # the slices above
"""

from __future__ import annotations

from mlckit.tir import dtype as dt
from mlckit.tir import expr as E
from mlckit.tir.expr_vector import Broadcast, Ramp, lanes_of
from mlckit.tir.stmt import BufferStore, LetStmt

from .codegen_common import P_ADD, P_ATOM, P_COND, CodegenError, np_scalar

__all__ = ["VectorExprs", "lane_of"]


def lane_of(e, k: int, lane_vars: dict):
    """The scalar expression lane ``k`` of the vector expression ``e`` computes
    (``lane_vars``: id(vector Var) -> its lanes' scalar Vars)."""
    if not isinstance(e, E.PrimExpr) or lanes_of(e) == 1:
        return e
    if isinstance(e, Ramp):
        return E.add(e.base, E.mul(e.stride, E.const(k, e.stride.dtype)))
    if isinstance(e, Broadcast):
        return e.value
    if isinstance(e, E.Var):
        if id(e) not in lane_vars:
            raise CodegenError(f"the vector variable {e.name_hint!r} is used but never defined")
        return lane_vars[id(e)][k]
    if isinstance(e, E.BufferLoad):
        return E.BufferLoad(e.buffer, [lane_of(i, k, lane_vars) for i in e.indices])
    if isinstance(e, E.BinaryOpExpr):
        return type(e)(lane_of(e.a, k, lane_vars), lane_of(e.b, k, lane_vars))
    if isinstance(e, E.Not):
        return E.Not(lane_of(e.a, k, lane_vars))
    if isinstance(e, E.Select):
        return E.Select(*(lane_of(x, k, lane_vars)
                          for x in (e.condition, e.true_value, e.false_value)))
    if isinstance(e, E.Cast):
        return E.Cast(dt.element_of(e.dtype), lane_of(e.value, k, lane_vars))
    if isinstance(e, E.Call):
        return E.Call(dt.element_of(e.dtype), e.op, [lane_of(a, k, lane_vars) for a in e.args])
    raise CodegenError(f"a {e.dtype} {type(e).__name__} cannot be written lane by lane")


def is_vector_store(s: BufferStore) -> bool:
    return lanes_of(s.value) > 1 or any(lanes_of(i) > 1 for i in s.indices)


class VectorExprs:
    """Mixin of the generator: vector stores, lets and expressions (module docstring)."""

    # -- statements (hooks called by StmtWriter) --------------------------------------------
    def vector_store(self, s: BufferStore) -> bool:
        """Write the vector store ``s``; False when ``s`` is a scalar store."""
        if not is_vector_store(s):
            return False
        if self.flavour.numpy_vectors:
            target = self.buffer_access(s.buffer, s.indices, store=True)
            self.emit(f"{target} = {self.expr_text(s.value, store=True)}", s)
            return True
        lanes = lanes_of(s.value) if lanes_of(s.value) > 1 else max(lanes_of(i) for i in s.indices)
        lane_vars = self.vector_lane_vars()
        name = self.name_of(s.buffer)
        temps = []
        self.emit(f"# a vector store of {lanes} lanes: each computed before any is stored", s)
        for k in range(lanes):
            temp = E.Var(f"{name}_v{k}", dt.element_of(s.value.dtype))
            text = self.expr_text(lane_of(s.value, k, lane_vars))
            temps.append(self.bind(temp, temp.name_hint, temp.dtype))
            self.emit(f"{temps[-1]} = {text}", s)
        for k in range(lanes):
            indices = [lane_of(i, k, lane_vars) for i in s.indices]
            self.emit(f"{self.buffer_access(s.buffer, indices)} = {temps[k]}", s)
        return True

    def vector_let(self, s: LetStmt) -> bool:
        """Lanes: a vector LetStmt is one scalar variable per lane; False otherwise."""
        if self.flavour.numpy_vectors or lanes_of(s.value) == 1:
            return False
        lane_vars = self.vector_lane_vars()
        self.push_scope()
        lanes = []
        for k in range(lanes_of(s.value)):
            var = E.Var(f"{s.var.name_hint}_{k}", dt.element_of(s.var.dtype))
            text = self.expr_text(lane_of(s.value, k, lane_vars))
            self.emit(f"{self.bind(var, var.name_hint, var.dtype)} = {text}", s)
            lanes.append(var)
        lane_vars[id(s.var)] = lanes
        self.stmt(s.body)
        self.pop_scope()
        return True

    def vector_lane_vars(self) -> dict:
        if not hasattr(self, "_vector_lane_vars"):
            self._vector_lane_vars = {}
        return self._vector_lane_vars

    # -- expressions (lnumpy: whole NumPy vectors) -------------------------------------------
    def vector_index(self, index, store: bool = False) -> str:
        """A buffer index: a ramp of constant positive stride is a slice.  A load's slice says
        its step (``A[0:4:1]``): in lnumpy ``A[0:4]`` read is a view of A's memory (a tile)."""
        if isinstance(index, Ramp) and isinstance(index.stride, E.IntImm) and index.stride.value > 0:
            span = index.lanes * index.stride.value
            step = "" if index.stride.value == 1 and store else f":{index.stride.value}"
            if isinstance(index.base, E.IntImm):
                return f"{index.base.value}:{index.base.value + span}{step}"
            base = self.expr(index.base, P_ADD)
            return f"{base}:{base} + {span}{step}"
        return self.expr(index, 0)

    def vector_prec(self, e, weak) -> tuple[str, int] | None:
        """The NumPy text of the vector ``e`` where it differs from the scalar text (None:
        the scalar text holds for NumPy arrays too)."""
        if not self.flavour.numpy_vectors:
            raise CodegenError(f"{self.name}: a {e.dtype} {type(e).__name__} outside a vector "
                               "store or let cannot be written lane by lane")
        if isinstance(e, Ramp):
            lanes = f"np.arange({e.lanes})"
            if not (isinstance(e.stride, E.IntImm) and e.stride.value == 1):
                lanes = f"{lanes} * {self.expr(e.stride, P_ATOM + 1)}"
            if isinstance(e.base, E.IntImm) and e.base.value == 0:
                return lanes, P_ADD
            return f"{self.expr(e.base, P_ADD)} + {lanes}", P_ADD
        if isinstance(e, Broadcast):  # beside a vector, NumPy broadcasts the one value
            return self.expr_prec(e.value, weak)
        if isinstance(e, (E.Min, E.Max)):
            fn = "np.minimum" if isinstance(e, E.Min) else "np.maximum"
            return f"{fn}({self.expr(e.a, 0)}, {self.expr(e.b, 0)})", P_ATOM
        if isinstance(e, (E.And, E.Or)):
            fn = "np.logical_and" if isinstance(e, E.And) else "np.logical_or"
            return f"{fn}({self.expr(e.a, 0)}, {self.expr(e.b, 0)})", P_ATOM
        if isinstance(e, E.Not):
            return f"np.logical_not({self.expr(e.a, 0)})", P_ATOM
        if isinstance(e, E.Select) or (isinstance(e, E.Call)
                                       and getattr(e.op, "name", "") == "tir.if_then_else"):
            c, t, f = ((e.condition, e.true_value, e.false_value) if isinstance(e, E.Select)
                       else e.args)
            if lanes_of(c) == 1:
                return (f"({self.expr(t, P_COND + 1)} if {self.expr(c, P_COND + 1)} "
                        f"else {self.expr(f, P_COND)})", P_ATOM)
            return f"np.where({self.expr(c, 0)}, {self.expr(t, 0)}, {self.expr(f, 0)})", P_ATOM
        if isinstance(e, E.Cast):  # np.float32(array) converts every element
            return f"{np_scalar(dt.element_of(e.dtype))}({self.expr(e.value, 0)})", P_ATOM
        if isinstance(e, E.Div) and not dt.is_float(e.dtype):  # rounding toward zero, as C
            return (f"{np_scalar(dt.element_of(e.dtype))}(np.fix({self.expr(e.a, P_ATOM)} / "
                    f"{self.expr(e.b, P_ATOM)}))"), P_ATOM
        if isinstance(e, E.Mod) and not dt.is_float(e.dtype):  # the sign of a, as C
            return f"np.fmod({self.expr(e.a, 0)}, {self.expr(e.b, 0)})", P_ATOM
        if isinstance(e, E.Let):
            raise CodegenError(f"{self.name}: a vector T.Let expression is not supported")
        return None
