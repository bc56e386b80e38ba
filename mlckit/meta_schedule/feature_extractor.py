"""Loop features of a scheduled program, in the spirit of TVM's ``PerStoreFeature``: what
the cost model learns run times from.

For each innermost block (a store in a loop nest) the extractor reads the loop nest —
extents, which loops are parallel / vectorized / unrolled, the unroll pragma — and the
block's memory accesses: each access's stride along the innermost loop, and the bytes all
accesses touch inside the innermost 1…6 loops (the working set a cache must hold).  The
program's vector is the features of its heaviest block, plus the number of blocks and the
other blocks' iterations.  Every value is a log2, so tile sizes compare by ratio.

Example::

    ms.feature_extractor.PerStoreFeature().extract_from(sch.mod)   # a 1-D numpy array
"""

from __future__ import annotations

import math

import numpy as np

from mlckit.tir import expr as E
from mlckit.tir import stmt as S
from mlckit.tir.dtype import bits
from mlckit.tir.function import PrimFunc
from mlckit.tir.schedule.ir_utils import child_stmts

from .utils import int_value

LEVELS = 6  # loops described, innermost first

_OPS = {
    E.Add: lambda a, b: a + b, E.Sub: lambda a, b: a - b, E.Mul: lambda a, b: a * b,
    E.FloorDiv: lambda a, b: a // b if b else 0, E.FloorMod: lambda a, b: a % b if b else 0,
    E.Div: lambda a, b: int(a / b) if b else 0, E.Mod: lambda a, b: int(math.fmod(a, b)) if b else 0,
    E.Min: min, E.Max: max,
}


def _eval(expr, env: dict) -> int:
    """The integer value of an index expression (variables not in ``env`` count as 0)."""
    if isinstance(expr, E.IntImm):
        return int(expr.value)
    if isinstance(expr, E.Var):
        return env.get(id(expr), 0)
    op = _OPS.get(type(expr))
    if op is not None:
        return op(_eval(expr.a, env), _eval(expr.b, env))
    if isinstance(expr, E.Cast):
        return _eval(expr.value, env)
    return 0


def _accesses(stmt) -> list:
    """The BufferStores and BufferLoads in a block body: ``(buffer, indices)``."""
    out = []

    def visit(x):
        if isinstance(x, (S.BufferStore, E.BufferLoad)):
            out.append((x.buffer, x.indices))
        if isinstance(x, (list, tuple)):
            for y in x:
                visit(y)
            return
        if isinstance(x, (S.Stmt, E.PrimExpr)) and not isinstance(x, (E.Var, E.IntImm)):
            for name in x.field_names():
                if name in ("buffer",):
                    continue
                visit(getattr(x, name))

    visit(stmt)
    return out


def _leaf_blocks(func: PrimFunc) -> list[tuple[list, object]]:
    """``(enclosing loops outermost first, BlockRealize)`` of every innermost block."""
    found = []

    def visit(stmt, loops):
        if isinstance(stmt, S.For):
            visit(stmt.body, loops + [stmt])
        elif isinstance(stmt, S.BlockRealize):
            inner = []
            _collect_realizes(stmt.block.body, inner)
            if not inner and stmt.block.iter_vars is not None:
                found.append((loops, stmt))
            visit(stmt.block.body, loops)
        else:
            for child in child_stmts(stmt):
                visit(child, loops)

    visit(func.body, [])
    return found


def _collect_realizes(stmt, out) -> None:
    if isinstance(stmt, S.BlockRealize):
        out.append(stmt)
        return
    for child in child_stmts(stmt):
        _collect_realizes(child, out)


def _log2(x: float) -> float:
    return math.log2(max(1.0, float(x)))


def _block_features(loops: list, realize) -> np.ndarray:
    extents = [int_value(lp.extent) or 1 for lp in loops]
    kinds = [lp.kind for lp in loops]
    total = math.prod(extents)
    block = realize.block
    unroll = max([int((lp.annotations or {}).get("pragma_auto_unroll_max_step", 0) or 0)
                  for lp in loops] or [0])
    prod = {k: math.prod(e for e, kk in zip(extents, kinds) if kk == k) for k in
            (S.ForKind.PARALLEL, S.ForKind.VECTORIZED, S.ForKind.UNROLLED)}
    # loops that iterate, innermost first
    active = [(lp, e) for lp, e in reversed(list(zip(loops, extents))) if e > 1]
    inner_ext = [e for _, e in active[:LEVELS]] + [1] * (LEVELS - len(active[:LEVELS]))

    def loop_env(assign: dict) -> dict:
        env = {id(lp.loop_var): assign.get(id(lp.loop_var), 0) for lp in loops}
        for iv, value in zip(block.iter_vars, realize.iter_values):
            env[id(iv.var)] = _eval(value, env)
        return env

    base_env = loop_env({})
    accesses = _accesses([block.body, block.init])
    strides = [0, 0, 0]  # along the innermost iterating loop: 0, 1, other
    footprint = [0.0] * LEVELS
    for buf, indices in accesses:
        base = [_eval(ix, base_env) for ix in indices]
        coefs = []
        for lp, _ in active[:LEVELS]:
            env = loop_env({id(lp.loop_var): 1})
            coefs.append([_eval(ix, env) - b for ix, b in zip(indices, base)])
        shape = [int_value(s) or 1 for s in buf.shape]
        strides_elems = [1] * len(shape)
        for d in range(len(shape) - 2, -1, -1):
            strides_elems[d] = strides_elems[d + 1] * shape[d + 1]
        if coefs:
            flat = sum(c * s for c, s in zip(coefs[0], strides_elems))
            strides[0 if flat == 0 else 1 if abs(flat) == 1 else 2] += 1
        itemsize = max(1, bits(str(buf.dtype)) // 8)
        for level in range(LEVELS):
            span = [1] * len(shape)
            for (_, ext), coef in zip(active[:level + 1], coefs[:level + 1]):
                for d, c in enumerate(coef):
                    span[d] += abs(c) * (ext - 1)
            elems = math.prod(min(s, dim) for s, dim in zip(span, shape))
            footprint[level] += elems * itemsize
    return np.array(
        [_log2(total), float(len(loops))] + [_log2(e) for e in inner_ext]
        + [_log2(prod[S.ForKind.PARALLEL]), _log2(prod[S.ForKind.VECTORIZED]),
           _log2(prod[S.ForKind.UNROLLED]), _log2(1 + unroll)]
        + [_log2(1 + s) for s in strides] + [_log2(f) for f in footprint]
        + [_log2(math.prod(inner_ext[:k + 1])) - _log2(f) for k, f in enumerate(footprint)],
        dtype=np.float64)


N_BLOCK_FEATURES = 2 + LEVELS + 4 + 3 + 2 * LEVELS


class PerStoreFeature:
    """Extract a fixed-length vector of loop features from a scheduled module."""

    @property
    def n_features(self) -> int:
        return N_BLOCK_FEATURES + 2

    def extract_from(self, mod) -> np.ndarray:
        func = mod if isinstance(mod, PrimFunc) else next(
            f for f in mod.functions.values() if isinstance(f, PrimFunc))
        blocks = [_block_features(loops, realize) for loops, realize in _leaf_blocks(func)]
        if not blocks:
            return np.zeros(self.n_features)
        blocks.sort(key=lambda f: -f[0])
        rest = sum(2.0 ** f[0] for f in blocks[1:])
        return np.concatenate([blocks[0], [float(len(blocks)), _log2(rest)]])

    def extract_from_candidates(self, candidates) -> np.ndarray:
        return np.stack([self.extract_from(c.sch.mod) for c in candidates])
