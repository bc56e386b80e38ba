"""Tensorization: ``tensorize`` (replace a block computing a tensor intrinsic by its
implementation).

``sch.tensorize(block, "tmm16")`` compares the block with the description of the
registered intrinsic ``"tmm16"`` (:class:`~mlckit.tir.schedule.tensor_intrin.TensorIntrin`),
node by node, as TVM's ``TensorizeComparator`` does:

- the block's ``T.reads`` / ``T.writes`` regions must have the description's extents; their
  starts are the *base* of each buffer (``C[vi_o * 16:vi_o * 16 + 16, ...]``: base
  ``vi_o * 16``), and every access inside is compared relative to its base
  (``C[vi_o * 16 + vi_i, ...]`` matches the description's ``C[vii, ...]``);
- loops, nested blocks, iterators and expressions must match one to one (variables up to
  renaming; block names are ignored).

Then the block's body becomes the implementation's body, and each implementation buffer is
bound to the matched region with a ``T.match_buffer`` in the block: its ``elem_offset`` and
``strides`` variables take the region's offset and the buffer's strides when the code runs.
Given a loop, ``tensorize`` first ``blockize``s the loop nest under it, as TVM does.

A block that does not match leaves the schedule unchanged and raises a ``ScheduleError``
naming the first difference (where, and both sides).
"""

from __future__ import annotations

from mlckit.arith import Analyzer
from mlckit.arith.analyzer import substitute
from mlckit.ir.structural import _short
from mlckit.tir import expr as E
from mlckit.tir import stmt as S
from mlckit.tir.buffer import BufferRegion, MatchBufferRegion
from mlckit.tir.expr import IntImm, Range
from mlckit.tir.stmt_functor import renew_defs

from .error import ScheduleError
from .instruction import primitive
from .ir_utils import Rewrite, replace_stmts
from .tensor_intrin import TensorIntrin


class _Mismatch(Exception):
    def __init__(self, path: str, lhs, rhs, reason: str):
        super().__init__(reason)
        self.path, self.lhs, self.rhs, self.reason = path, lhs, rhs, reason


def _dtype_code(dtype: str) -> str:
    return dtype.rstrip("0123456789x")


