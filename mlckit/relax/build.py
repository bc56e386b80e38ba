"""``relax.build``: lower an IRModule for the VM and compile it (as ``tvm.relax.build``).

1. the VM lowering pipeline (``vm_lowering_pipeline()``; ``LegalizeOps`` first when it
   exists): ``ToNonDataflow → CallTIRRewrite → StaticPlanBlockMemory → LowerAllocTensor →
   VMShapeLower``, run under the current ``PassContext`` (so instruments see each pass);
2. every Relax function → VM bytecode;
3. every PrimFunc → a callable, by the TIR backend of ``target``: ``"llvm"`` / ``"numba"``
   → Numba CPU, ``"lnumpy"`` → the checked low-level NumPy reference.

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
    """The passes ``relax.build`` runs before codegen (a ``Sequential``).

    Example::

        lowered = relax.vm_lowering_pipeline()(mod)
        lowered.show()
    """
    from . import transform as T

    passes: list[Pass] = []
    legalize = getattr(T, "LegalizeOps", None)
    if legalize is not None:
        passes.append(legalize())
    passes += [T.ToNonDataflow(), T.CallTIRRewrite(), T.StaticPlanBlockMemory(),
               T.LowerAllocTensor(), T.VMShapeLower()]
    return Sequential(passes, name="vm_lowering")


def build(mod, target="llvm", params: dict | None = None, pipeline=None,
          exec_mode: str = "bytecode", **backend_options):
    """Compile ``mod`` (an IRModule, or a Relax Function as ``main``) for the VM.

    ``params``: name -> array, bound into ``main`` first (``BindParams``).  ``pipeline``:
    a pass (or None for ``vm_lowering_pipeline()``).  ``backend_options`` go to the TIR
    backend (numba: ``fastmath=True``).

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
    if params:
        from .transform import BindParams

        mod = BindParams("main", params)(mod)
    lower = pipeline if pipeline is not None else vm_lowering_pipeline()
    with _target_scope(target):  # LegalizeOps picks implementations for this target
        lowered = lower(mod)

    make_builder = get_global_func("relax.ExecBuilder", allow_missing=True)
    codegen = get_global_func("relax.VMCodeGen", allow_missing=True)
    if make_builder is None or codegen is None:  # the runtime registers them on import
        import importlib

        importlib.import_module("mlckit.runtime.vm")
        make_builder = get_global_func("relax.ExecBuilder")
        codegen = get_global_func("relax.VMCodeGen")
    builder = make_builder()
    codegen(builder, lowered)
    ex = builder.get()

    prim_funcs = {}
    heap_kernels = set()
    for gv, func in lowered.functions.items():
        if isinstance(func, PrimFunc):
            name = func.attrs.get("global_symbol", gv.name_hint)
            prim_funcs[name] = func
            if func.attrs.get("tir.is_host_func"):
                heap_kernels.add(name)
    if prim_funcs:
        ex.kernels = _compile_prim_funcs(prim_funcs, target, backend_options)
    ex.heap_kernels = heap_kernels
    ex.mod = lowered
    ex.target = target
    return ex


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


def _compile_prim_funcs(funcs: dict, target, options: dict) -> dict:
    """name -> callable(*arrays) for each PrimFunc, by the TIR backend of ``target``."""
    tir_build = get_global_func("tir.build", allow_missing=True)
    if tir_build is None:
        from mlckit.driver import build as tir_build  # the driver sits above relax: found late
    built = tir_build(IRModule(dict(funcs)), target=target, **options)
    return {name: built[name] for name in funcs}


__all__ = ["build", "vm_lowering_pipeline"]
