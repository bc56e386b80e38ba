"""Arguments of constant shape indexed through flat views in the Numba code generator.

Numba computes the address of ``C[vi, vj]`` from the shape the array arrives with, a value
LLVM knows only at run time; TVM flattens buffers before code generation (``FlattenBuffer``)
and its LLVM sees ``i_0 * 16384 + i_1 * 512 + j_0 * 32 + j_1`` with the strides constants.
With the constants, LLVM unrolls and schedules a tiled loop nest as it does for TVM (the
tiled matmul runs ~1.5x faster).  So a parameter buffer whose shape is constant is read and
written through a flat view, made once at the top of the function, and the flat index is
written in loop variables, largest stride first (see ``flat_index``)::

    # flat views of the arguments (C_flat[i_0 * 16384 + ...] is C[vi, vj], ...)
    C_flat = C.reshape(-1)
    ...
    C_flat[i_0 * 16384 + i_1 * 512 + j_0 * 32 + j_1] = C_flat[...] + A_ik * B_flat[...]

The lanes of a ``T.vectorized`` loop keep the 2-D form: there LLVM's SLP vectorizer finds
the neighbouring elements (``C[vi, vj + 1]``) through Numba's own index arithmetic and
packs them, which it does not do for the flat sums.  Buffers allocated in the function keep
the 2-D form too (their shape is a constant LLVM already sees), and so does every access
inside a ``prange`` body (see ``in_prange``).

Example::

    print(numba_cpu.build(tiled_matmul).source)    # A_flat, B_flat, C_flat as above
"""

from __future__ import annotations

from mlckit.arith.analyzer import Analyzer, substitute
from mlckit.tir.buffer import Buffer
from mlckit.tir.expr import IntImm, Mul, Range, Var
from mlckit.tir.stmt import ForKind

from .codegen_common import P_ADD, P_MUL

__all__ = ["FlatParams", "ParamViews"]


class FlatParams:
    """Mixin of the generator: flat views of constant-shape parameter buffers."""

    flat: dict  # id(buffer) -> (its flat view's name or None before first use, row-major strides)
    flat_pre: list  # where the views are created (top of the function)

    def plan_flat_params(self):
        """Note the parameter buffers of constant shape (2-D and more); their views are
        written on first use."""
        for p in self.func.params:
            buf = self.func.buffer_map.get(p)
            if buf is None or buf.ndim < 2 or not all(isinstance(d, IntImm) for d in buf.shape):
                continue
            strides, step = [], 1
            for d in reversed(buf.shape):
                strides.append(step)
                step *= d.value
            self.flat[id(buf)] = [None, strides[::-1]]

    def note_iter_binding(self, var: Var, value):
        """Remember what a block iterator stands for in loop variables (``vi`` is
        ``i_0 * 32 + i_1``), for the flat indices."""
        self.iter_bindings[id(var)] = substitute(value, self.iter_bindings)

    def flat_index(self, indices, strides) -> str:
        """The flat index of ``indices`` as a sum over loop variables, largest stride first:
        ``i_0 * 16384 + i_1 * 512 + j_0 * 32 + j_1``, as TVM's ``FlattenBuffer`` and
        ``Simplify`` write it.  Why not ``vi * 512 + vj``: LLVM then folds the innermost
        (unrolled) terms into constant address offsets from one base register, instead of
        keeping one offset per copy (``j_0 * 32 + 1``, ``+ 2``, ...) live across the loop.
        Indices that are not sums of loop variables times constants keep the block form."""
        scaled = [i if s == 1 else Mul(i, IntImm(i.dtype, s)) for i, s in zip(indices, strides)
                  if not (isinstance(i, IntImm) and i.value == 0)]
        if not scaled:
            return "0"
        terms, const = Analyzer().linear_terms(substitute(sum(scaled[1:], scaled[0]),
                                                          self.iter_bindings))
        if not all(isinstance(atom, Var) and id(atom) in self.names for atom, _ in terms):
            return " + ".join(self.expr(term, P_ADD) for term in scaled)
        # the largest stride first (row-major order), ties from the outermost loop in; loops
        # unrolled by the generator are not in self.loops: they are innermost
        depth = {id(loop.var): k for k, loop in enumerate(self.loops)}
        terms.sort(key=lambda term: (-abs(term[1]), depth.get(id(term[0]), len(depth))))
        parts = [(coef, self.expr(atom, P_MUL) + ("" if abs(coef) == 1 else f" * {abs(coef)}"))
                 for atom, coef in terms]
        if const or not parts:
            parts.append((const, str(abs(const))))
        text = ("-" if parts[0][0] < 0 else "") + parts[0][1]
        for coef, part in parts[1:]:
            text += f" {'-' if coef < 0 else '+'} {part}"
        return text

    def in_prange(self) -> bool:
        """Inside a ``prange`` body.  There the 2-D form stays: Numba's parallel lowering
        loses the writes when a body reaches one array under two names (``C[vi, vj]`` in
        the init's lanes, ``C_flat[...]`` in the update: the result stayed all zeros)."""
        return self.flavour.prange and any(loop.kind == ForKind.PARALLEL for loop in self.loops)

    def flat_access(self, buf: Buffer, indices) -> str | None:
        """``C_flat[i * 512 + j]`` for ``C[vi, vj]``, or None where the 2-D form stays."""
        entry = self.flat.get(id(buf))
        if entry is None or self.lane is not None or not indices or self.in_prange():
            return None
        if entry[0] is None:
            name = self.names[id(buf)]
            entry[0] = self.bind(Var(f"{name}_flat", "handle"), f"{name}_flat",
                                 f"buffer:{buf.dtype}:1", scoped=False)
        text = f"{entry[0]}[{self.flat_index(indices, entry[1])}]"
        if len(entry) == 2:  # first use: create the view (and say why, once)
            entry.append(True)
            if not self.flat_pre:
                plain = f"{self.names[id(buf)]}[{', '.join(self.expr(i, 0) for i in indices)}]"
                self.flat_pre.append(self.top_line(
                    f"# flat views of the arguments ({text} is {plain}): "
                    "LLVM sees constant strides, as with TVM's flattened buffers"))
            self.flat_pre.append(self.top_line(f"{entry[0]} = {self.names[id(buf)]}.reshape(-1)"))
        return text