class TensorizeMatcher:
    """Match a block realize (lhs) against an intrinsic description's body (rhs).

    After ``match``: ``buffer_map`` maps each description buffer (by id) to the block's
    buffer, ``bases`` each block buffer (by id) to the start of its region."""

    def __init__(self):
        self.var_map: dict[int, E.Var] = {}  # id(lhs var) -> rhs var
        self.buffer_map: dict[int, object] = {}  # id(rhs buffer) -> lhs buffer
        self.bases: dict[int, list] = {}  # id(lhs buffer) -> base index per dimension
        self.lhs_ana = Analyzer()
        self.scope_block = True
        self._keep: list = []

    def fail(self, path, lhs, rhs, reason):
        raise _Mismatch(path, lhs, rhs, reason)

    def match(self, lhs: S.BlockRealize, rhs: S.BlockRealize) -> None:
        self.stmt("body", lhs, rhs)

    # -- statements ---------------------------------------------------------------------
    def stmt(self, path, lhs, rhs):
        if type(lhs) is not type(rhs):
            self.fail(path, lhs, rhs, f"a {type(lhs).__name__} where the description has a "
                      f"{type(rhs).__name__}")
        getattr(self, "stmt_" + type(lhs).__name__, self.stmt_generic)(path, lhs, rhs)

    def stmt_BlockRealize(self, path, lhs, rhs):
        if not self.scope_block:
            self.exprs(f"{path}.iter_values", lhs.iter_values, rhs.iter_values)
        self.expr(f"{path}.predicate", lhs.predicate, rhs.predicate)
        self.stmt(f"{path}.block", lhs.block, rhs.block)

    def stmt_Block(self, path, lhs, rhs):
        for iv in lhs.iter_vars:
            self.lhs_ana.bind(iv.var, iv.dom)
        if not self.scope_block:
            self.length(f"{path}.iter_vars", lhs.iter_vars, rhs.iter_vars)
            for i, (a, b) in enumerate(zip(lhs.iter_vars, rhs.iter_vars)):
                p = f"{path}.iter_vars[{i}]"
                if a.iter_type != b.iter_type:
                    self.fail(p, a.var, b.var, "the iterators are of different kinds "
                              "(spatial / reduction)")
                self.expr(f"{p}.dom.min", a.dom.min, b.dom.min)
                self.expr(f"{p}.dom.extent", a.dom.extent, b.dom.extent)
                self.define(p, a.var, b.var)
            self.length(f"{path}.alloc_buffers", lhs.alloc_buffers, rhs.alloc_buffers)
            for i, (a, b) in enumerate(zip(lhs.alloc_buffers, rhs.alloc_buffers)):
                self.buffer(f"{path}.alloc_buffers[{i}]", a, b)
        self.regions(f"{path}.writes", lhs.writes, rhs.writes)
        self.regions(f"{path}.reads", lhs.reads, rhs.reads)
        self.scope_block = False
        self.stmt(f"{path}.body", lhs.body, rhs.body)

    def stmt_For(self, path, lhs, rhs):
        self.expr(f"{path}.min", lhs.min, rhs.min)
        self.expr(f"{path}.extent", lhs.extent, rhs.extent)
        if lhs.kind != rhs.kind:
            self.fail(f"{path}.kind", lhs, rhs, f"a {lhs.kind.name.lower()} loop where the "
                      f"description has a {rhs.kind.name.lower()} one")
        if (lhs.thread_binding is None) != (rhs.thread_binding is None):
            self.fail(f"{path}.thread_binding", lhs, rhs, "thread bindings differ")
        if dict(lhs.annotations or {}) != dict(rhs.annotations or {}):
            self.fail(f"{path}.annotations", lhs, rhs, "loop annotations differ")
        self.define(f"{path}.loop_var", lhs.loop_var, rhs.loop_var)
        self.stmt(f"{path}.body", lhs.body, rhs.body)

    def stmt_SeqStmt(self, path, lhs, rhs):
        self.length(f"{path}.seq", lhs.seq, rhs.seq)
        for i, (a, b) in enumerate(zip(lhs.seq, rhs.seq)):
            self.stmt(f"{path}.seq[{i}]", a, b)

    def stmt_BufferStore(self, path, lhs, rhs):
        self.access(path, lhs, rhs)
        self.expr(f"{path}.value", lhs.value, rhs.value)

    def stmt_generic(self, path, lhs, rhs):
        for name in type(lhs).field_names():
            a, b = getattr(lhs, name), getattr(rhs, name)
            p = f"{path}.{name}"
            if isinstance(a, S.Stmt) or isinstance(b, S.Stmt):
                if (a is None) != (b is None):
                    self.fail(p, lhs, rhs, f"{name} is missing on one side")
                if a is not None:
                    self.stmt(p, a, b)
            elif isinstance(a, E.PrimExpr):
                self.expr(p, a, b)
            elif a != b:
                self.fail(p, lhs, rhs, f"{name} differs: {a!r} vs {b!r}")

    # -- buffers --------------------------------------------------------------------------
    def buffer(self, path, lhs, rhs):
        mapped = self.buffer_map.get(id(rhs))
        if mapped is not None:
            if mapped is not lhs:
                self.fail(path, lhs, rhs, f"buffer `{lhs.name}` is used where the description "
                          f"uses `{rhs.name}`, which already stands for `{mapped.name}`")
            return
        if lhs.dtype != rhs.dtype:
            self.fail(path, lhs, rhs, f"buffer `{lhs.name}` is {lhs.dtype}, the description's "
                      f"`{rhs.name}` is {rhs.dtype}")
        if lhs.scope != rhs.scope:
            self.fail(path, lhs, rhs, f"buffer `{lhs.name}` is in scope {lhs.scope!r}, the "
                      f"description's `{rhs.name}` in scope {rhs.scope!r}")
        self.buffer_map[id(rhs)] = lhs
        self._keep.append(rhs)

    def regions(self, path, lhs: list, rhs: list):
        self.length(path, lhs, rhs)
        for i, (a, b) in enumerate(zip(lhs, rhs)):
            self.region(f"{path}[{i}]", a, b)

    def region(self, path, lhs: BufferRegion, rhs: BufferRegion):
        self.buffer(path, lhs.buffer, rhs.buffer)
        offset = len(lhs.region) - len(rhs.region)
        if offset < 0:
            self.fail(path, lhs, rhs, f"the region has {len(lhs.region)} dimensions, the "
                      f"description's {len(rhs.region)}")
        for i in range(offset):
            if not _is_one(lhs.region[i].extent):
                self.fail(f"{path}.region[{i}]", lhs, rhs, "a leading dimension the "
                          "description does not have must have extent 1")
        base = self.bases.get(id(lhs.buffer))
        if base is None:
            if not self.scope_block:
                self.fail(path, lhs, rhs, f"buffer `{lhs.buffer.name}` is not among the "
                          "outer block's T.reads / T.writes")
            self.bases[id(lhs.buffer)] = [r.min for r in lhs.region]
            for i, (a, b) in enumerate(zip(lhs.region[offset:], rhs.region)):
                if not self.equal(a.extent, b.extent):
                    self.fail(f"{path}.region[{offset + i}].extent", lhs, rhs,
                              f"the extent {_short(a.extent)} differs from the description's "
                              f"{_short(b.extent)}")
            return
        for i, (a, b) in enumerate(zip(lhs.region[offset:], rhs.region)):
            p = f"{path}.region[{offset + i}]"
            if not self.equal(a.extent, b.extent):
                self.fail(f"{p}.extent", lhs, rhs, "extents differ")
            if not self.equal(a.min - base[offset + i], b.min):
                self.fail(f"{p}.min", lhs, rhs,
                          f"the region starts at {_short(a.min)} (relative to the outer "
                          f"region's start {_short(base[offset + i])}), the description's at "
                          f"{_short(b.min)}")

    def access(self, path, lhs, rhs):
        self.buffer(f"{path}.buffer", lhs.buffer, rhs.buffer)
        base = self.bases.get(id(lhs.buffer))
        if base is None:
            self.fail(path, lhs, rhs, f"buffer `{lhs.buffer.name}` is accessed but not among "
                      "the block's T.reads / T.writes")
        offset = len(lhs.indices) - len(rhs.indices)
        if offset < 0 or len(lhs.indices) != len(base):
            self.fail(f"{path}.indices", lhs, rhs, "the numbers of indices differ")
        for i in range(offset):
            if not self.equal(lhs.indices[i], base[i], to_rhs=False):
                self.fail(f"{path}.indices[{i}]", lhs, rhs, "a leading index differs from "
                          "the region's start")
        for i, (a, b) in enumerate(zip(lhs.indices[offset:], rhs.indices)):
            if not self.equal(a - base[offset + i], b):
                self.fail(f"{path}.indices[{offset + i}]", lhs, rhs,
                          f"index {_short(a)} (relative to the region's start "
                          f"{_short(base[offset + i])}) differs from the description's "
                          f"{_short(b)}")

    # -- expressions ----------------------------------------------------------------------
    def define(self, path, lhs: E.Var, rhs: E.Var):
        mapped = self.var_map.get(id(lhs))
        if mapped is not None and mapped is not rhs:
            self.fail(path, lhs, rhs, "a variable stands for two different ones")
        self.var_map[id(lhs)] = rhs
        self._keep += [lhs, rhs]

    def equal(self, a, b, to_rhs: bool = True) -> bool:
        """Whether ``a`` equals ``b``: with ``to_rhs``, ``a`` is the block's expression
        (simplified with its iterators' ranges, variables renamed to the description's)."""
        if to_rhs:
            a = substitute(self.lhs_ana.simplify(a), self.var_map)
        ana = Analyzer()
        diff = ana.simplify(E.convert(a) - E.convert(b))
        return isinstance(diff, IntImm) and diff.value == 0

    def exprs(self, path, lhs: list, rhs: list):
        self.length(path, lhs, rhs)
        for i, (a, b) in enumerate(zip(lhs, rhs)):
            self.expr(f"{path}[{i}]", a, b)

    def expr(self, path, lhs, rhs):
        if type(lhs) is not type(rhs):
            self.fail(path, lhs, rhs, f"a {type(lhs).__name__} where the description has a "
                      f"{type(rhs).__name__}")
        if isinstance(lhs, E.PrimExpr) and _dtype_code(lhs.dtype) != _dtype_code(rhs.dtype):
            self.fail(path, lhs, rhs, f"dtype {lhs.dtype} vs {rhs.dtype}")
        if isinstance(lhs, E.Var):
            if lhs is not rhs and self.var_map.get(id(lhs)) is not rhs:
                self.fail(path, lhs, rhs, "the variables do not correspond")
            return
        if isinstance(lhs, (E.IntImm, E.FloatImm, E.StringImm)):
            if lhs.value != rhs.value:
                self.fail(path, lhs, rhs, f"the constants differ: {lhs.value} vs {rhs.value}")
            return
        if isinstance(lhs, E.BufferLoad):
            self.access(path, lhs, rhs)
            return
        if isinstance(lhs, E.Call) and getattr(lhs.op, "name", lhs.op) != getattr(
                rhs.op, "name", rhs.op):
            self.fail(path, lhs, rhs, "different functions are called")
        for name in type(lhs).field_names():
            if name in ("dtype", "op", "span"):
                continue
            a, b = getattr(lhs, name), getattr(rhs, name)
            if isinstance(a, list):
                self.exprs(f"{path}.{name}", a, b)
            elif isinstance(a, E.PrimExpr):
                self.expr(f"{path}.{name}", a, b)
            elif a != b:
                self.fail(f"{path}.{name}", lhs, rhs, f"{name} differs")

    def length(self, path, a, b):
        if len(a) != len(b):
            self.fail(path, a, b, f"{len(a)} here, {len(b)} in the description")


