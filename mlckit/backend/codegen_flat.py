"""Lowered TIR's flat views of the parameters, printed in the parameter's own shape where
that helps LLVM (the numba flavour).

FlattenBuffer gives every access a flat index (``C_1[i_0 * 16384 + i_1 * 512 + j_0 * 32 +
j_1]`` through ``C_1 = C.reshape((262144,))``), with the strides constants LLVM sees, as
TVM's does.  Two places print the parameter's own shape instead (``ParamViews``): a vector
store's lanes, whose neighbouring elements LLVM's SLP vectorizer finds through Numba's N-D
index arithmetic (``C[C_i, C_j + 1]``) and not through flat sums, and a ``prange`` body,
where Numba's parallel lowering loses writes to an array reached under two names.

Example::

    print(numba_cpu.build(tiled_matmul).source)    # C_1[...] and, in lanes, C[C_i, C_j + 1]
"""

from __future__ import annotations

from mlckit.arith.analyzer import Analyzer
from mlckit.tir.buffer import Buffer
from mlckit.tir.expr import IntImm, Mul, Range
from mlckit.tir.stmt import ForKind

__all__ = ["FlatParams", "ParamViews"]


class FlatParams:
    """Mixin of the generator: the row-major strides of constant-shape parameter buffers."""

    flat: dict  # id(buffer) -> [None, its row-major strides]

    def plan_flat_params(self):
        """Note the parameter buffers of constant shape (2-D and more)."""
        for p in self.func.params:
            buf = self.func.buffer_map.get(p)
            if buf is None or buf.ndim < 2 or not all(isinstance(d, IntImm) for d in buf.shape):
                continue
            strides, step = [], 1
            for d in reversed(buf.shape):
                strides.append(step)
                step *= d.value
            self.flat[id(buf)] = [None, strides[::-1]]

    def in_prange(self) -> bool:
        """Inside a ``prange`` body.  There the N-D form stays: Numba's parallel lowering
        loses the writes when a body reaches one array under two names (``C[i, j]`` in
        the init's lanes, ``C_1[...]`` in the update: the result stayed all zeros)."""
        return self.flavour.prange and any(loop.kind == ForKind.PARALLEL for loop in self.loops)


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
