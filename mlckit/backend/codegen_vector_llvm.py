"""Vector stores as LLVM vector values (numba_cpu): one statement, as TIR has it.

A vector store whose value is arithmetic (``+ - * / max min``) on loads at ramps and on
broadcasts is printed as it reads in the lowered TIR, with ``numba_cpu.vectors``'s
``ramp``, ``ramps`` and ``broadcast``::

    C_1[T.Ramp(i * 64, 1, 16)] = C_1[T.Ramp(i * 64, 1, 16)] + T.Broadcast(a, 16) * B_1[T.Ramp(j, 1, 16)]
    ──►  C_1[ramp(i * 64, 1, 16)] = C_1[ramp(i * 64, 1, 16)] + broadcast(a, 16) * B_1[ramp(j, 1, 16)]

Numba keeps each vector as one LLVM vector value, as TVM's LLVM codegen does.  Why not
lanes: Numba types and lowers each written-out lane as a statement of its own, and a
vectorized tuning candidate compiled about three times slower that way.

An index whose lanes are not one ramp but several (meta_schedule's fused vectorized loops:
``r // 8 * 64 + r % 8`` over 64 lanes) is ``ramps(base, 1, 8, 8, 64)``: 8 ramps of 8 lanes,
64 apart.  Anything else (a cast, a comparison, a select, a vector variable, a call, a
gather, integer division, a ``prange`` body) is written lane by lane (``codegen_vector``).

Example::

    numba_cpu.build(tvm.lower(sch.mod)["main"]).source   # ... = ... + broadcast(A_e, 16) * ...
"""

from __future__ import annotations

from mlckit.tir import dtype as dt
from mlckit.tir import expr as E
from mlckit.tir.expr_vector import Broadcast, Ramp, lanes_of
from mlckit.tir.stmt import BufferStore

from .codegen_common import P_ATOM, CodegenError, np_scalar
from .codegen_vector import lane_of, lane_offsets

__all__ = ["LLVMVectorExprs", "ramp_pattern"]

# the element types numba_cpu.vectors keeps in LLVM vectors (bool and float16 go by lanes)
_ELEMENTS = frozenset({"float32", "float64", "int8", "int16", "int32", "int64", "uint8",
                       "uint16", "uint32", "uint64"})

_ARITHMETIC = (E.Add, E.Sub, E.Mul, E.Max, E.Min)


