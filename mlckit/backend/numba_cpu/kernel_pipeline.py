"""The Numba compiler pipeline of generated kernels: Numba's own, less what finds nothing.

Numba compiles a function through a list of passes (its ``nopython`` pipeline).  Two of
them only rewrite Python that a generated kernel never contains, yet walk all of its IR:

- ``InlineClosureLikes`` inlines locally defined closures, lambdas and comprehensions;
- ``NopythonRewrites`` fuses array expressions (``A + B * C`` on whole arrays) into one
  loop and folds string-literal indexing.

A kernel printed from lowered TIR is loops over scalars and ``ramp`` vectors (no closure,
no array expression, no string), so both leave its IR as it was, and the machine code is
the same (``tests/backend/numba_cpu/test_kernel_pipeline.py`` compares the optimized
LLVM).  Left out, a tuning candidate compiles in ~10 % less time.

Typing is most of the rest of Numba's front end, and nearly all of typing is finding the
signature of a call: ``i_0 * 1024 + j_1 * 8`` asks, for every operator, each of Numba's
templates for ``*`` and ``+`` whether it takes ``(int64, Literal[int](1024))``, once with
the literal and once without.  A kernel asks the same questions hundreds of times, and every
kernel asks the same ones, so :class:`TypeInferenceReusingCallTypes` keeps the answers for
functions of numbers (per typing context, for the process): another ~10 % (both together:
~20 % in one process building candidates one after another, ~7 % in two tuning workers
side by side, docs/performance.md).  An answer only depends on the function's type and
the argument types; registering new overloads for a function gives it a new type, so no
stale answer is reused.

Its ``for`` loops over ``range`` are compiled as counted loops (``counted_range``: no
trip-count division, no zero-step check): half the LLVM for Numba to build and LLVM to
optimize; with the views built in registers (``views``), a distinct ``mm_relu`` schedule
compiles with ~11 % fewer instructions executed.

A kernel of parallel loops (``prange``: Numba's parfor passes expect closures inlined) or
in object mode is compiled with Numba's default pipeline.

Before (Numba's ``Compiler``)::

    ... with_lifting, inline_closure_likes, rewrite_semantic_constants, ...
    ... nopython_type_inference, strip_phis, inline_overloads, nopython_rewrites, ...

After (``KernelCompiler``)::

    ... ir_processing, counted_range_loops, with_lifting, rewrite_semantic_constants, ...
    ... nopython_type_inference_reusing_call_types, strip_phis, inline_overloads, ...

Example::

    from numba import njit
    from mlckit.backend.numba_cpu.kernel_pipeline import KernelCompiler

    @njit(pipeline_class=KernelCompiler)
    def scale(A):
        for i in range(A.shape[0]):
            A[i] = A[i] * 2.0
"""

from __future__ import annotations

import contextlib

from numba.core import types
from numba.core.compiler import Compiler, CompilerBase, DefaultPassBuilder
from numba.core.compiler_machinery import PassManager, register_pass
from numba.core.typed_passes import (
    DumpParforDiagnostics,
    NopythonRewrites,
    NopythonTypeInference,
)
from numba.core.untyped_passes import InlineClosureLikes, IRProcessing

from .counted_range import CountedRangeLoops

__all__ = ["Compiler", "KernelCompiler", "LEFT_OUT", "TypeInferenceReusingCallTypes",
           "call_types"]

#: Numba's passes a generated kernel has no use for (parfor diagnostics: nothing to dump)
LEFT_OUT = (InlineClosureLikes, NopythonRewrites, DumpParforDiagnostics)


def call_types(typing_context) -> dict:
    """The signatures found for calls of functions of numbers in ``typing_context``:
    ``{(function type, argument types): signature}``."""
    return vars(typing_context).setdefault("_mlckit_call_types", {})


@contextlib.contextmanager
def _reusing_call_types(typing_context):
    """``typing_context.resolve_function_type`` answers a call of a function (an operator,
    a math function) on numbers it has typed before from :func:`call_types`."""
    if "resolve_function_type" in vars(typing_context):  # a nested compile: already on
        yield
        return
    resolve = typing_context.resolve_function_type
    known = call_types(typing_context)

    def resolve_function_type(func, args, kws):
        if kws or not isinstance(func, types.Function) or not all(
                isinstance(a, (types.Number, types.Boolean)) for a in args):
            return resolve(func, args, kws)
        key = (func, tuple(args))
        signature = known.get(key)
        if signature is None:
            signature = resolve(func, args, kws)
            if signature is not None:  # a failure is Numba's to report, every time
                known[key] = signature
        return signature

    typing_context.resolve_function_type = resolve_function_type
    try:
        yield
    finally:
        del typing_context.resolve_function_type


@register_pass(mutates_CFG=True, analysis_only=False)
class TypeInferenceReusingCallTypes(NopythonTypeInference):
    """Numba's type inference, reusing the signatures of calls on numbers typed before
    (the first typing of a call records what lowering needs, e.g. which implementation)."""

    _name = "nopython_type_inference_reusing_call_types"

    def run_pass(self, state):
        with _reusing_call_types(state.typingctx):
            return super().run_pass(state)


_REPLACED = {NopythonTypeInference: TypeInferenceReusingCallTypes}


class KernelCompiler(CompilerBase):
    """Numba's nopython pipeline without :data:`LEFT_OUT`, its ``range`` loops counted
    (:class:`~.counted_range.CountedRangeLoops`), its type inference reusing call types;
    Numba's default for a kernel of parallel loops or in object mode."""

    def define_pipelines(self):
        state = self.state
        if state.flags.force_pyobject or state.flags.auto_parallel.enabled:
            return [DefaultPassBuilder.define_nopython_pipeline(state)]
        pipeline = PassManager("nopython")
        for part in (DefaultPassBuilder.define_untyped_pipeline(state),
                     DefaultPassBuilder.define_typed_pipeline(state),
                     DefaultPassBuilder.define_nopython_lowering_pipeline(state)):
            for cls, what in part.passes:
                if cls not in LEFT_OUT:
                    pipeline.passes.append((_REPLACED.get(cls, cls), what))
                if cls is IRProcessing:
                    pipeline.passes.append((CountedRangeLoops, "range loops counted"))
        pipeline.finalize()
        return [pipeline]
