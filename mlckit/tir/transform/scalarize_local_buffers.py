"""ScalarizeLocalBuffers: a small "local" buffer accessed only at constant indices becomes one
one-element "local" buffer per element (scalar replacement of aggregates).

A Numba array lives in memory; LLVM keeps separate scalars in registers.  The ``cache_write
"local"`` tile of the packed matmul, ``C_local`` of 2 x 8 elements, is indexed by the
variables of two ``T.unroll`` loops: once those loops are written out, every index is a
constant, and each element can be a register of its own (the Numba backend prints a
one-element "local" buffer as a Python scalar: 30 -> 200 GFLOP/s for that schedule)::

    C_local = T.alloc_buffer((2, 8), scope="local")       C_local_0_0 = T.alloc_buffer((1,), scope="local")
    for i_1 in T.unroll(2):                        ──►    ...
        for j_1 in T.unroll(8):                           with T.block("C"):  # i_1 = 0, j_1 = 0
            with T.block("C"):                                ...
                C_local[i_1, j_1] = ...                       C_local_0_0[0] = ...

A buffer is split when it is allocated by a block with scope ``"local..."``, has a constant
shape of at most ``max_elements`` elements, and every access (``BufferLoad`` /
``BufferStore``) has indices that are constants once the block iterators are replaced by
their bindings and the ``T.unroll`` loops (constant bounds, at most ``max_unroll``
iterations) inside the allocating block are written out; any other use (its data pointer,
a ``T.match_buffer`` view) keeps it whole.  Only the unroll loops an index of a split buffer
depends on are written out (each copy binds the loop variable with a ``LetStmt``, so the
printed code still says ``j_1 = 3``); a function with nothing to split is returned
unchanged.  Reads/writes regions of a split buffer are dropped.

Example::

    mod = tvm.tir.transform.ScalarizeLocalBuffers()(mod)
"""

from __future__ import annotations

import itertools
import math

from mlckit.arith.analyzer import Analyzer
from mlckit.ir.transform import FunctionPass
from mlckit.tir import expr as E
from mlckit.tir import stmt as S
from mlckit.tir.buffer import Buffer, decl_buffer
from mlckit.tir.function import PrimFunc
from mlckit.tir.stmt_functor import (
    ir_transform,
    node_rewriter,
    post_order_visit,
    pre_order_visit,
    substitute,
    uses_var,
)

from ._pass import make_pass

__all__ = ["ScalarizeLocalBuffers", "scalarize_local_buffers"]


def _candidate(buf: Buffer, max_elements: int) -> bool:
    return (buf.scope.startswith("local") and bool(buf.shape)
            and all(isinstance(d, E.IntImm) for d in buf.shape)
            and math.prod(d.value for d in buf.shape) <= max_elements
            and not all(d.value == 1 for d in buf.shape))  # already one register


def _unrollable(loop: S.For, max_unroll: int) -> bool:
    return (loop.kind == S.ForKind.UNROLLED and isinstance(loop.min, E.IntImm)
            and isinstance(loop.extent, E.IntImm) and 0 < loop.extent.value <= max_unroll)


