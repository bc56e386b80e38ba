"""``mlckit.build``: compile PrimFuncs into a runtime module of callables (TVM's ``tvm.build``).

Targets: ``"llvm"`` and ``"numba"`` (also ``"llvm -mcpu=..."``, ``"cpu"``) select the Numba
CPU backend; ``"lnumpy"`` the checked low-level NumPy reference; ``"cuda"`` (and its tags,
``"nvidia/tesla-p100"``) the ``numba.cuda`` backend.  Functions are called
destination-passing style with NumPy arrays or ``mlckit.nd`` arrays.

Example::

    import mlckit as tvm
    rt_mod = tvm.build(MyModule, target="llvm")
    rt_mod["mm_relu"](a_nd, b_nd, c_nd)
    timer = rt_mod.time_evaluator("mm_relu", tvm.cpu(), number=10)
    print(timer(a_nd, b_nd, c_nd).mean)
"""

from __future__ import annotations

from collections.abc import Callable

from mlckit.error import TVMNotImplementedError, TVMTypeError
from mlckit.ffi.registry import register_func
from mlckit.ir.module import IRModule
from mlckit.ir.transform import Pass
from mlckit.runtime.module import BenchmarkResult, Executable, Module
from mlckit.target import Target
from mlckit.tir.expr_vector import check_fixed_lanes
from mlckit.tir.function import PrimFunc
from mlckit.tir.pipeline import get_tir_pipeline

__all__ = ["BenchmarkResult", "Executable", "Module", "build", "compile", "register_backend"]


def _build_numba(func, name, **options):
    from mlckit.backend import numba_cpu

    return numba_cpu.build(func, name, **options)


def _build_lnumpy(func, name, **options):
    from mlckit.backend import lnumpy

    if options:
        raise TVMTypeError(f"the lnumpy target takes no options, got {sorted(options)}")
    return lnumpy.build(func, name)


def _build_cuda(func, name, target=None, **options):
    from mlckit.backend import numba_cuda

    return numba_cuda.build(func, name, target=target, **options)


# backend name -> builder(func, name, **options) -> callable with .source
BACKENDS: dict[str, Callable] = {"numba_cpu": _build_numba, "lnumpy": _build_lnumpy,
                                 "numba_cuda": _build_cuda}
# target kind -> backend name
TARGETS: dict[str, str] = {"llvm": "numba_cpu", "numba": "numba_cpu", "cpu": "numba_cpu",
                           "c": "numba_cpu", "numba_cpu": "numba_cpu", "lnumpy": "lnumpy",
                           "cuda": "numba_cuda", "nvptx": "numba_cuda"}
# backends whose builder also takes ``target=`` (the Target, for its device limits)
TAKES_TARGET: set[str] = {"numba_cuda"}


def register_backend(name: str, builder: Callable, targets=(), takes_target: bool = False) -> None:
    """Make ``builder(func, name, **options)`` the backend ``name`` for the target kinds
    ``targets`` (``takes_target``: it is also given ``target=Target(...)``)."""
    BACKENDS[name] = builder
    for t in targets:
        TARGETS[t] = name
    if takes_target:
        TAKES_TARGET.add(name)


def _target_kind(target) -> str:
    """The kind name of ``target`` (a string, dict or Target; None: the current or llvm)."""
    if target is None:
        target = Target.current() or "llvm"
    kind = Target(target).kind.name
    if kind not in TARGETS:
        raise TVMNotImplementedError(
            f"target {str(target)!r}: mlckit has no backend for target kind {kind!r} yet "
            f"(backends: {', '.join(sorted(TARGETS))})")
    return kind