def ramp_pattern(index, lanes: int):
    """``index`` (a vector of ``lanes`` flat indices) as ``(base, stride, lanes_per_ramp,
    ramps, ramp_stride)``: lane ``k`` is ``base + k // lanes_per_ramp * ramp_stride + k %
    lanes_per_ramp * stride``; None when its lanes are not constants apart or not ramps of
    one stride."""
    if isinstance(index, Ramp) and isinstance(index.stride, E.IntImm):  # no lanes to walk
        return index.base, index.stride.value, lanes, 1, 0
    try:
        offsets = lane_offsets(index, lanes)
    except CodegenError:  # a vector variable in the index (a vector let): lanes
        return None
    if offsets is None:
        return None
    first = offsets[0]
    rel = [o - first for o in offsets]
    stride = rel[1] if lanes > 1 else 0
    run = next((k for k in range(1, lanes) if rel[k] != k * stride), lanes)
    if run == lanes:
        rows, row_stride = 1, 0
    else:
        if lanes % run:
            return None
        rows, row_stride = lanes // run, rel[run]
        if any(rel[k] != k // run * row_stride + k % run * stride for k in range(lanes)):
            return None
    return lane_of(index, 0, {}), stride, run, rows, row_stride


class LLVMVectorExprs:
    """Mixin of the generator (module docstring); numba_cpu's ``Flavour.llvm_vectors``."""

    def llvm_vector_store(self, s: BufferStore, lanes: int) -> bool:
        """Write ``s`` as one statement of LLVM vectors; False when it must go by lanes."""
        if not self.flavour.llvm_vectors or self.in_prange() or not self._vector_buffer(s.buffer) \
                or len(s.indices) != 1 or lanes_of(s.indices[0]) != lanes:
            return False
        value = s.value if lanes_of(s.value) == lanes else None
        if value is None and lanes_of(s.value) == 1:
            value = Broadcast(s.value, lanes)  # one value stored in every lane
        patterns: dict = {}  # id(vector index) -> its ramp_pattern, found once
        if value is None or not self._vector_value(value, patterns) \
                or not self._ramp_of(s.indices[0], lanes, patterns):
            return False
        live = self.live[-1]
        before = set(live)
        self.in_vectors, self.vector_patterns, self.vector_bases = True, patterns, {}
        try:
            target = f"{self.name_of(s.buffer)}[{self.ramp_text(s.indices[0], s.buffer)}]"
            text = self.expr_text(value)
        finally:
            self.in_vectors, self.vector_patterns, self.vector_bases = False, None, None
            live.difference_update(live - before)  # the names taken are this store's
        self.emit(f"{target} = {text}", s)
        return True

    def ramp_text(self, index, buf) -> str:
        """``ramp(base, stride, lanes)`` or ``ramps(...)`` for the vector ``index`` of
        ``buf``; a base that is more than a name or a constant is named first (``B_1_at =
        k_0 * 512 + k_1 * 128``): the statement stays readable."""
        base, stride, run, rows, row_stride = self.vector_patterns[id(index)]
        text = self.expr(base, 0)
        if not isinstance(base, (E.Var, E.IntImm)):
            text = self._named_once(text, f"{self.name_of(buf)}_at", base.dtype)
        if rows == 1:
            self.vector_names.add("ramp")
            return f"ramp({text}, {stride}, {run})"
        self.vector_names.add("ramps")
        return f"ramps({text}, {stride}, {run}, {rows}, {row_stride})"

    def _named_once(self, text: str, hint: str, dtype: str, note: str = "") -> str:
        """A name for ``text``, bound on a line before the store, once per store."""
        named = self.vector_bases.get(text)
        if named is None:
            var = E.Var(hint, dtype)
            named = self.vector_bases[text] = self.bind(var, var.name_hint, var.dtype)
            self.pending.append(f"{named} = {text}{note}")
        return named

    def llvm_vector_prec(self, e) -> tuple[str, int] | None:
        """The text of the vector ``e`` inside an LLVM vector store (None: the scalar text,
        ``a + b``, ``max(a, b)``, holds for vectors too)."""
        if isinstance(e, Broadcast):
            self.vector_names.add("broadcast")
            value = self.expr(e.value, 0)
            if isinstance(e.value, E.BufferLoad):  # read once, named: A_1_e = A_1[i * 64 + k]
                value = self._named_once(value, f"{self.name_of(e.value.buffer)}_e",
                                         e.value.dtype, "  # the same element in every lane")
            typed = f"{np_scalar(e.value.dtype)}("
            # Numba's integers are int64 unless told, and a float32 computed through a
            # function (math.sqrt) may be a float64: the vector has the dtype TIR says
            atom = isinstance(e.value, (E.Var, E.BufferLoad, E.FloatImm))
            if not value.startswith(typed) and not (atom and dt.is_float(e.value.dtype)):
                value = f"{typed}{value})"
            return f"broadcast({value}, {e.lanes})", P_ATOM
        if isinstance(e, E.BufferLoad):
            return f"{self.name_of(e.buffer)}[{self.ramp_text(e.indices[0], e.buffer)}]", P_ATOM
        return None

    # -- what can be an LLVM vector ------------------------------------------------------------
    def _vector_buffer(self, buf) -> bool:
        return id(buf) not in self.scalars and buf.ndim == 1 and buf.dtype in _ELEMENTS

    def _ramp_of(self, index, lanes: int, patterns: dict) -> bool:
        """Whether ``index`` is ramps (``ramp_pattern``), noted in ``patterns``."""
        pattern = patterns.get(id(index)) or ramp_pattern(index, lanes)
        if pattern is None:
            return False
        patterns[id(index)] = pattern
        return True

    def _vector_value(self, e, patterns: dict) -> bool:
        lanes = lanes_of(e)
        if dt.element_of(e.dtype) not in _ELEMENTS:
            return False
        if isinstance(e, Broadcast):
            return lanes_of(e.value) == 1
        if isinstance(e, E.BufferLoad):
            return self._vector_buffer(e.buffer) and len(e.indices) == 1 \
                and self._ramp_of(e.indices[0], lanes, patterns)
        if isinstance(e, _ARITHMETIC) or (isinstance(e, E.Div) and dt.is_float(e.dtype)):
            return lanes_of(e.a) == lanes_of(e.b) == lanes \
                and self._vector_value(e.a, patterns) and self._vector_value(e.b, patterns)
        return False
