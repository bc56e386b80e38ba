"""``relax.build``: lower an IRModule for the VM and compile it (as ``tvm.relax.build``).

1. the Relax pipeline ``relax_pipeline`` (default: ``"default"``, TVM's
   ``default_build_pipeline``: ``LegalizeOps`` when it exists, then ``ToNonDataflow →
   CallTIRRewrite → StaticPlanBlockMemory → LowerAllocTensor → VMShapeLower``), run under
   the current ``PassContext`` (so instruments see each pass) and inside ``with target:``;
2. every Relax function → VM bytecode;
3. every PrimFunc → a callable, by the TIR backend of ``target``: ``"llvm"`` / ``"numba"``
   → Numba CPU, ``"lnumpy"`` → the checked low-level NumPy reference (``tir_pipeline``, a
   pass, runs on the PrimFuncs first).

Fusion is not part of the default pipeline (as in TVM): run ``relax.get_pipeline("zero")``
first, or pass ``relax_pipeline=relax.get_pipeline("zero")`` plus the lowering yourself.

Example::

    ex = relax.build(MyModule, target="llvm")
    vm = relax.VirtualMachine(ex, mlckit.cpu())
    out = vm["main"](x)
"""

from __future__ import annotations

from mlckit.error import TVMTypeError, TVMValueError
from mlckit.ffi.registry import get_global_func
from mlckit.ir.module import IRModule
from mlckit.ir.transform import Pass, Sequential
from mlckit.tir.function import PrimFunc

from .expr import Function


def vm_lowering_pipeline() -> Sequential:
    """The passes ``relax.build`` runs by default, as one ``Sequential`` (the passes of
    ``relax.pipeline.default_build_pipeline()``).

    Example::

        lowered = relax.vm_lowering_pipeline()(mod)
        lowered.show()
    """
    from .pipeline import _legalize_ops, dataflow_lower_passes, finalize_passes

    return Sequential([*_legalize_ops(), *dataflow_lower_passes(), *finalize_passes()],
                      name="vm_lowering")


def build(mod, target="llvm", params: dict | None = None, relax_pipeline="default",
          tir_pipeline="default", exec_mode: str = "bytecode", *, pipeline=None,
          system_lib=None, **backend_options):
    """Compile ``mod`` (an IRModule, or a Relax Function as ``main``) for the VM.

    ``params``: name -> array, bound into ``main`` first (``BindParams``).
    ``relax_pipeline``: a pipeline name (``"default"``, ``"zero"`` …, see
    ``relax.get_pipeline``), a pass, or None to run no pass (the module is lowered already);
    ``pipeline=`` is the same, mlckit's older spelling.  ``tir_pipeline``: ``"default"``
    (nothing: mlckit's backends take TensorIR as it is) or a pass run on the PrimFuncs.
    ``backend_options`` go to the TIR backend (numba: ``fastmath=True``); ``system_lib`` is
    accepted for TVM's signature and has no effect (mlckit makes no native libraries).

    Example::

        ex = relax.build(MyModule, target="llvm")
        print(ex.as_text())
    """
    if exec_mode != "bytecode":
        raise TVMValueError(f"exec_mode {exec_mode!r} is not supported: mlckit's VM runs bytecode")
    if isinstance(mod, Function):
        mod = IRModule({"main": mod.with_attr("global_symbol", "main")})  # as IRModule.from_expr
    if not isinstance(mod, IRModule):
        raise TVMTypeError(f"relax.build expects an IRModule, got {type(mod).__name__}")
    if (pipeline if pipeline is not None else relax_pipeline) is not None:
        _check_well_formed(mod)  # a lowered module (no pipeline) has VM builtins TVM allows
    if params:
        from .transform import BindParams

        mod = BindParams("main", params)(mod)
    lowered = _run_relax_pipeline(mod, pipeline if pipeline is not None else relax_pipeline,
                                  target)

    from mlckit.runtime.vm import ExecBuilder  # the VM loads on the first build

    from .backend.vm import codegen

    builder = ExecBuilder()
    codegen(builder, lowered)
    ex = builder.get()

    prim_funcs = {}
    heap_kernels = set()
    for gv, func in _run_tir_pipeline(lowered, tir_pipeline).functions.items():
        if isinstance(func, PrimFunc):
            name = func.attrs.get("global_symbol", gv.name_hint)
            prim_funcs[name] = func
            if func.attrs.get("tir.is_host_func"):
                heap_kernels.add(name)
    if prim_funcs:
        host_target = _host_target(target)
        if host_target is None:
            ex.kernels = _compile_prim_funcs(prim_funcs, target, backend_options)
        else:  # a GPU target: the shape functions run on the host, the rest on the device
            on_host = {k: f for k, f in prim_funcs.items() if k in heap_kernels}
            on_device = {k: f for k, f in prim_funcs.items() if k not in heap_kernels}
            ex.kernels = {**(_compile_prim_funcs(on_host, host_target, {}) if on_host else {}),
                          **(_compile_prim_funcs(on_device, target, backend_options)
                             if on_device else {})}
    for ext in mod.attrs.get("external_mods", ()):  # library functions (RunCodegen)
        ex.kernels = {**ex.kernels, **ext.functions}
    ex.heap_kernels = heap_kernels
    ex.mod = lowered
    ex.target = target
    return ex


