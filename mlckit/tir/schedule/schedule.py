"""``tir.Schedule``: transform a TensorIR function step by step, as in TVM.

Example::

    sch = tir.Schedule(MyModule)
    block_Y = sch.get_block("Y", func_name="mm_relu")
    i, j, k = sch.get_loops(block_Y)
    j0, j1 = sch.split(j, factors=[None, 4])
    sch.reorder(j0, k, j1)
    sch.mod.show()
    print(sch.trace)

The primitives live in one module per family (``loop_transformation``, ``for_kind``,
``compute_at``, ``compute_inline``, ``reduction``, ``blockize``, ``cache_read_write``,
``layout``, ``annotate``, ``sampling``, ``compute_location``, ``tensorize``); this module holds the state,
the random-variable table and navigation.
"""

from __future__ import annotations

import random

from mlckit.error import TVMTypeError, TVMValueError
from mlckit.ffi.views import html_view
from mlckit.ir.module import IRModule
from mlckit.tir.function import PrimFunc

from .annotate import AnnotateMixin
from .blockize import BlockizeMixin
from .cache_read_write import CacheReadWriteMixin
from .compute_at import ComputeAtMixin
from .compute_inline import ComputeInlineMixin
from .compute_location import ComputeLocationMixin
from .error import ScheduleError
from .for_kind import ForKindMixin
from .instruction import INSTRUCTION_KINDS, primitive
from .ir_utils import Rewrite
from .layout import LayoutMixin
from .loop_transformation import LoopTransformationMixin
from .query import (
    child_block_srefs,
    consumer_srefs,
    has_root_block,
    init_holding,
    loop_srefs,
    name_of,
    producer_srefs,
)
from .reduction import ReductionMixin
from .rfactor import RFactorMixin
from .rv import BlockRV, ExprRV, LoopRV
from .sampling import SamplingMixin
from .state import ScheduleState, StmtSRef
from .tensorize import TensorizeMixin
from .trace import Trace


