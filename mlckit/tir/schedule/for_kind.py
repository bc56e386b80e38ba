"""Loop kinds: ``parallel``, ``vectorize``, ``unroll``, ``bind`` (GPU thread axes).

``parallel`` and ``vectorize`` (and ``bind`` to a block axis) need iterations that are
independent: no block under the loop may use the loop in the binding of a reduction
iterator, since the iterations would then update the same element concurrently.
"""

from __future__ import annotations

from mlckit.arith.analyzer import uses_var
from mlckit.tir import expr as E
from mlckit.tir import stmt as S
from mlckit.tir.expr import IterVar, Var

from .error import ScheduleError
from .instruction import primitive
from .ir_utils import Rewrite, realizes_under, replace_stmts, walk
from .query import child_block_srefs, describe_loop
from .rv import LoopRV

THREAD_TAGS = (
    "blockIdx.x", "blockIdx.y", "blockIdx.z", "threadIdx.x", "threadIdx.y", "threadIdx.z",
    "vthread", "vthread.x", "vthread.y", "vthread.z",
)

_WORDS = {
    S.ForKind.PARALLEL: "parallelized",
    S.ForKind.VECTORIZED: "vectorized",
    S.ForKind.THREAD_BINDING: "bound to a thread axis",
}


def check_parallelizable(prim: str, loop, kind, thread_tag: str = "") -> None:
    """Raise unless every block under ``loop`` may run its iterations independently."""
    var = loop.loop_var
    allow_reduce = kind == S.ForKind.THREAD_BINDING and thread_tag.startswith("threadIdx")
    for realize in realizes_under(loop, stop_at_blocks=False):
        block = realize.block
        for iv, value in zip(block.iter_vars, realize.iter_values):
            if not uses_var(value, lambda v: v is var):
                continue
            if iv.iter_type == E.IterVarType.DataPar:
                continue
            if iv.iter_type == E.IterVarType.CommReduce and allow_reduce:
                continue
            kind_word = "reduction" if iv.iter_type == E.IterVarType.CommReduce else "non-spatial"
            raise ScheduleError(
                prim,
                f"loop {describe_loop(loop)} cannot be {_WORDS[kind]}: block "
                f"`{block.name_hint}` uses it in the binding of its {kind_word} iterator "
                f"`{iv.var.name_hint}`, so different iterations would update the same "
                "elements",
                [loop, block],
            )


def _writes_only_once(block, writers) -> bool:
    return all(len(writers.get(id(w.buffer), ())) <= 1 for w in block.writes)


def _not_compact_because(state, block_sref, writers) -> str:
    """Why the block is neither a local complete block nor a local reduction block ("" if it
    is one), after TVM's definitions."""
    block = block_sref.stmt
    kinds = {iv.iter_type for iv in block.iter_vars}
    dominant = _writes_only_once(block, writers)
    written = {id(w.buffer) for w in block.writes}
    reads_output = any(id(r.buffer) in written for r in block.reads)
    if kinds <= {E.IterVarType.DataPar} and dominant and not reads_output:
        return ""  # complete
    if block.init is not None and kinds <= {E.IterVarType.DataPar, E.IterVarType.CommReduce} \
            and dominant:
        reduce_vars = [iv.var for iv in block.iter_vars
                       if iv.iter_type == E.IterVarType.CommReduce]
        indexed = False

        def visit(s):
            nonlocal indexed
            if isinstance(s, S.BufferStore) and any(
                    uses_var(i, lambda v: any(v is r for r in reduce_vars)) for i in s.indices):
                indexed = True
            return not indexed

        walk(block.body, visit)
        if not indexed:
            return ""  # reduction
        return "its reduction iterators index the buffer it writes"
    if not dominant:
        return "another block under the loop writes the same buffer"
    if block.init is None and E.IterVarType.CommReduce in kinds:
        return ("it has a reduction iterator but no T.init() — the update half of a "
                "decompose_reduction, whose iterations depend on each other")
    if reads_output:
        return "it reads the buffer it writes"
    return "it has iterators that are neither spatial nor reduction"