class _Accesses:
    """Every access of the candidate buffers under a block, with its indices in the loop
    variables (block iterators replaced by their bindings), and the buffers used otherwise."""

    def __init__(self, candidates: dict):
        self.candidates = candidates  # id(buffer) -> buffer
        self.found: dict = {}  # id(buffer) -> [(node, indices, enclosing unroll loops)]
        self.spoiled: set = set()

    def walk(self, s, vmap: dict, unrolls: tuple) -> None:
        if isinstance(s, S.BlockRealize):
            vmap = dict(vmap)
            for iv, v in zip(s.block.iter_vars, s.iter_values):
                vmap[id(iv.var)] = substitute(v, vmap)
            self.exprs([s.iter_values, s.predicate], vmap, unrolls)
            for m in s.block.match_buffers:
                self.spoiled.add(id(m.source.buffer))
            for part in (s.block.init, s.block.body):
                if part is not None:
                    self.walk(part, vmap, unrolls)
        elif isinstance(s, S.For):
            self.exprs([s.min, s.extent], vmap, unrolls)
            inner = (*unrolls, s) if s.kind == S.ForKind.UNROLLED else unrolls
            self.walk(s.body, vmap, inner)
        elif isinstance(s, S.BufferStore):
            self.exprs([s.value, s.indices], vmap, unrolls)
            self.note(s, vmap, unrolls)
        elif isinstance(s, S.SeqStmt):
            for x in s.seq:
                self.walk(x, vmap, unrolls)
        else:  # any other statement: its expressions, then its statements
            for name in type(s).field_names():
                value = getattr(s, name)
                for v in value if isinstance(value, list) else [value]:
                    if isinstance(v, S.Stmt):
                        self.walk(v, vmap, unrolls)
                    elif isinstance(v, E.PrimExpr):
                        self.exprs([v], vmap, unrolls)

    def exprs(self, e, vmap, unrolls) -> None:
        def visit(n):
            if isinstance(n, E.BufferLoad):
                self.note(n, vmap, unrolls)
            elif isinstance(n, E.Var) and n.dtype == "handle":
                for buf in self.candidates.values():
                    if buf.data is n:
                        self.spoiled.add(id(buf))

        post_order_visit(e, visit)

    def note(self, node, vmap, unrolls) -> None:
        if id(node.buffer) in self.candidates:
            indices = substitute(list(node.indices), vmap)
            self.found.setdefault(id(node.buffer), []).append((node, indices, unrolls))


def _constant(ana: Analyzer, e, consts: dict):
    value = ana.simplify(substitute(e, consts)) if consts else ana.simplify(e)
    return value.value if isinstance(value, E.IntImm) else None


def _plan(block: S.Block, max_elements: int, max_unroll: int):
    """The buffers of ``block`` that can be split, and the unroll loops to write out."""
    candidates = {id(b): b for b in block.alloc_buffers if _candidate(b, max_elements)}
    if not candidates:
        return {}, set()
    acc = _Accesses(candidates)
    for part in (block.init, block.body):
        if part is not None:
            acc.walk(part, {}, ())
    ana = Analyzer()
    split, loops = {}, set()
    for key, buf in candidates.items():
        uses = acc.found.get(key, [])
        if key in acc.spoiled or not uses:
            continue
        needed: set = set()
        ok = True
        for _, indices, unrolls in uses:
            moving = [lp for lp in unrolls if uses_var(indices, lp.loop_var)]
            if not all(_unrollable(lp, max_unroll) for lp in moving):
                ok = False
                break
            for values in itertools.product(*(range(lp.min.value, lp.min.value + lp.extent.value)
                                              for lp in moving)):
                consts = {lp.loop_var: E.IntImm(lp.loop_var.dtype, v)
                          for lp, v in zip(moving, values)}
                index = [_constant(ana, i, consts) for i in indices]
                if any(i is None or not 0 <= i < d.value for i, d in zip(index, buf.shape)):
                    ok = False
                    break
            if not ok:
                break
            needed.update(id(lp) for lp in moving)
        if ok:
            split[key] = buf
            loops |= needed
    return split, loops


def _unroll(loop: S.For) -> S.Stmt:
    """``loop`` written out: one copy of its body per iteration, each binding the loop
    variable to its value with a LetStmt; every copy defines variables of its own (same
    names), as each definition must be unique."""
    defined: list = []

    def collect(n):
        if isinstance(n, S.For):
            defined.append(n.loop_var)
        elif isinstance(n, S.LetStmt):
            defined.append(n.var)
        elif isinstance(n, S.Block):
            defined.extend(iv.var for iv in n.iter_vars)

    pre_order_visit(loop.body, collect)
    copies = []
    for v in range(loop.min.value, loop.min.value + loop.extent.value):
        var = E.Var(loop.loop_var.name_hint, loop.loop_var.dtype)
        fresh = {id(d): type(d)(d.name_hint, d.dtype) for d in defined}
        fresh[id(loop.loop_var)] = var
        body = node_rewriter(lambda x, fresh=fresh: fresh.get(id(x)))(loop.body)
        copies.append(S.LetStmt(var, E.IntImm(var.dtype, v), body))
    return S.stmt_seq(*copies)