class ScheduleBase:
    """State, random variables and navigation (the primitives are mixed in)."""

    def __init__(self, mod, *, seed: int | None = None, debug_mask=None,
                 error_render_level: str = "detail", enable_check: bool = True):
        if isinstance(mod, PrimFunc):
            mod = IRModule({"main": mod})
        if not isinstance(mod, IRModule):
            raise TVMTypeError(f"tir.Schedule expects an IRModule or a PrimFunc, got {type(mod).__name__}")
        for gv, func in mod.functions.items():
            if isinstance(func, PrimFunc) and not has_root_block(func):
                raise TVMValueError(
                    f"tir.Schedule: function {gv.name_hint!r} has no root block; write it with "
                    "T.block or let the parser add the implicit root block")
        self.state = ScheduleState(mod)
        self.debug_mask = debug_mask
        self.enable_check = enable_check
        self._symbols: dict[int, tuple[object, object]] = {}  # id(rv) -> (rv, sref | value)
        self._trace: Trace | None = Trace()
        self._depth = 0
        self._decision = None
        self._rng = random.Random(seed if seed is not None and seed != -1 else random.randrange(2**31))
        self._func_working_on: str | None = None
        prim_funcs = [gv.name_hint for gv, f in mod.functions.items() if isinstance(f, PrimFunc)]
        if len(prim_funcs) == 1:
            self._func_working_on = prim_funcs[0]
        elif "main" in prim_funcs:
            self._func_working_on = "main"

    # -- state ----------------------------------------------------------------------------
    @property
    def mod(self) -> IRModule:
        """The scheduled IRModule."""
        return self.state.mod

    @property
    def func_working_on(self):
        return None if self._func_working_on is None else self.mod.get_global_var(self._func_working_on)

    @property
    def trace(self) -> Trace:
        """The primitives applied so far (``print(sch.trace)``)."""
        return self._trace

    def work_on(self, func_name: str) -> None:
        """Make ``func_name`` the function that ``get_block`` looks in by default."""
        if func_name not in self.mod:
            names = ", ".join(gv.name_hint for gv in self.mod.functions)
            raise ScheduleError("work_on", f"the module has no function {func_name!r} "
                                f"(it has: {names})")
        self._func_working_on = func_name

    def copy(self):
        """A deep copy: the random variables of this schedule stay valid in the copy."""
        new = type(self).__new__(type(self))
        new.state, mapping = self.state.copy()
        new.debug_mask = self.debug_mask
        new.enable_check = self.enable_check
        new._symbols = {}
        for key, (rv, val) in self._symbols.items():
            if isinstance(val, StmtSRef):
                if id(val) not in mapping:  # a removed block or loop stays removed, by whom
                    gone = StmtSRef(None, val.func_name)
                    gone.removed = val.removed
                    mapping[id(val)] = gone
                val = mapping[id(val)]
            new._symbols[key] = (rv, val)
        new._trace = type(self._trace)(list(self._trace.insts)) if self._trace is not None else None
        new._depth = 0
        new._decision = None
        new._rng = random.Random()
        new._rng.setstate(self._rng.getstate())
        new._func_working_on = self._func_working_on
        return new

    def show(self, *args, **kwargs) -> None:
        """Print the scheduled module as TVMScript, then the trace that made it (as TVM's
        ``Schedule.show``); the arguments go to ``IRModule.show``."""
        self.mod.show(*args, **kwargs)
        if self._trace is not None:
            self._trace.show()

    def __repr__(self) -> str:
        """The text form: the trace as Python, then the scheduled module's TVMScript."""
        trace = str(self._trace) if self._trace is not None else "# (trace disabled)"
        return f"{trace}\n\n{self.mod.script()}"

    __str__ = __repr__

    def _repr_html_(self) -> str | None:
        """The trace and the scheduled TVMScript as HTML in a notebook (installed by the notebook layer); None,
        so that the text form shows, when it is not there."""
        return html_view(self)

    def seed(self, seed: int) -> None:
        """Seed the random number generator used by the sampling primitives."""
        self._rng.seed(seed)

    def fork_seed(self) -> int:
        """A new seed drawn from this schedule's generator (for a child schedule)."""
        return self._rng.randrange(1, 2**31)

    # -- random variables -----------------------------------------------------------------
    def _new_rv(self, cls, sref_or_value):
        rv = ExprRV("v", "int32") if cls is ExprRV else cls()
        self._symbols[id(rv)] = (rv, sref_or_value)
        return rv

    def _sref(self, rv, primitive_name: str, want=None) -> StmtSRef:
        """The current sref of a BlockRV / LoopRV (ScheduleError when it is gone)."""
        if isinstance(rv, StmtSRef):
            sref = rv
        else:
            entry = self._symbols.get(id(rv))
            if entry is None or entry[0] is not rv:
                kind = type(rv).__name__
                again = "sch.get_block(name)" if isinstance(rv, BlockRV) else \
                    "sch.get_loops(block)"
                raise ScheduleError(
                    primitive_name, f"this {kind} does not belong to this schedule (it comes "
                                    f"from another tir.Schedule): get it here with {again}")
            sref = entry[1]
        if not isinstance(sref, StmtSRef) or not sref.valid:
            raise ScheduleError(primitive_name, _gone(rv, sref))
        if want == "block" and not sref.is_block:
            raise ScheduleError(primitive_name, f"expected a block, got loop `{name_of(sref)}`")
        if want == "loop" and not sref.is_loop:
            raise ScheduleError(primitive_name, f"expected a loop, got block `{name_of(sref)}`")
        return sref

    def _block_sref(self, rv, primitive_name: str) -> StmtSRef:
        if not isinstance(rv, (BlockRV, StmtSRef)):
            raise ScheduleError(primitive_name, f"expected a BlockRV, got {type(rv).__name__}")
        return self._sref(rv, primitive_name, "block")

    def _loop_sref(self, rv, primitive_name: str) -> StmtSRef:
        if not isinstance(rv, (LoopRV, StmtSRef)):
            raise ScheduleError(primitive_name, f"expected a LoopRV, got {type(rv).__name__}")
        return self._sref(rv, primitive_name, "loop")

    def _rv_for(self, sref: StmtSRef, cls):
        return self._new_rv(cls, sref)

    def _int(self, value, primitive_name: str):
        """An int from an int, IntImm or ExprRV (None passes through)."""
        if value is None:
            return None
        if isinstance(value, ExprRV):
            entry = self._symbols.get(id(value))
            if entry is None:
                raise ScheduleError(primitive_name, "this ExprRV does not belong to this schedule")
            return int(entry[1])
        if hasattr(value, "value") and isinstance(value.value, int):
            return int(value.value)
        if isinstance(value, int):
            return value
        raise ScheduleError(primitive_name, f"expected an integer, got {value!r}")

    def get(self, rv):
        """The current Block / For a random variable refers to, or a sampled value."""
        if isinstance(rv, ExprRV):
            return self._int(rv, "get")
        if isinstance(rv, (list, tuple)):
            return [self.get(x) for x in rv]
        return self._sref(rv, "get").stmt

    def get_sref(self, rv) -> StmtSRef:
        return self._sref(rv, "get_sref")

    def remove_rv(self, rv) -> None:
        self._symbols.pop(id(rv), None)

    # -- committing -----------------------------------------------------------------------
    def _commit(self, func_name: str, new_body, rw: Rewrite, func: PrimFunc | None = None) -> None:
        old = self.mod[func_name]
        new_func = func if func is not None else old.replace(body=new_body)
        if self.debug_mask is not None:
            from mlckit.tir.analysis import verify_well_formed

            verify_well_formed(new_func)
        self.state.replace_func(func_name, new_func, rw.reuse)

    # -- navigation -----------------------------------------------------------------------
    def _func_name(self, func_name, primitive_name: str) -> str:
        if func_name is None:
            if self._func_working_on is None:
                raise ScheduleError(
                    primitive_name,
                    "the module has several functions: pass func_name=... or call "
                    "sch.work_on(name) first")
            return self._func_working_on
        if hasattr(func_name, "name_hint"):
            func_name = func_name.name_hint
        if func_name not in self.mod or not isinstance(self.mod[func_name], PrimFunc):
            names = [gv.name_hint for gv, f in self.mod.functions.items() if isinstance(f, PrimFunc)]
            raise ScheduleError(primitive_name,
                                f"there is no PrimFunc named {func_name!r} (the module has {names})")
        return func_name

    def get_block(self, name: str, func_name: str | None = None) -> BlockRV:
        """The block called ``name`` in ``func_name`` (default: the function worked on).

        Example::

            block_Y = sch.get_block("Y", func_name="mm_relu")
        """
        return self._get_block(name, self._func_name(func_name, "get_block"))

    @primitive("GetBlock", attrs=("name", "func_name"), is_pure=True, py_name="get_block")
    def _get_block(self, name: str, func_name: str) -> BlockRV:
        fname = func_name  # resolved by get_block: the trace records the real name
        found = [r for r in self.state.func_refs[fname] if r.is_block and r.stmt.name_hint == name]
        if len(found) != 1:
            names = sorted({r.stmt.name_hint for r in self.state.func_refs[fname]
                            if r.is_block and r.parent is not None})
            if not found:
                outer = init_holding(self.mod[fname], name)
                if outer is not None:
                    raise ScheduleError(
                        "get_block", f"block {name!r} is inside the T.init() of block "
                        f"`{outer}`; as in TVM, blocks in an init cannot be looked up or "
                        f"scheduled (decompose_reduction of `{outer}` moves the init out into a "
                        "block of its own)")
                raise ScheduleError(
                    "get_block", f"no block is named {name!r} in function {fname!r} "
                    f"(its blocks are: {', '.join(names) or 'none'})")
            raise ScheduleError("get_block", f"{len(found)} blocks are named {name!r} in function "
                                f"{fname!r}; block names must be unique to be looked up")
        return self._rv_for(found[0], BlockRV)

    get_sblock = get_block  # TVM >= 0.24's name (s_tir.Schedule)

    @primitive("EnterPostproc", is_pure=True)
    def enter_postproc(self) -> None:
        """Mark where post-processing begins in the trace (``meta_schedule`` postprocs follow).

        Replaying with ``trace.apply_to_schedule(sch, remove_postproc=True)`` stops here, which
        is how a tuner mutates a measured trace and then post-processes it again.
        """

    def _block_by_name(self, name: str, primitive_name: str) -> BlockRV:
        """``get_block(name)`` for a primitive given a block name; errors name the primitive."""
        try:
            return self.get_block(name)
        except ScheduleError as err:
            raise ScheduleError(primitive_name, err.detail) from None

    @primitive("GetLoops", inputs=("block",), is_pure=True)
    def get_loops(self, block: BlockRV) -> list[LoopRV]:
        """The loops above ``block`` up to its enclosing block, outermost first."""
        sref = self._block_sref(block, "get_loops")
        return [self._rv_for(r, LoopRV) for r in loop_srefs(sref)]

    @primitive("GetChildBlocks", inputs=("block_or_loop",), is_pure=True)
    def get_child_blocks(self, block_or_loop) -> list[BlockRV]:
        """The blocks directly under a block or loop (not nested in other blocks)."""
        sref = self._sref(block_or_loop, "get_child_blocks")
        return [self._rv_for(r, BlockRV) for r in child_block_srefs(self.state, sref)]

    @primitive("GetProducers", inputs=("block",), is_pure=True)
    def get_producers(self, block: BlockRV) -> list[BlockRV]:
        """Blocks of the same scope, earlier in program order, writing what ``block`` reads."""
        sref = self._block_sref(block, "get_producers")
        return [self._rv_for(r, BlockRV) for r in producer_srefs(self.state, sref)]

    @primitive("GetConsumers", inputs=("block",), is_pure=True)
    def get_consumers(self, block: BlockRV) -> list[BlockRV]:
        """Blocks of the same scope, later in program order, reading what ``block`` writes."""
        sref = self._block_sref(block, "get_consumers")
        return [self._rv_for(r, BlockRV) for r in consumer_srefs(self.state, sref)]