def _is_one(e) -> bool:
    return isinstance(e, IntImm) and e.value == 1


def match_regions(matcher: TensorizeMatcher, impl, desc) -> list:
    """``T.match_buffer`` bindings of the implementation's buffers to the matched regions."""
    impl_block = impl.body.block
    impl_regions = {id(r.buffer): r.region for r in impl_block.reads + impl_block.writes}
    out = []
    for dp, ip in zip(desc.params, impl.params):
        desc_buf, impl_buf = desc.buffer_map[dp], impl.buffer_map[ip]
        cur = matcher.buffer_map.get(id(desc_buf))
        region = impl_regions.get(id(impl_buf))
        if cur is None or region is None:
            unused = "the block" if cur is None else "the implementation's T.reads / T.writes"
            raise _Mismatch("params", desc_buf, impl_buf,
                            f"the intrinsic's buffer `{desc_buf.name}` is not in {unused}")
        base = matcher.bases[id(cur)]
        offset = len(base) - len(region)
        new = [Range(base[i], IntImm(base[i].dtype, 1)) for i in range(offset)]
        new += [Range(base[offset + i], E.convert(r.extent, base[offset + i].dtype))
                for i, r in enumerate(region)]
        out.append(MatchBufferRegion(impl_buf, BufferRegion(cur, new)))
    return out


