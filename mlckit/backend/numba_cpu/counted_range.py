"""``for i in range(n)`` in a generated kernel compiled as a counted loop: ``i < n``, ``i + 1``.

Numba compiles a ``range`` loop through Python's protocol for any range: a range object
(start, stop, step), an iterator that computes the trip count with a division and a sign
test, a branch raising ``ValueError`` for a zero step, and a count decremented each
iteration.  That is ~80 LLVM instructions and four blocks per loop before LLVM's passes
reduce them again; in a 7-loop kernel the loops are half of what Numba compiles.

A generated kernel's loops count up by one (lowered TIR: ``for i in range(extent)`` or
``range(min, min + extent)``), so :class:`CountedRangeLoops`, a pass of the kernel
pipeline, has each such ``range`` call that only feeds a ``for`` loop call
:func:`counted_range` instead: the same values, of the same integer type as Numba's
``range`` would give, from an iterator that is a pointer to the index and the stop.  The
source the learner reads still says ``range``.

Before (Numba IR of ``for i in range(8)``)::

    $range = global(range: <class 'range'>)
    $r = call $range($const8)          # range_state64: start, stop, step
    $it = getiter(value=$r)            # range_iter64: trip count by division, step check

After::

    $range = global(counted_range: <function counted_range>)
    $r = call $range($const8)          # counted_range(int64): start, stop
    $it = getiter(value=$r)            # counted_range_iter(int64): &index, stop

Example::

    from numba import njit
    from mlckit.backend.numba_cpu.kernel_pipeline import KernelCompiler

    @njit(pipeline_class=KernelCompiler)     # the pipeline that runs CountedRangeLoops
    def scale(A):
        for i in range(A.shape[0]):
            A[i] = A[i] * 2.0
"""

from __future__ import annotations

import builtins

from numba.core import cgutils, ir, types
from numba.core.compiler_machinery import FunctionPass, register_pass
from numba.core.datamodel import models
from numba.core.imputils import lower_builtin
from numba.core.typing import signature
from numba.core.typing.templates import AbstractTemplate, infer_global
from numba.extending import register_model

__all__ = ["CountedRange", "CountedRangeIter", "CountedRangeLoops", "counted_range"]


def counted_range(*bounds):
    """``range(stop)`` or ``range(start, stop)``, compiled as a counted loop in a kernel."""
    return builtins.range(*bounds)


class CountedRange(types.IterableType):
    """``counted_range(start, stop)`` of integers ``dtype`` (Numba's choice for ``range``)."""

    def __init__(self, dtype):
        self.dtype = dtype
        super().__init__(name=f"counted_range({dtype})")

    @property
    def iterator_type(self):
        return CountedRangeIter(self.dtype)


class CountedRangeIter(types.SimpleIteratorType):
    """Its iterator: a pointer to the index (on the stack) and the stop."""

    def __init__(self, dtype):
        super().__init__(f"counted_range_iter({dtype})", dtype)


@register_model(CountedRange)
class _RangeModel(models.StructModel):
    def __init__(self, dmm, fe_type):
        super().__init__(dmm, fe_type, [("start", fe_type.dtype), ("stop", fe_type.dtype)])


@register_model(CountedRangeIter)
class _IterModel(models.StructModel):
    def __init__(self, dmm, fe_type):
        dtype = fe_type.yield_type
        super().__init__(dmm, fe_type, [("index", types.CPointer(dtype)), ("stop", dtype)])


@infer_global(counted_range)
class _CountedRangeTemplate(AbstractTemplate):
    def generic(self, args, kws):
        if kws or len(args) not in (1, 2) or not all(isinstance(a, types.Integer) for a in args):
            return None
        numbas = self.context.resolve_function_type(
            self.context.resolve_value_type(builtins.range), args, {})
        if numbas is None:
            return None
        return signature(CountedRange(numbas.return_type.dtype), *numbas.args)


@lower_builtin(counted_range, types.Integer)
@lower_builtin(counted_range, types.Integer, types.Integer)
def _make_range(context, builder, sig, args):
    dtype = sig.return_type.dtype
    bounds = [context.cast(builder, v, t, dtype) for v, t in zip(args, sig.args)]
    if len(bounds) == 1:
        bounds.insert(0, context.get_constant(dtype, 0))
    return cgutils.pack_struct(builder, bounds)


@lower_builtin("getiter", CountedRange)
def _getiter(context, builder, sig, args):
    (value,) = args
    index = cgutils.alloca_once_value(builder, builder.extract_value(value, 0))
    return cgutils.pack_struct(builder, [index, builder.extract_value(value, 1)])


@lower_builtin("iternext", CountedRangeIter)
def _iternext(context, builder, sig, args):
    """``(index, index < stop)``, the index advanced by one either way: once it reaches the
    stop, the loop leaves the iterator, so no branch is needed."""
    (it,) = args
    pointer, stop = builder.extract_value(it, 0), builder.extract_value(it, 1)
    index = builder.load(pointer)
    less = builder.icmp_signed if sig.args[0].yield_type.signed else builder.icmp_unsigned
    valid = less("<", index, stop)
    builder.store(builder.add(index, index.type(1)), pointer)
    return cgutils.pack_struct(builder, [index, valid])


@register_pass(mutates_CFG=False, analysis_only=False)
class CountedRangeLoops(FunctionPass):
    """Each ``range(stop)`` or ``range(start, stop)`` whose value only a ``for`` loop
    iterates calls :func:`counted_range` (module docstring: before and after)."""

    _name = "counted_range_loops"

    def __init__(self):  # abstract in Numba's CompilerPass
        FunctionPass.__init__(self)

    def run_pass(self, state):
        globals_, calls, iterated, uses = {}, {}, set(), {}
        for block in state.func_ir.blocks.values():
            for inst in block.body:
                for var in inst.list_vars():
                    uses[var.name] = uses.get(var.name, 0) + 1
                if not isinstance(inst, ir.Assign):
                    continue
                value = inst.value
                if isinstance(value, ir.Global) and value.value is builtins.range:
                    globals_[inst.target.name] = inst
                elif isinstance(value, ir.Expr) and value.op == "call":
                    calls[inst.target.name] = value
                elif isinstance(value, ir.Expr) and value.op == "getiter":
                    iterated.add(value.value.name)
        # a range global is rewritten where every use is a loop's call of 1 or 2 bounds
        users: dict = {}
        for name, call in calls.items():
            if call.func.name in globals_:
                loop = (len(call.args) in (1, 2) and not call.kws and call.vararg is None
                        and name in iterated and uses[name] == 2)  # assigned, iterated
                users.setdefault(call.func.name, []).append(loop)
        changed = False
        for name, assign in globals_.items():
            loops = users.get(name, [])
            if loops and all(loops) and uses[name] == 1 + len(loops):
                assign.value = ir.Global("counted_range", counted_range, assign.value.loc)
                changed = True
        return changed
