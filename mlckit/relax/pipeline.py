"""Pre-defined pass pipelines (as ``tvm.relax.pipeline``).

``zero_pipeline()``, the course's optimizing pipeline::

    LegalizeOps → AnnotateTIROpPattern → FoldConstant → FuseOps → FuseTIR

``default_build_pipeline()``, what ``relax.build`` / ``tvm.compile`` run by default (it
legalizes and lowers for the VM, it does not fuse)::

    LegalizeOps → ToNonDataflow → CallTIRRewrite → StaticPlanBlockMemory → LowerAllocTensor
    → VMShapeLower

``LegalizeOps`` takes part when mlckit has it (it is looked up when the pipeline is made).
``get_pipeline(name)`` returns a pipeline by name (``"zero"``, ``"default"``,
``"default_build"``); ``register_pipeline`` adds one.  ``get_default_pipeline(target)`` is
the per-target pipeline (library dispatch, legalization with fusion, dataflow lowering,
finalization) for the CPU targets mlckit compiles.

Example::

    mod = relax.get_pipeline("zero")(mod)      # fused kernels
    ex = tvm.compile(mod, "llvm")              # then the default build pipeline
"""

from __future__ import annotations

import inspect
from collections.abc import Callable

from mlckit.error import TVMValueError
from mlckit.ir.module import IRModule
from mlckit.ir.transform import ModulePass, Pass, PassContext, PassInfo, Sequential
from mlckit.target import Target

from . import transform

_CPU_KINDS = ("llvm", "c", "numba", "numba_cpu", "cpu", "lnumpy")


def _legalize_ops(enable_warning: bool = False) -> list[Pass]:
    """``[LegalizeOps(...)]`` when mlckit has the pass, else ``[]`` (it lands with the
    high-level operators)."""
    legalize = getattr(transform, "LegalizeOps", None)
    if legalize is None:
        return []
    try:
        accepts = "enable_warning" in inspect.signature(legalize).parameters
    except (TypeError, ValueError):
        accepts = False
    return [legalize(enable_warning=enable_warning) if accepts else legalize()]


def _wrap(name: str, make_passes: Callable[[], list[Pass]]) -> ModulePass:
    """A module pass running ``make_passes()`` in order (each reports to the instruments)."""

    def run(mod: IRModule, ctx: PassContext) -> IRModule:
        return Sequential(make_passes())(mod)

    return ModulePass(run, PassInfo(0, name))


def zero_pipeline(*, enable_warning: bool = False) -> ModulePass:
    """LegalizeOps, AnnotateTIROpPattern, FoldConstant, FuseOps, FuseTIR (as TVM's).

    Example::

        mod = relax.pipeline.zero_pipeline()(mod)
    """
    return _wrap("f_zero_pipeline", lambda: [
        *_legalize_ops(enable_warning), transform.AnnotateTIROpPattern(),
        transform.FoldConstant(), transform.FuseOps(), transform.FuseTIR()])


def dataflow_lower_passes(target=None) -> list[Pass]:
    """Out of dataflow form, outputs allocated explicitly.

    Example::

        mod = tvm.transform.Sequential(dataflow_lower_passes("llvm"))(mod)
    """
    _check_target(target, "dataflow lowering passes")
    return [transform.ToNonDataflow(), transform.CallTIRRewrite()]


def finalize_passes(target=None) -> list[Pass]:
    """Memory planning and the lowering of shapes and allocations for the VM.

    Example::

        mod = tvm.transform.Sequential(finalize_passes("llvm"))(mod)
    """
    _check_target(target, "finalization passes")
    return [transform.StaticPlanBlockMemory(), transform.LowerAllocTensor(),
            transform.VMShapeLower()]


def library_dispatch_passes(target=None) -> list[Pass]:
    """Calls to vendor libraries: none for the CPU (as TVM's cpu_generic).

    Example::

        library_dispatch_passes("llvm")     # []
    """
    _check_target(target, "library dispatch passes")
    return []


def legalize_passes(target=None) -> list[Pass]:
    """Legalization and fusion: ``FuseTransposeMatmul`` (mlckit adds it: ``x @ w.T`` reads
    ``w`` in place instead of transposing it on every call), then the zero pipeline's passes.

    Example::

        mod = tvm.transform.Sequential(legalize_passes("llvm"))(mod)
    """
    _check_target(target, "legalize passes")
    return [transform.FuseTransposeMatmul(), *_legalize_ops(), transform.AnnotateTIROpPattern(),
            transform.FoldConstant(), transform.FuseOps(), transform.FuseTIR()]


def default_build_pipeline() -> ModulePass:
    """What ``relax.build`` runs by default: LegalizeOps, then the VM lowering.

    Example::

        lowered = relax.pipeline.default_build_pipeline()(mod)
    """
    return _wrap("_pipeline", lambda: [
        *_legalize_ops(), *dataflow_lower_passes(), *finalize_passes()])


def get_default_pipeline(target) -> ModulePass:
    """The whole pipeline for ``target`` (fusion included): library dispatch, legalization
    and fusion, dataflow lowering, finalization.

    Example::

        mod = relax.get_default_pipeline(tvm.target.Target("llvm"))(mod)
    """
    target = Target(target) if not isinstance(target, Target) else target
    _check_target(target, "default pipeline")

    def run(mod: IRModule, ctx: PassContext) -> IRModule:
        with target:
            return Sequential(library_dispatch_passes(target) + legalize_passes(target)
                              + dataflow_lower_passes(target) + finalize_passes(target),
                              name="default_pipeline")(mod)

    return ModulePass(run, PassInfo(0, "_pipeline"))


def _check_target(target, what: str) -> None:
    if target is None:
        return
    kind = (target if isinstance(target, Target) else Target(target)).kind.name
    if kind not in _CPU_KINDS:
        raise TVMValueError(f"Target {str(target)!r} is not yet supported by {what}: mlckit "
                            f"compiles for the CPU ({', '.join(_CPU_KINDS)})")


#: name -> function making the pipeline (keyword arguments are passed through)
PIPELINE_MAP: dict[str, Callable[..., Pass]] = {
    "zero": zero_pipeline,
    "default": default_build_pipeline,
    "default_build": default_build_pipeline,
}


def get_pipeline(name: str = "zero", **kwargs) -> Pass:
    """The pre-built pipeline ``name`` (see ``PIPELINE_MAP``).

    Example::

        mod = relax.get_pipeline("zero")(mod)
    """
    if name not in PIPELINE_MAP:
        raise TVMValueError(f"Unknown pre-built pipeline {name!r}, candidates are "
                            f"{list(PIPELINE_MAP)}")
    return PIPELINE_MAP[name](**kwargs)


def register_pipeline(name: str):
    """Decorator registering a function that makes a pipeline under ``name``.

    Example::

        @relax.register_pipeline("mine")
        def my_pipeline():
            return tvm.transform.Sequential([relax.transform.FuseOps()])
    """
    if name in PIPELINE_MAP:
        raise TVMValueError(f"Pipeline {name!r} has already been registered")

    def register(func):
        PIPELINE_MAP[name] = func
        return func

    return register


__all__ = ["PIPELINE_MAP", "dataflow_lower_passes", "default_build_pipeline",
           "finalize_passes", "get_default_pipeline", "get_pipeline", "legalize_passes",
           "library_dispatch_passes", "register_pipeline", "zero_pipeline"]
