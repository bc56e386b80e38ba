"""``T.vectorized`` loops written as lanes, so that LLVM emits vector instructions.

TVM lowers a vectorized loop to whole-vector loads, arithmetic and stores: every lane is
read before any lane is written.  Numba cannot be told that two arrays do not overlap, so a
plain ``for j_1 in range(32): C[vi, vj] = C[vi, vj] + a * B[vk, vj]`` keeps LLVM from
moving the loads of ``B`` above the stores to ``C``, and the loop stays scalar.  Written as
lanes, the loads come first and LLVM's SLP vectorizer packs them (``vmulps``/``vaddps`` on
ymm/zmm registers)::

    # T.vectorized: j_1 = 0 .. 31 as 32 lanes, every lane read before any is written
    # block "C_update"
    vi = i_0 * 32 + i_1
    vj = j_0 * 32  # lane j_1 reads vj + j_1
    vk = k_0 * 4 + k_1
    C_lane0 = C[vi, vj] + A[vi, vk] * B[vk, vj]
    C_lane1 = C[vi, vj + 1] + A[vi, vk] * B[vk, vj + 1]
    ...
    C[vi, vj] = C_lane0
    C[vi, vj + 1] = C_lane1

This keeps the sequential (lnumpy) result only when the lanes are independent, so the
lowering is used only when it can prove so: the body is straight-line stores in blocks
without ``T.init``; every buffer written there is read and written at one index, which
moves with the lane (a linear function of the loop variable with a non-zero coefficient),
so a lane touches only its own elements; the block iterators are linear in the loop
variable.  Anything else stays a plain loop.  Buffers are assumed not to overlap in
memory, as TVM assumes (``tir.noalias``).

More lanes than 64 bytes of the widest dtype hold (16 float32) are written as a loop over
chunks of that many lanes (``for j_1_chunk in range(2):``, ``vj = j_0 * 32 + j_1_chunk *
16``): the same vector code for a third of Numba's compile time (``lane_chunk``).

Example::

    f = numba_cpu.build(sch.mod["main"])     # after sch.vectorize(j1)
    print(f.source)                          # the lanes above
"""

from __future__ import annotations

from dataclasses import dataclass, field

from mlckit.arith.analyzer import Analyzer, substitute, uses_var
from mlckit.ir.structural import structural_equal
from mlckit.tir import dtype as dt
from mlckit.tir.expr import Add, BufferLoad, Cast, IntImm, Let, Mul, PrimExpr, Sub, Var
from mlckit.tir.stmt import BlockRealize, BufferStore, For, SeqStmt

from .codegen_common import P_ADD, P_ATOM
from .codegen_promote import scalar_hint
from .codegen_vector import VectorExprs

__all__ = ["VectorLanes", "lanes_independent"]


#: bytes of one chunk of lanes: a zmm register (16 float32 lanes); the SLP vectorizer
#: splits a chunk in two where the machine's vectors are 32 bytes wide.  Chunks of 32 bytes
#: compiled faster still but ran slower (tile+vectorize 33 against 40 GFLOP/s on AVX2)
CHUNK_BYTES = 64


@dataclass
class _Lane:
    """The vectorized loop being written: its variable, first value and lane count; ``k``
    the lane whose text is being written (None: the lane-0 base of a block iterator);
    ``coefs``: id(block iterator) -> (its step per lane, its value in lane 0 if constant);
    ``chunk``: the Var of the loop over chunks of ``n`` lanes (None: all lanes at once)."""

    var: Var
    lo: int
    n: int
    k: int | None = None
    coefs: dict = field(default_factory=dict)
    chunk: Var | None = None

    def first(self) -> PrimExpr:
        """The loop variable's value in lane 0 (of the current chunk)."""
        lo = IntImm(self.var.dtype, self.lo)
        if self.chunk is None:
            return lo
        base = Mul(self.chunk, IntImm(self.var.dtype, self.n))
        return Add(base, lo) if self.lo else base


