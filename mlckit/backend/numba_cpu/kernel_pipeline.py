"""The Numba compiler pipeline of generated kernels: Numba's own, less what finds nothing.

Numba compiles a function through a list of passes (its ``nopython`` pipeline).  Two of
them only rewrite Python that a generated kernel never contains, yet walk all of its IR:

- ``InlineClosureLikes`` inlines locally defined closures, lambdas and comprehensions;
- ``NopythonRewrites`` fuses array expressions (``A + B * C`` on whole arrays) into one
  loop and folds string-literal indexing.

A kernel printed from lowered TIR is loops over scalars and ``ramp`` vectors (no closure,
no array expression, no string), so both leave its IR as it was, and the machine code is
the same (``tests/backend/numba_cpu/test_kernel_pipeline.py`` compares the optimized
LLVM).  Left out, a tuning candidate compiles in ~10 % less time.  A kernel of parallel
loops (``prange``: Numba's parfor passes expect closures inlined) or in object mode is
compiled with Numba's default pipeline.

Before (Numba's ``Compiler``)::

    ... with_lifting, inline_closure_likes, rewrite_semantic_constants, ...
    ... nopython_type_inference, strip_phis, inline_overloads, nopython_rewrites, ...

After (``KernelCompiler``)::

    ... with_lifting, rewrite_semantic_constants, ...
    ... nopython_type_inference, strip_phis, inline_overloads, ...

Example::

    from numba import njit
    from mlckit.backend.numba_cpu.kernel_pipeline import KernelCompiler

    @njit(pipeline_class=KernelCompiler)
    def scale(A):
        for i in range(A.shape[0]):
            A[i] = A[i] * 2.0
"""

from __future__ import annotations

from numba.core.compiler import Compiler, CompilerBase, DefaultPassBuilder
from numba.core.compiler_machinery import PassManager
from numba.core.typed_passes import DumpParforDiagnostics, NopythonRewrites
from numba.core.untyped_passes import InlineClosureLikes

__all__ = ["Compiler", "KernelCompiler", "LEFT_OUT"]

#: Numba's passes a generated kernel has no use for (parfor diagnostics: nothing to dump)
LEFT_OUT = (InlineClosureLikes, NopythonRewrites, DumpParforDiagnostics)


class KernelCompiler(CompilerBase):
    """Numba's nopython pipeline without :data:`LEFT_OUT`; Numba's default for a kernel of
    parallel loops or in object mode."""

    def define_pipelines(self):
        state = self.state
        if state.flags.force_pyobject or state.flags.auto_parallel.enabled:
            return [DefaultPassBuilder.define_nopython_pipeline(state)]
        pipeline = PassManager("nopython")
        for part in (DefaultPassBuilder.define_untyped_pipeline(state),
                     DefaultPassBuilder.define_typed_pipeline(state),
                     DefaultPassBuilder.define_nopython_lowering_pipeline(state)):
            pipeline.passes.extend(p for p in part.passes if p[0] not in LEFT_OUT)
        pipeline.finalize()
        return [pipeline]