# A trace written by TVM >= 0.24 (or by mlckit.s_tir) calls GetBlock "GetSBlock".
INSTRUCTION_KINDS.setdefault("GetSBlock", INSTRUCTION_KINDS["GetBlock"])


class Schedule(
    LoopTransformationMixin,
    ForKindMixin,
    ComputeAtMixin,
    ComputeInlineMixin,
    ReductionMixin,
    RFactorMixin,
    BlockizeMixin,
    CacheReadWriteMixin,
    LayoutMixin,
    AnnotateMixin,
    SamplingMixin,
    ComputeLocationMixin,
    TensorizeMixin,
    ScheduleBase,
):
    """A TensorIR schedule (TVM's ``tir.Schedule``): primitives that transform the functions
    of ``sch.mod`` while keeping what they compute, each recorded in ``sch.trace``.

    >>> from mlckit import tir
    >>> from mlckit.script import tir as T
    >>> @T.prim_func
    ... def double(a: T.Buffer((8,), "float32"), b: T.Buffer((8,), "float32")):
    ...     for i in range(8):
    ...         with T.block("B"):
    ...             vi = T.axis.spatial(8, i)
    ...             b[vi] = a[vi] * T.float32(2)
    >>> sch = tir.Schedule(double)
    >>> (i,) = sch.get_loops(sch.get_block("B"))
    >>> i0, i1 = sch.split(i, factors=[None, 4])
    >>> print(sch.mod["main"].script())
    # from tvm.script import tir as T
    <BLANKLINE>
    @T.prim_func
    def double(a: T.Buffer((8,), "float32"), b: T.Buffer((8,), "float32")):
        # with T.block("root"):
        for i_0, i_1 in T.grid(2, 4):
            with T.block("B"):
                vi = T.axis.spatial(8, i_0 * 4 + i_1)
                T.reads(a[vi])
                T.writes(b[vi])
                b[vi] = a[vi] * T.float32(2.0)
    """

    def __getattr__(self, name: str):
        # reached only for names the schedule lacks: say which primitive was meant
        # (sch.splt -> split); dunder look-ups (copy, pickle) fail plainly
        from mlckit.error import did_you_mean

        hint = "" if name.startswith("__") else did_you_mean(name, dir(type(self)))
        raise AttributeError(f"'{type(self).__name__}' object has no attribute {name!r}{hint}")


def _gone(rv, sref) -> str:
    """Why a BlockRV / LoopRV cannot be used: which block or loop, removed by which primitive."""
    what = "block" if isinstance(rv, BlockRV) else "loop"
    removed = getattr(sref, "removed", None)
    if removed is None:
        return (f"the {what} this {type(rv).__name__} referred to no longer exists (an earlier "
                "primitive removed or replaced it)")
    what, name, by = removed
    again = ("get the loops again with sch.get_loops(block)" if what == "loop"
             else "get the block again with sch.get_block(name)")
    by_text = f"sch.{by}(...)" if by else "an earlier primitive"
    return (f"{what} `{name}` no longer exists: {by_text} removed or replaced it; use what "
            f"{by_text} returned, or {again}")
