"""Lowered TIR's flat views of the parameters, printed in the parameter's own shape where
that helps LLVM (the numba flavour).

FlattenBuffer gives every access a flat index (``C_1[i_0 * 16384 + i_1 * 512 + j_0 * 32 +
j_1]`` through ``C_1 = flat_view(C)``: ``numba_cpu.views``), with the strides constants LLVM
sees, as TVM's does.  Two places print the parameter's own shape instead (``ParamViews``): a vector
store's lanes, whose neighbouring elements LLVM's SLP vectorizer finds through Numba's N-D
index arithmetic (``C[C_i, C_j + 1]``) and not through flat sums, and a ``prange`` body,
where Numba's parallel lowering loses writes to an array reached under two names.

Example::

    print(numba_cpu.build(tiled_matmul).source)    # C_1[...] and, in lanes, C[C_i, C_j + 1]
"""

from __future__ import annotations

from contextlib import ExitStack

from mlckit.arith.analyzer import Analyzer
from mlckit.tir.buffer import Buffer
from mlckit.tir.expr import FloorDiv, FloorMod, IntImm, Mul, Range
from mlckit.tir.stmt import ForKind
from mlckit.tir.traversal import substitute

__all__ = ["FlatParams", "ParamViews"]


class FlatParams:
    """Mixin of the generator: the row-major strides of constant-shape parameter buffers."""

    flat: dict  # id(buffer) -> [its shape (None: a symbolic leading extent), its strides]

    def plan_flat_params(self):
        """Note the parameter buffers of constant shape (2-D and more; with
        ``Flavour.nd_param_views`` the leading extent may be symbolic)."""
        for p in self.func.params:
            buf = self.func.buffer_map.get(p)
            if buf is None or buf.ndim < 2:
                continue
            shape = [d.value if isinstance(d, IntImm) else None for d in buf.shape]
            if None in shape[1:] or (shape[0] is None and not self.flavour.nd_param_views):
                continue
            strides, step = [], 1
            for d in reversed(shape[1:]):
                strides.append(step)
                step *= d
            self.flat[id(buf)] = [shape, [step, *strides[::-1]]]

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
    index stays: LLVM sees constant strides.  An index ``let``
    (``cse_var_1``, CommonSubexprElimTIR) is seen through for the split.
    """

    def param_view_access(self, buf: Buffer, indices) -> str | None:
        if not self.flavour.flat_params or len(indices) != 1 or buf.ndim != 1:
            return None
        if not (self.flavour.nd_param_views or getattr(self, "in_lanes", False)
                or self.in_prange()):
            return None
        owner = self.data_owner.get(id(buf.data))
        if owner is None or owner is buf or owner.ndim < 2 or id(owner) not in self.flat \
                or owner.dtype != buf.dtype:
            return None
        parts = self.split_flat(self.through_lets(indices[0]), *self.flat[id(owner)],
                                carry=self.flavour.nd_param_views)
        if parts is None:
            return None
        name = self.names[id(owner)]
        if self.lane_names is not None:  # named once for all lanes
            return f"{name}[{', '.join(self.lane_index(p, name, d) for d, p in enumerate(parts))}]"
        return f"{name}[{', '.join(self.expr(p, 0) for p in parts)}]"

    def through_lets(self, index):
        """``index`` with the variables of index lets in scope replaced by their values
        (``cse_var_1 + k`` -> ``i * 128 + k``): the split into dimensions sees the loops."""
        if not self.let_values:
            return index
        return substitute(index, lambda v: self.let_values.get(id(v)))

    def index_ranges(self):
        """(Var, Range) of every index variable in scope: the open loops, a vector's lanes."""
        yield from ((loop.var, Range(loop.stmt.min, loop.stmt.extent)) for loop in self.loops)
        yield from ((var, Range(0, extent)) for var, extent in self.lane_ranges)

    def index_conditions(self):
        """Conditions known to hold where an index is printed (none here; a kernel's
        ``if i_1 < 300:`` guards)."""
        return ()

    def split_flat(self, index, shape, strides, carry: bool = False):
        """``index`` as one index per dimension (``i * 512 + j`` -> ``[i, j]``) when every
        term's coefficient divides by a stride and each part provably stays in its
        dimension (a symbolic leading extent, None in ``shape``, only from below: the other
        parts in range, the access in bounds keeps it in range); None otherwise.  With
        ``carry``, a part that may leave its dimension leaves it as mixed-radix digits do,
        its remainder kept and its quotient carried to the dimension before (a fused loop's
        ``f`` over a 4 x 64 array -> ``[f // 64, f % 64]``), and the leading part is what
        is left (TIR's accesses are in bounds)."""
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
        for var, rng in self.index_ranges():
            ana.bind(var, rng)
        with ExitStack() as scopes:
            for cond in self.index_conditions():
                scopes.enter_context(ana.constraint_scope(cond))
            return self._split_parts(ana, parts, consts, shape, index, carry)

    def _split_parts(self, ana, parts, consts, shape, index, carry):
        out, carried = [None] * len(shape), None
        for d in reversed(range(len(shape))):
            e, const = carried, consts[d]
            kind = "int64" if index.dtype == "int64" else "int32"
            for atom, coef in sorted(parts[d], key=lambda t: t[1] < 0):  # the added ones first
                t = atom if abs(coef) == 1 else Mul(atom, IntImm(atom.dtype, abs(coef)))
                if coef > 0:
                    e = t if e is None else e + t
                else:  # ``7 - i``, not ``i * -1 + 7``
                    if e is None:
                        e, const = IntImm(kind, const), 0
                    e = e - t
            if const or e is None:  # the constant last: ``j_0 * 32 + 1``
                k = IntImm(kind, const)
                e = k if e is None else e + k
            b = ana.const_int_bound(e)
            carried = None
            if b.min_value < 0:
                return None
            if shape[d] is not None and b.max_value >= shape[d]:
                if not carry:
                    return None
                if d == 0:  # the leading digit: what is left, the access being in bounds
                    out[d] = e
                    break
                extent = IntImm(e.dtype, shape[d])
                e, carried = FloorMod(e, extent), FloorDiv(e, extent)
            out[d] = e
        return out