class TensorizeMixin:
    @primitive("Tensorize", inputs=("block_or_loop",),
               attrs=("tensor_intrin", "preserve_unit_iters"))
    def tensorize(self, block_or_loop, tensor_intrin: str,
                  preserve_unit_iters: bool = True) -> None:
        """Replace the computation of a block (or of the loop nest under a loop, blockized
        first) by the implementation of the registered tensor intrinsic ``tensor_intrin``.

        Before / after ``sch.tensorize(block_mm, "tmm16")`` (abridged)::

            with T.block("mm_o"):                      with T.block("mm_o"):
                vi_o, vj_o, vk_o = T.axis.remap(...)       vi_o, vj_o, vk_o = T.axis.remap(...)
                T.reads(C[vi_o*16:vi_o*16+16, ...], ...)   T.reads(C[vi_o*16:vi_o*16+16, ...], ...)
                T.writes(C[vi_o*16:vi_o*16+16, ...])       T.writes(C[vi_o*16:vi_o*16+16, ...])
                for i_1, j_1, k_1 in T.grid(16, 16, 16):   A_1 = T.match_buffer(A[...], (16, 16), ...)
                    with T.block("mm"):                    ...
                        ...                                T.call_extern("int32", "tmm16", ...)
                        C[...] = C[...] + A[...] * B[...]
        """
        prim = "tensorize"
        if not isinstance(tensor_intrin, str):
            raise ScheduleError(prim, f"tensor_intrin must be the name of a registered "
                                f"TensorIntrin, got {type(tensor_intrin).__name__}")
        intrin = TensorIntrin.get(tensor_intrin)
        sref = self._sref(block_or_loop, prim)
        if sref.is_loop:
            # blockize on a copy first: a mismatch must leave this schedule untouched
            trial = self.copy()
            trial._trace = None
            trial._depth = 1
            block_sref = trial._block_sref(trial.blockize(block_or_loop, preserve_unit_iters),
                                           prim)
            self._tensorize_check(prim, block_sref, intrin, tensor_intrin)
            block_sref = self._block_sref(self.blockize(block_or_loop, preserve_unit_iters),
                                          prim)
        else:
            block_sref = sref
        new_block = self._tensorize_check(prim, block_sref, intrin, tensor_intrin)
        rw = Rewrite()
        rw.link(block_sref.stmt, new_block)
        func = self.mod[block_sref.func_name]
        self._commit(block_sref.func_name,
                     replace_stmts(func.body, {id(block_sref.stmt): new_block}, rw), rw)

    def _tensorize_check(self, prim, block_sref, intrin, name):
        """Match the block with the intrinsic; the block with the implementation as body."""
        block = block_sref.stmt
        realize = block_sref.realize
        matcher = TensorizeMatcher()
        impl = renew_defs(intrin.impl)  # each tensorized block defines its own buffers
        try:
            matcher.match(realize, intrin.desc.body)
            match_buffers = match_regions(matcher, impl, intrin.desc)
        except _Mismatch as m:
            raise ScheduleError(
                prim, f"block `{block.name_hint}` does not match the description of tensor "
                f"intrinsic {name!r}: at {m.path}: {m.reason}\n  block:       {_short(m.lhs)}\n"
                f"  description: {_short(m.rhs)}", [block]) from None
        impl_block = impl.body.block
        annotations = dict(block.annotations or {})
        for key, value in (impl_block.annotations or {}).items():
            annotations.setdefault(key, value)
        new_block = block.replace(body=impl_block.body, match_buffers=match_buffers,
                                  annotations=annotations)
        return new_block


__all__ = ["TensorizeMatcher", "TensorizeMixin"]