def _rewrite_block(block: S.Block, split: dict, loops: set) -> S.Block:
    def unroll(n):
        if isinstance(n, S.For) and id(n) in loops:
            return _unroll(n.replace(body=ir_transform(n.body, unroll, None)))
        return None

    body = ir_transform(block.body, unroll, None)
    init = block.init
    if init is not None:
        init = ir_transform(init, unroll, None)
    # the element buffers, and every access redirected: indices evaluated with the
    # block iterators' bindings and the let-bound copies of the unrolled loop variables
    regs = {key: {} for key in split}
    for key, buf in split.items():
        for index in itertools.product(*(range(d.value) for d in buf.shape)):
            regs[key][index] = decl_buffer((1,), buf.dtype,
                                           name=f"{buf.name}_{'_'.join(map(str, index))}",
                                           scope=buf.scope)
    ana = Analyzer()
    zero = E.IntImm("int32", 0)

    def redirect(s, vmap):
        def at(node):
            index = tuple(_constant(ana, substitute(i, vmap), {}) for i in node.indices)
            return regs[id(node.buffer)][index]

        def pre(n):
            if isinstance(n, S.BlockRealize):
                inner = dict(vmap)
                for iv, v in zip(n.block.iter_vars, n.iter_values):
                    inner[id(iv.var)] = substitute(v, inner)
                new_block = n.block.replace(
                    body=redirect(n.block.body, inner),
                    init=None if n.block.init is None else redirect(n.block.init, inner))
                new_block = _drop_regions(new_block, split)
                return n.replace(block=new_block)
            if isinstance(n, S.LetStmt):
                inner = {**vmap, id(n.var): n.value}
                return n.replace(body=redirect(n.body, inner))
            if isinstance(n, E.BufferLoad) and id(n.buffer) in split:
                return E.BufferLoad(at(n), [zero])
            if isinstance(n, S.BufferStore) and id(n.buffer) in split:
                return S.BufferStore(at(n), ir_transform(n.value, pre, None), [zero])
            return None

        return ir_transform(s, pre, None)

    body = redirect(body, {})
    init = None if init is None else redirect(init, {})
    allocs = []
    for b in block.alloc_buffers:
        allocs.extend(regs[id(b)].values() if id(b) in split else [b])
    return _drop_regions(block.replace(body=body, init=init, alloc_buffers=allocs), split)


def _drop_regions(block: S.Block, split: dict) -> S.Block:
    reads = [r for r in block.reads if id(r.buffer) not in split]
    writes = [w for w in block.writes if id(w.buffer) not in split]
    if len(reads) == len(block.reads) and len(writes) == len(block.writes):
        return block
    return block.replace(reads=reads, writes=writes)


def scalarize_local_buffers(func: PrimFunc, max_elements: int = 64,
                            max_unroll: int = 64) -> PrimFunc:
    """``func`` with its small constant-indexed "local" buffers split into one-element
    buffers (module docstring); ``func`` itself when there is none.

    Example::

        fast = scalarize_local_buffers(packed_matmul)
    """
    def visit(n):
        if not isinstance(n, S.Block) or not n.alloc_buffers:
            return None
        split, loops = _plan(n, max_elements, max_unroll)
        return _rewrite_block(n, split, loops) if split else None

    body = ir_transform(func.body, None, visit, only_enable=["tir.Block"])
    return func if body is func.body else func.replace(body=body)


def ScalarizeLocalBuffers(max_elements: int = 64, max_unroll: int = 64) -> FunctionPass:  # noqa: N802
    """The pass splitting small "local" buffers into registers (module docstring).

    Example::

        mod = tvm.tir.transform.ScalarizeLocalBuffers()(mod)
    """
    return make_pass("ScalarizeLocalBuffers",
                     lambda f: scalarize_local_buffers(f, max_elements, max_unroll))