class VectorLanes(VectorExprs):
    """Mixin of the generator: ``T.vectorized`` loops as lanes (see the module docstring)."""

    lane: _Lane | None = None

    def lanes_ok(self, s: For) -> bool:
        limit = self.flavour.vector_lanes
        return bool(
            limit and self.lane is None
            and isinstance(s.extent, IntImm) and isinstance(s.min, IntImm)
            and 1 < s.extent.value <= limit
            and lanes_independent(s)
        )

    def lanes(self, s: For):
        n, lo = s.extent.value, s.min.value
        self.push_scope()
        var = self.bind(s.loop_var, s.loop_var.name_hint, "int64")
        self.ctx_loops.append(var)
        width = self.lane_chunk(s)
        chunk = None
        if width:
            chunk = Var(f"{s.loop_var.name_hint}_chunk", s.loop_var.dtype)
            cname = self.bind(chunk, chunk.name_hint, "int64")
            self.emit(f"# T.vectorized: {var} = {lo} .. {lo + n - 1} as {n // width} chunks of "
                      f"{width} lanes, every lane of a chunk read before any is written", s)
            self.emit(f"for {cname} in range({n // width}):", s)
            self.indent += 1
            n = width
        else:
            self.emit(f"# T.vectorized: {var} = {lo} .. {lo + n - 1} as {n} lanes, "
                      "every lane read before any is written", s)
        self.lane = _Lane(s.loop_var, lo, n, chunk=chunk)
        try:
            self.stmt(s.body)
        finally:
            for key in [id(s.loop_var), *self.lane.coefs]:
                self.consts.pop(key, None)
            self.lane = None
            if chunk is not None:
                self.indent -= 1
            self.ctx_loops.pop()
            self.pop_scope()

    def lane_chunk(self, s: For) -> int:
        """The lanes per chunk when ``s``'s lanes are written as a loop over chunks, else 0.

        32 straight-line lanes take Numba ~3.5 s to compile, 2 chunks of 16 in a loop about
        a third of that for the same vector code.  The lanes are independent (each touches
        only its own elements: ``lanes_independent``), so chunk after chunk gives the same
        result.  Not where a lane indexes a "local" buffer held as scalar variables
        (``C_local_0_3``): there the lane must be a constant."""
        itemsize = max((max(dt.bits(b.dtype) // 8, 1) for b in _buffers(s.body)), default=4)
        width = max(CHUNK_BYTES // itemsize, 1)
        n = s.extent.value
        if n <= width or n % width or any(id(b) in self.scalars for b in _buffers(s.body)):
            return 0
        return width

    def lane_step(self, value: PrimExpr) -> int:
        """How far the block iterator bound to ``value`` moves per lane (0: not in lanes)."""
        lane = self.lane
        if lane is None:
            return 0
        return _coef(value, lane.var, {k: c for k, (c, _) in lane.coefs.items()}) or 0

    def lane_iter(self, var: Var, value: PrimExpr, stmt):
        """Bind the block iterator ``var`` to its lane-0 value
        (``vj = j_0 * 32  # lane j_1 reads vj + j_1``)."""
        lane = self.lane
        coef = self.lane_step(value)
        base = _lane_zero(value, lane)
        lane.k = None
        if lane.chunk is None:
            self.consts[id(lane.var)] = lane.lo
        text = self.expr_text(base)
        name = self.bind(var, var.name_hint, "int64")
        self.ctx_iters.append(name)
        if lane.chunk is not None:
            step = "k" if coef == 1 else f"{coef} * k"
            self.emit(f"{name} = {text}  # lane k of the chunk reads {name} + {step}", stmt)
            lane.coefs[id(var)] = (coef, None)
            return
        lv = self.names[id(lane.var)]
        step = lv if lane.lo == 0 else f"({lv} - {lane.lo})"
        if coef != 1:
            step = f"{coef} * {step}"
        self.emit(f"{name} = {text}  # lane {lv} reads {name} + {step}", stmt)
        lane.coefs[id(var)] = (coef, self.const_int(base))

    def lane_var_text(self, e: Var):
        """The text of ``e`` in the current lane (None: print its name as usual)."""
        lane = self.lane
        if e is lane.var:
            if lane.chunk is not None:
                first = self.expr_text(lane.first())
                return (f"{first} + {lane.k}" if lane.k else first), P_ADD
            return str(lane.lo + (lane.k or 0)), P_ATOM
        if lane.k and id(e) in lane.coefs:
            offset = lane.coefs[id(e)][0] * lane.k
            sign = "+" if offset > 0 else "-"
            return f"{self.names[id(e)]} {sign} {abs(offset)}", P_ADD
        return None

    def set_lane(self, k: int):
        lane = self.lane
        lane.k = k
        if lane.chunk is not None:  # the lane's value moves with the chunk
            self.consts.pop(id(lane.var), None)
        else:
            self.consts[id(lane.var)] = lane.lo + k
        for key, (coef, base) in lane.coefs.items():
            if base is None:
                self.consts.pop(key, None)
            else:
                self.consts[key] = base + coef * k

    def lane_store(self, s: BufferStore):
        """All lanes of one store: values first (when they load), then the stores."""
        lane = self.lane
        scalar = id(s.buffer) in self.scalars
        if not _loads(s.value):  # nothing to read: each lane stored directly
            for k in range(lane.n):
                self.set_lane(k)
                target = self.buffer_access(s.buffer, s.indices)
                self.emit(f"{target} = {self.expr_text(s.value, store=not scalar)}", s)
            lane.k = None
            return
        self.push_scope()
        held = self.lane_invariant_loads(s)
        temps = []
        for k in range(lane.n):
            self.set_lane(k)
            value = self.expr_text(s.value)
            temp = self.bind(Var(f"{s.buffer.name}_lane{k}", s.buffer.dtype), f"{s.buffer.name}_lane{k}",
                             s.buffer.dtype)
            self.emit(f"{temp} = {value}", s)
            temps.append(temp)
        for k, temp in enumerate(temps):
            self.set_lane(k)
            self.emit(f"{self.buffer_access(s.buffer, s.indices)} = {temp}", s)
        for key in held:
            self.promoted.pop(key, None)
        self.pop_scope()
        lane.k = None

    def lane_invariant_loads(self, s: BufferStore) -> list:
        """Loads in the value of ``s`` that every lane reads at the same element
        (``A[vi, vk]``) are read once, before the lanes (``A_ik = A[vi, vk]``): the lanes
        read before any is written, so they would all read the same value.  Fewer loads
        for Numba to compile.  Returns the keys to forget after the lanes."""
        lane = self.lane
        steps = {k: c for k, (c, _) in lane.coefs.items()}
        self.set_lane(0)
        held, by_text = [], {}
        for load in _loads(s.value):
            if id(load) in self.promoted or any(_loads(i) for i in load.indices):
                continue
            if any(_coef(i, lane.var, steps) != 0 for i in load.indices):
                continue
            text = self.buffer_access(load.buffer, load.indices)
            name = by_text.get(text)
            if name is None:
                hint = scalar_hint(load.buffer, list(load.indices), False)
                name = by_text[text] = self.bind(Var(hint, load.buffer.dtype), hint, load.buffer.dtype)
                self.emit(f"{name} = {text}  # the same element in every lane", s)
            self.promoted[id(load)] = name
            held.append(id(load))
        return held


def lanes_independent(loop: For) -> bool:
    """Whether the iterations of ``loop`` touch disjoint elements of every buffer they
    write, in straight-line code the lane form can write (see the module docstring)."""
    var = loop.loop_var
    coefs: dict = {}  # id(block iterator) -> its step per lane
    accesses: dict = {}  # id(buffer data) -> [(buffer, substituted indices)]
    written: set = set()
    vmap: dict = {}

    def record(buf, indices):
        accesses.setdefault(id(buf.data), []).append((buf, substitute(list(indices), vmap)))

    def visit(s) -> bool:
        if isinstance(s, SeqStmt):
            return all(visit(x) for x in s.seq)
        if isinstance(s, BlockRealize):
            b = s.block
            pred = s.predicate
            if (b.init is not None or b.alloc_buffers or b.match_buffers
                    or not (isinstance(pred, IntImm) and pred.value)):
                return False
            for iv, value in zip(b.iter_vars, s.iter_values):
                coef = _coef(value, var, coefs)
                if coef is None:
                    return False
                if coef:
                    coefs[id(iv.var)] = coef
                vmap[id(iv.var)] = substitute(value, vmap)
            return visit(b.body)
        if isinstance(s, BufferStore):
            if _has(s.value, Let):
                return False
            written.add(id(s.buffer.data))
            record(s.buffer, s.indices)
            for load in _loads(s.value):
                record(load.buffer, load.indices)
            return True
        return False

    if not visit(loop.body):
        return False
    for data in written:
        (buf, first), *rest = accesses[data]
        if any(b is not buf or not structural_equal(idx, first) for b, idx in rest):
            return False
        steps = [_coef(i, var, {}) for i in first]
        if not any(steps):  # every lane would write the same element
            return False
    return True


def _coef(e, var: Var, known: dict):
    """The step of the integer expression ``e`` per step of ``var`` (``known``: id -> step
    of other variables), 0 when it does not move, None when it is not linear in it."""
    if isinstance(e, Var):
        return 1 if e is var else known.get(id(e), 0)
    if not uses_var(e, lambda v: v is var or id(v) in known):
        return 0
    if isinstance(e, (Add, Sub)):
        a, b = _coef(e.a, var, known), _coef(e.b, var, known)
        if a is None or b is None:
            return None
        return a + b if isinstance(e, Add) else a - b
    if isinstance(e, Mul):
        for c, x in ((e.a, e.b), (e.b, e.a)):
            if isinstance(c, IntImm):
                inner = _coef(x, var, known)
                return None if inner is None else c.value * inner
        return None
    if isinstance(e, Cast) and not e.dtype.startswith("float"):
        return _coef(e.value, var, known)
    return None


def _lane_zero(value: PrimExpr, lane: _Lane) -> PrimExpr:
    """``value`` in lane 0 (of the chunk), simplified (``j_0 * 32 + j_1`` -> ``j_0 * 32``,
    ``j_0 * 32 + j_1_chunk * 16``)."""
    return Analyzer().simplify(substitute(value, {lane.var: lane.first()}))


def _buffers(s) -> list:
    """The buffers stored and loaded in the straight-line lanes body ``s``."""
    found: list = []

    def visit(x):
        if isinstance(x, SeqStmt):
            for y in x.seq:
                visit(y)
        elif isinstance(x, BlockRealize):
            visit(x.block.body)
        elif isinstance(x, BufferStore):
            found.append(x.buffer)
            found.extend(load.buffer for load in _loads(x.value))

    visit(s)
    return found


def _loads(e) -> list:
    found: list = []

    def walk(x):
        if isinstance(x, BufferLoad):
            found.append(x)
        if isinstance(x, PrimExpr):
            for name in x.field_names():
                v = getattr(x, name)
                if isinstance(v, PrimExpr):
                    walk(v)
                elif isinstance(v, list):
                    for y in v:
                        walk(y)

    walk(e)
    return found


def _has(e, cls) -> bool:
    if isinstance(e, cls):
        return True
    if isinstance(e, PrimExpr):
        for name in e.field_names():
            v = getattr(e, name)
            if isinstance(v, PrimExpr) and _has(v, cls):
                return True
            if isinstance(v, list) and any(_has(x, cls) for x in v):
                return True
    return False