def _check_well_formed(mod: IRModule) -> None:
    """A module built with the BlockBuilder or changed by passes is checked as a parsed one
    is, so that an ill-formed program fails here, located, rather than in the VM."""
    from .analysis.well_formed import check_well_formed

    check_well_formed(mod)


def _run_relax_pipeline(mod: IRModule, relax_pipeline, target) -> IRModule:
    if relax_pipeline is None:
        return mod
    if isinstance(relax_pipeline, str):
        from .pipeline import get_pipeline

        relax_pipeline = get_pipeline(relax_pipeline)
    if not isinstance(relax_pipeline, Pass) and not callable(relax_pipeline):
        raise TVMTypeError(f"relax_pipeline must be a pipeline name, a pass or None, got "
                           f"{type(relax_pipeline).__name__}")
    with _target_scope(target):  # LegalizeOps picks implementations for this target
        return relax_pipeline(mod)


def _target_scope(target):
    """``with Target(target):`` for a target string or Target (as TVM's relax.build); no
    scope for anything else (the TIR backend reports it)."""
    import contextlib

    from mlckit.target import Target

    if isinstance(target, Target):
        return target
    if isinstance(target, (str, dict)):
        try:
            return Target(target)
        except Exception:  # noqa: BLE001 - an unknown target is reported by the backend
            return contextlib.nullcontext()
    return contextlib.nullcontext()


def _run_tir_pipeline(mod: IRModule, tir_pipeline) -> IRModule:
    if tir_pipeline in (None, "default"):
        return mod
    if not isinstance(tir_pipeline, Pass):
        raise TVMValueError(f"tir_pipeline {tir_pipeline!r} is not supported: mlckit's backends "
                            "take TensorIR as it is (use \"default\" or pass a Pass to run on the "
                            "PrimFuncs)")
    prims = IRModule({gv: f for gv, f in mod.functions.items() if isinstance(f, PrimFunc)},
                     dict(mod.attrs))
    out = mod.copy()
    for gv, func in tir_pipeline(prims).functions.items():
        out.functions[gv] = func
    return out


def _host_target(target):
    """The CPU target that compiles a GPU target's host functions (the VM's shape functions,
    ``tir.is_host_func``), as TVM's target host; None for a CPU target."""
    from mlckit.target import Target

    kind = target.kind.name if isinstance(target, Target) else None
    if kind is None and isinstance(target, str):
        try:
            kind = Target(target).kind.name
        except Exception:  # noqa: BLE001 - an unknown target is reported by the backend
            return None
    return "llvm" if kind in ("cuda", "nvptx") else None


def _compile_prim_funcs(funcs: dict, target, options: dict) -> dict:
    """name -> callable(*arrays) for each PrimFunc, by the TIR backend of ``target``."""
    tir_build = get_global_func("tir.build")  # registered by mlckit.driver, above relax
    built = tir_build(IRModule(dict(funcs)), target=target, **options)
    return {name: built[name] for name in funcs}


__all__ = ["build", "vm_lowering_pipeline"]