def check_compact_dataflow(state, prim: str, loop_sref, kind) -> None:
    """TVM's "compact dataflow" condition for ``parallel``/``vectorize``/``bind``: each block
    directly under the loop is complete (spatial, reads none of what it writes) or a reduction
    with its ``T.init()``.  As TVM, a block's writers are counted among the blocks nested in
    the blocks under the loop."""
    children = child_block_srefs(state, loop_sref)
    writers: dict = {}
    for child in children:
        seen: dict = {}
        for inner in child_block_srefs(state, child):
            for w in inner.stmt.writes:
                seen.setdefault(id(w.buffer), []).append(inner)
        for key, value in seen.items():
            writers.setdefault(key, value)  # the first child's writers win, as in TVM
    for child in children:
        why = _not_compact_because(state, child, writers)
        if why:
            loop = loop_sref.stmt
            raise ScheduleError(
                prim, f"loop {describe_loop(loop)} cannot be {_WORDS[kind]}: block "
                f"`{child.stmt.name_hint}` under it is neither a complete block nor a reduction "
                f"block ({why}); the loop's dataflow is not compact", [loop, child.stmt])


class ForKindMixin:
    def _set_kind(self, prim, loop_rv, kind, thread_tag=None):
        sref = self._loop_sref(loop_rv, prim)
        loop = sref.stmt
        if kind in (S.ForKind.PARALLEL, S.ForKind.VECTORIZED, S.ForKind.THREAD_BINDING):
            if self.enable_check:
                check_compact_dataflow(self.state, prim, sref, kind)
            check_parallelizable(prim, loop, kind, thread_tag or "")
        if loop.kind == S.ForKind.THREAD_BINDING and kind != S.ForKind.THREAD_BINDING:
            raise ScheduleError(prim, f"loop {describe_loop(loop)} is already bound to "
                                f"{loop.thread_binding.thread_tag}", [loop])
        binding = None
        if kind == S.ForKind.THREAD_BINDING:
            binding = IterVar(None, Var(thread_tag, loop.loop_var.dtype), E.IterVarType.ThreadIndex,
                              thread_tag)
        rw = Rewrite()
        new_loop = rw.derive(loop, kind=kind, thread_binding=binding)
        func = self.mod[sref.func_name]
        self._commit(sref.func_name, replace_stmts(func.body, {id(loop): new_loop}, rw), rw)

    @primitive("Parallel", inputs=("loop",))
    def parallel(self, loop: LoopRV) -> None:
        """Run a loop's iterations in parallel on CPU threads.

        Before / after ``sch.parallel(i)``::

            for i in range(128):                   for i in T.parallel(128):
        """
        self._set_kind("parallel", loop, S.ForKind.PARALLEL)

    @primitive("Vectorize", inputs=("loop",))
    def vectorize(self, loop: LoopRV) -> None:
        """Run a loop's iterations as SIMD lanes.

        Before / after ``sch.vectorize(j)``::

            for j in range(4):                     for j in T.vectorized(4):
        """
        self._set_kind("vectorize", loop, S.ForKind.VECTORIZED)

    @primitive("Unroll", inputs=("loop",))
    def unroll(self, loop: LoopRV) -> None:
        """Unroll a loop (always legal).

        Before / after ``sch.unroll(k)``::

            for k in range(4):                     for k in T.unroll(4):
        """
        self._set_kind("unroll", loop, S.ForKind.UNROLLED)

    @primitive("Bind", inputs=("loop",), attrs=("thread_axis",))
    def bind(self, loop: LoopRV, thread_axis: str) -> None:
        """Bind a loop to a GPU thread axis (``"blockIdx.x"``, ``"threadIdx.x"``, …).

        Before / after ``sch.bind(i, "threadIdx.x")``::

            for i in range(128):                   for i in T.thread_binding(128, thread="threadIdx.x"):
        """
        if thread_axis not in THREAD_TAGS:
            raise ScheduleError("bind", f"unknown thread axis {thread_axis!r} (one of "
                                f"{', '.join(THREAD_TAGS)})")
        self._set_kind("bind", loop, S.ForKind.THREAD_BINDING, thread_axis)