class ParamViews:
    """Mixin of the generator: lowered TIR's flat views of constant-shape parameters
    (``C_1 = T.Buffer((262144,), data=C.data)``) indexed in the parameter's own shape where
    the split of the flat index is exact: in a vector's lanes and in ``prange`` bodies.

    Why: LLVM's SLP vectorizer packs neighbouring lanes it sees through Numba's N-D index
    arithmetic (``C[vi, vj + 1]``), not through flat sums; and in a ``prange`` body one array
    reached under two names loses writes (see ``FlatParams.in_prange``).  Elsewhere the flat
    index stays: LLVM sees constant strides.
    """

    def param_view_access(self, buf: Buffer, indices) -> str | None:
        if not self.flavour.flat_params or len(indices) != 1 or buf.ndim != 1:
            return None
        if not (getattr(self, "in_lanes", False) or self.in_prange()):
            return None
        owner = self.data_owner.get(id(buf.data))
        if owner is None or owner is buf or owner.ndim < 2 or id(owner) not in self.flat \
                or owner.dtype != buf.dtype:
            return None
        parts = self.split_flat(indices[0], [d.value for d in owner.shape],
                                self.flat[id(owner)][1])
        if parts is None:
            return None
        name = self.names[id(owner)]
        if self.lane_names is not None:  # named once for all lanes
            return f"{name}[{', '.join(self.lane_index(p, name, d) for d, p in enumerate(parts))}]"
        return f"{name}[{', '.join(self.expr(p, 0) for p in parts)}]"

    def split_flat(self, index, shape, strides):
        """``index`` as one index per dimension (``i * 512 + j`` -> ``[i, j]``) when every
        term's coefficient divides by a stride and each part provably stays in its
        dimension; None otherwise."""
        terms, const = Analyzer().linear_terms(index)
        parts = [[] for _ in shape]
        for atom, coef in terms:
            d = next((d for d, s in enumerate(strides) if coef % s == 0), None)
            if d is None:
                return None
            parts[d].append((atom, coef // strides[d]))
        consts = []
        for s in strides:
            q, const = divmod(const, s) if s > 1 else (const, 0)
            consts.append(q)
        ana = Analyzer()
        for loop in self.loops:
            ana.bind(loop.var, Range(loop.stmt.min, loop.stmt.extent))
        for var, extent in self.lane_ranges:
            ana.bind(var, Range(0, extent))
        out = []
        for d, (terms_d, c) in enumerate(zip(parts, consts)):
            e = None
            for atom, coef in terms_d:
                t = atom if coef == 1 else Mul(atom, IntImm(atom.dtype, coef))
                e = t if e is None else e + t
            if c or e is None:  # the constant last: ``j_0 * 32 + 1``
                k = IntImm("int64" if index.dtype == "int64" else "int32", c)
                e = k if e is None else e + k
            b = ana.const_int_bound(e)
            if b.min_value < 0 or b.max_value >= shape[d]:
                return None
            out.append(e)
        return out
