"""Vector expressions (``T.Ramp``, ``T.Broadcast``, ``float32x4`` values) printed as Python:
what ``tir.transform.VectorizeLoop`` leaves, shown two ways.  A printer, not a rewrite: the
lowered TIR is printed as it is.

lnumpy writes whole NumPy vectors: a ramp index of constant stride is a slice, a broadcast
is its one value (NumPy broadcasts it beside a vector)::

    A[0:4] = A[T.Ramp(0, 1, 4)] * T.Broadcast(T.float32(2), 4)
    ──►  A[0:4] = A[0:4:1] * np.float32(2.0)

(a load's slice gives its step: lnumpy reads ``A[0:4]`` as a view of A's memory, a tile).

numba_cpu writes a store of arithmetic on ramps and broadcasts as LLVM vectors, one
statement (``codegen_vector_llvm``).  Otherwise numba (CPU and CUDA) writes lanes: every
lane's value first, then every lane stored (a vector store reads all its lanes before it
writes any), which LLVM's SLP vectorizer packs into vector instructions::

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

from mlckit.arith.analyzer import Analyzer
from mlckit.ir.structural import structural_equal
from mlckit.tir import dtype as dt
from mlckit.tir import expr as E
from mlckit.tir.expr_vector import Broadcast, Ramp, lanes_of
from mlckit.tir.stmt import BufferStore, LetStmt
from mlckit.tir.stmt_functor import post_order_visit

from .codegen_common import P_ADD, P_ATOM, P_COND, CodegenError, is_index_arithmetic, np_scalar

#: bytes of one chunk of a vector store's lanes: a zmm register (16 float32 lanes)
CHUNK_BYTES = 64

__all__ = ["VectorExprs", "lane_of"]


# integer arithmetic on a lane's constants folds as it is built (TIR's own constructors)
_FOLD_INT = {E.Add: E.add, E.Sub: E.sub, E.Mul: E.mul, E.FloorDiv: E.floordiv,
             E.FloorMod: E.floormod}


def lane_of(e, k: int, lane_vars: dict, simplify=None):
    """The scalar expression lane ``k`` of the vector expression ``e`` computes
    (``lane_vars``: id(vector Var) -> its lanes' scalar Vars).  ``simplify``: applied to an
    index that is not a ramp, for a symbolic ``k`` (``(c * 16 + 5) // 4 * 64`` -> ``c * 256 +
    64``)."""
    if not isinstance(e, E.PrimExpr) or lanes_of(e) == 1:
        return e
    if isinstance(e, Ramp):
        if isinstance(k, int):
            return E.add(e.base, E.mul(e.stride, E.const(k, e.stride.dtype)))
        return E.add(e.base, E.mul(e.stride, k) if not _is_one(e.stride) else k)
    if isinstance(e, Broadcast):
        return lane_vars.get(id(e), e.value)  # held in a scalar (``store_lanes``)
    if isinstance(e, E.Var):
        if id(e) not in lane_vars:
            raise CodegenError(f"the vector variable {e.name_hint!r} is used but never defined")
        return lane_vars[id(e)][k]
    if isinstance(e, E.BufferLoad):
        return E.BufferLoad(e.buffer, [lane_index_of(i, k, lane_vars, simplify)
                                       for i in e.indices])
    if isinstance(e, E.BinaryOpExpr):
        a, b = lane_of(e.a, k, lane_vars, simplify), lane_of(e.b, k, lane_vars, simplify)
        fold = _FOLD_INT.get(type(e)) if dt.is_int(a.dtype) else None
        return fold(a, b) if fold else type(e)(a, b)  # lane 3 of (ramp // 8): 0, not 3 // 8
    if isinstance(e, E.Not):
        return E.Not(lane_of(e.a, k, lane_vars, simplify))
    if isinstance(e, E.Select):
        return E.Select(*(lane_of(x, k, lane_vars, simplify)
                          for x in (e.condition, e.true_value, e.false_value)))
    if isinstance(e, E.Cast):
        return E.Cast(dt.element_of(e.dtype), lane_of(e.value, k, lane_vars, simplify))
    if isinstance(e, E.Call):
        return E.Call(dt.element_of(e.dtype), e.op,
                      [lane_of(a, k, lane_vars, simplify) for a in e.args])
    raise CodegenError(f"a {e.dtype} {type(e).__name__} cannot be written lane by lane")


def lane_index_of(index, k, lane_vars: dict, simplify=None):
    """Lane ``k`` of a buffer index: ``lane_of``, simplified when ``index`` is a vector that
    is not a ramp and ``simplify`` is given."""
    lane = lane_of(index, k, lane_vars, simplify)
    if simplify is not None and lanes_of(index) > 1 and not isinstance(index, Ramp):
        return simplify(lane)
    return lane


def lane_offsets(index, lanes: int):
    """The constant each lane of the vector ``index`` adds to a part shared by every lane,
    or None when the lanes do not share one (``r // 4 * 64 + r % 4`` over 64 lanes -> 0, 1,
    2, 3, 64, 65, ...)."""
    parts = [_split_offset(lane_of(index, k, {})) for k in range(lanes)]
    rest = parts[0][0]
    if any((r is None) != (rest is None) or (r is not None and not structural_equal(r, rest))
           for r, _ in parts):
        return None
    return [offset for _, offset in parts]


def _split_offset(e) -> tuple:
    """``e`` as (its part that is not a constant, or None; the constant added to it):
    ``i * 32 + (C_chunk * 16 + 1)`` -> ``(i * 32 + C_chunk * 16, 1)``."""
    if isinstance(e, E.IntImm):
        return None, e.value
    if isinstance(e, E.Add):
        ra, ca = _split_offset(e.a)
        rb, cb = _split_offset(e.b)
        rest = ra if rb is None else rb if ra is None else E.Add(ra, rb)
        return rest, ca + cb
    if isinstance(e, E.Sub) and isinstance(e.b, E.IntImm):
        ra, ca = _split_offset(e.a)
        return ra, ca - e.b.value
    return e, 0


def _lane_arithmetic(e) -> bool:
    """Whether every lane of ``e`` is arithmetic on the lane number, scalars and constants
    (``lane_of`` writes it for a symbolic lane)."""
    ok = True

    def check(x):
        nonlocal ok
        if not (isinstance(x, (Ramp, Broadcast, E.IntImm)) or lanes_of(x) == 1
                or (isinstance(x, E.BinaryOpExpr) and not isinstance(x, E.CmpExpr))):
            ok = False

    post_order_visit(e, check)
    return ok


def _is_one(x) -> bool:
    return isinstance(x, E.IntImm) and x.value == 1


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
        if self.llvm_vector_store(s, lanes):  # numba_cpu: one statement (codegen_vector_llvm)
            return True
        lane_vars = self.vector_lane_vars()
        name = s.buffer.name  # a hint: the view itself is declared where it is indexed
        width = self.store_chunk(s, lanes)
        self.in_lanes = self.uses_lanes = True
        lane_vars = self.hold_broadcasts(s, lane_vars)
        if width:
            chunk = E.Var(f"{name}_chunk", "int32")
            self.emit(f"# a vector store of {lanes} lanes as {lanes // width} chunks of {width}: "
                      "each lane reads only the element it writes", s)
            self.push_scope()
            self.emit(f"for {self.bind(chunk, chunk.name_hint, 'int32')} in "
                      f"range({lanes // width}):", s)
            self.indent += 1
            self.lane_ranges.append((chunk, lanes // width))
            first = E.mul(chunk, E.const(width, "int32"))
            analyzer = Analyzer()
            analyzer.bind(chunk, E.Range(0, lanes // width))
            self.store_lanes(s, name, [E.add(first, E.const(k, "int32")) if k else first
                                       for k in range(width)], lane_vars, analyzer.simplify)
            self.lane_ranges.pop()
            self.indent -= 1
            self.pop_scope()
        else:
            self.emit(f"# a vector store of {lanes} lanes: each computed before any is stored", s)
            self.store_lanes(s, name, list(range(lanes)), lane_vars)
        self.in_lanes = False
        return True

    def store_lanes(self, s: BufferStore, name: str, ks: list, lane_vars: dict, simplify=None):
        """Every lane ``k`` in ``ks`` computed into a temporary, then every one stored; a
        value that reads no memory (``T.Broadcast(T.float32(0), 32)``) stored directly.
        The indices' parts shared by every lane are named once (``lane_index``)."""
        self.lane_names = {}  # the text of an index's part shared by the lanes -> its name,
        live = self.live[-1]  # the constant added to it in its first lane
        before = set(live)
        try:
            self._store_lanes(s, name, ks, lane_vars, simplify)
        finally:
            # the lanes' temporaries and index names are this store's: the next vector store
            # (an unrolled copy) binds them again, of the same types
            live.difference_update(live - before)
            self.lane_names = None

    def lane_index(self, index, buffer_name: str, axis: int) -> str:
        """An index written in a vector store's lanes, its part that is the same in every
        lane named once before them, each lane adding its constant::

            C_i = i_0 * 32 + i_1
            C_j = j_0 * 32 + C_chunk * 16
            C_v1 = C[C_i, C_j + 1] + A_e * B[k_0 * 4 + 1, C_j + 1]

        Why: Numba's compile time grows with the arithmetic it types, and 16 lanes each
        recomputing ``i_0 * 32 + i_1`` and ``j_0 * 32 + C_chunk * 16`` made the parallel
        matmul compile twice as long.  Only sums of variables and constants are named (a
        loaded value could change while the lanes are stored)."""
        rest, offset = _split_offset(index)
        if rest is None or isinstance(rest, E.Var) or not is_index_arithmetic(rest):
            return self.expr(index, 0)
        text = self.expr(rest, 0)
        held = self.lane_names.get(text)
        if held is None:  # named with the first lane's constant: B_i = k_0 * 4 + 1
            letter = "ijklmn"[axis] if axis < 6 else f"a{axis}"
            var = E.Var(f"{buffer_name}_{letter}", rest.dtype)
            held = self.lane_names[text] = (self.bind(var, var.name_hint, var.dtype), offset)
            first = text if offset == 0 else \
                f"{text} {'+' if offset > 0 else '-'} {abs(offset)}"
            self.pending.append(f"{held[0]} = {first}")
        name, delta = held[0], offset - held[1]
        if delta == 0:
            return name
        return f"{name} {'+' if delta > 0 else '-'} {abs(delta)}"

    def _store_lanes(self, s: BufferStore, name: str, ks: list, lane_vars: dict, simplify):
        loads = []
        post_order_visit(s.value, lambda e: loads.append(e) if isinstance(e, E.BufferLoad)
                         else None)
        if not loads:
            for k in ks:
                indices = [lane_index_of(i, k, lane_vars, simplify) for i in s.indices]
                text = self.expr_text(lane_of(s.value, k, lane_vars, simplify), store=True)
                self.emit(f"{self.buffer_access(s.buffer, indices)} = {text}", s)
            return
        temps = []
        for n, k in enumerate(ks):
            temp = E.Var(f"{name}_v{n}", dt.element_of(s.value.dtype))
            text = self.expr_text(lane_of(s.value, k, lane_vars, simplify))
            temps.append(self.bind(temp, temp.name_hint, temp.dtype))
            self.emit(f"{temps[-1]} = {text}", s)
        for n, k in enumerate(ks):
            indices = [lane_index_of(i, k, lane_vars, simplify) for i in s.indices]
            self.emit(f"{self.buffer_access(s.buffer, indices)} = {temps[n]}", s)

    def hold_broadcasts(self, s: BufferStore, lane_vars: dict) -> dict:
        """A broadcast element (``T.Broadcast(A_1[i * 512 + k], 16)``) read once, before the
        lanes: ``A_1_e = A[i, k]  # the same element in every lane``."""
        held = []

        def note(e):
            if isinstance(e, Broadcast) and isinstance(e.value, E.BufferLoad) \
                    and all(lanes_of(i) == 1 for i in e.value.indices):
                held.append(e)

        post_order_visit(s.value, note)
        lane_vars = dict(lane_vars)
        for b in held:
            var = E.Var(f"{b.value.buffer.name}_e", b.value.dtype)
            text = self.expr_text(b.value)
            lane_vars[id(b)] = var
            self.emit(f"{self.bind(var, var.name_hint, var.dtype)} = {text}  "
                      "# the same element in every lane", s)
        return lane_vars

    def store_chunk(self, s: BufferStore, lanes: int) -> int:
        """Lanes per chunk when the vector store ``s`` is written as a loop over chunks (0:
        all lanes at once).  32 straight-line lanes take Numba about three times as long to
        compile as 2 chunks of 16 in a loop, for the same vector code.
        Chunk after chunk gives the vector store's result when each lane reads, of the
        stored buffer, only the element it writes (other buffers do not overlap it:
        ``tir.noalias``) and no vector variable is involved."""
        width = max(CHUNK_BYTES // max(dt.bits(s.buffer.dtype) // 8, 1), 1)
        if lanes <= width or lanes % width or id(s.buffer) in self.scalars:
            return 0
        index = s.indices[0] if len(s.indices) == 1 else None
        if isinstance(index, Ramp):
            if not (isinstance(index.stride, E.IntImm) and index.stride.value != 0):
                return 0
        elif index is None or not _lane_arithmetic(index):
            return 0
        else:  # the lanes write distinct elements: r // 4 * 64 + r % 4
            offsets = lane_offsets(index, lanes)
            if offsets is None or len(set(offsets)) != lanes:
                return 0
        safe = True

        def check(e):
            nonlocal safe
            if isinstance(e, E.Var) and lanes_of(e) > 1:
                safe = False
            elif isinstance(e, E.BufferLoad) and e.buffer.data is s.buffer.data:
                safe = safe and e.buffer is s.buffer and len(e.indices) == 1 \
                    and structural_equal(e.indices[0], index)
            elif isinstance(e, E.BufferLoad) and not all(_lane_arithmetic(i) for i in e.indices):
                safe = False  # a gather: its lanes are not a function of the lane alone

        post_order_visit(s.value, check)
        return width if safe else 0

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
        if self.in_vectors:
            return self.llvm_vector_prec(e)
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