def build(func_or_mod, target="llvm", name: str | None = None, tir_pipeline=None,
          **options) -> Module:
    """Compile a PrimFunc or the PrimFuncs of an IRModule for ``target``.

    ``target``: ``"llvm"`` / ``"numba"`` (Numba CPU), ``"lnumpy"`` (checked reference) or
    ``"cuda"`` (``numba.cuda``: a GPU, else the CPU or the simulator, see
    ``mlckit.backend.numba_cuda``).  ``options`` go to the backend (numba: ``fastmath=True``,
    ``cache=False``; cuda: ``mode="gpu"|"cpu"|"sim"``, ``sync=False``).

    ``tir_pipeline`` (as ``tvm.tir.build(mod, target, pipeline)`` / ``tvm.compile``): a Pass,
    or the name of one of ``tir.get_tir_pipeline`` (``"s_tir"``: TVM's default lowering),
    run on the PrimFuncs before the backend gets them; None or ``"default"`` (as
    ``relax.build``): the backend takes the TensorIR as it is and lowers it itself.

    Example::

        f = mlckit.build(mm_relu, target="llvm")
        f["mm_relu"](a, b, c)      # or f(a, b, c): it has one function
        f = mlckit.build(mm_relu, "llvm", tir_pipeline=tvm.tir.get_default_tir_pipeline())
    """
    backend = TARGETS[_target_kind(target)]
    builder = BACKENDS[backend]
    if backend in TAKES_TARGET:
        options["target"] = Target(target if target is not None else Target.current())
    if isinstance(func_or_mod, PrimFunc):
        from mlckit.backend.codegen import func_name

        fname = name or func_name(func_or_mod)
        funcs = {fname: func_or_mod}
    elif isinstance(func_or_mod, IRModule):
        funcs = {}
        for gv, func in func_or_mod.functions.items():
            if not isinstance(func, PrimFunc):
                raise TVMTypeError(
                    f"mlckit.build compiles TIR only, but the IRModule has the "
                    f"{type(func).__name__} {gv.name_hint!r}: use relax.build for Relax"
                )
            funcs[gv.name_hint] = func
    else:
        raise TVMTypeError(
            f"mlckit.build expects a tir.PrimFunc or an IRModule, got {type(func_or_mod).__name__}"
        )
    funcs = _lowered(funcs, tir_pipeline)
    for fname, func in funcs.items():
        check_fixed_lanes(func, fname)  # no backend has scalable (SVE) vectors
    built = {fname: builder(func, fname, **options) for fname, func in funcs.items()}
    return Module(built, str(target), backend)


def _lowered(funcs: dict, tir_pipeline) -> dict:
    """``funcs`` (name -> PrimFunc) after ``tir_pipeline`` (see :func:`build`)."""
    if tir_pipeline is None or tir_pipeline == "default":
        return funcs
    if isinstance(tir_pipeline, str):
        tir_pipeline = get_tir_pipeline(tir_pipeline)
    if not isinstance(tir_pipeline, Pass):
        raise TVMTypeError(f"tir_pipeline must be a Pass or a pipeline name of "
                           f"tir.get_tir_pipeline, got {type(tir_pipeline).__name__}")
    mod = tir_pipeline(IRModule(dict(funcs)))
    return {gv.name_hint: f for gv, f in mod.functions.items()}


def compile(mod, target=None, *, relax_pipeline="default", tir_pipeline="default", **options):
    """Compile ``mod`` for ``target``, as ``tvm.compile``: a module with Relax functions
    becomes a VM executable (``relax.build``); a TIR-only module or a PrimFunc becomes an
    :class:`Executable` whose functions are called by name.

    Example::

        ex = tvm.compile(MyModule, target="llvm")        # TIR only
        ex["mm_relu"](a_nd, b_nd, c_nd)
        ex = tvm.compile(RelaxModule, "llvm")            # with Relax: run it on the VM
        vm = relax.VirtualMachine(ex, tvm.cpu())
    """
    if _has_relax(mod):
        from mlckit import relax

        return relax.build(mod, target=target if target is not None else "llvm",
                           relax_pipeline=relax_pipeline, tir_pipeline=tir_pipeline, **options)
    return Executable(build(mod, target, tir_pipeline=tir_pipeline, **options))


# relax.build and FoldConstant compile PrimFuncs through this entry (TVM's name): relax sits
# below the driver and finds it here instead of importing it.
register_func("tir.build", build)


def _has_relax(mod) -> bool:
    if isinstance(mod, IRModule):
        return any(not isinstance(f, PrimFunc) for f in mod.functions.values())
    return not isinstance(mod, PrimFunc) and type(mod).__module__.startswith("mlckit.relax")
