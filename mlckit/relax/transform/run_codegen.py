"""``RunCodegen``: hand each ``Codegen`` function to its library codegen and call the result
(TVM's ``relax.transform.RunCodegen``).

Every call of a function marked ``R.func_attr({"Codegen": "numpy", "global_symbol": S})``
becomes ``R.call_dps_packed(S, (args...), out_sinfo=<its result>)`` and the function leaves
the module.  The functions of each codegen go to the global function ``relax.ext.<codegen>``
(``relax.backend.contrib.numpy`` registers ``relax.ext.numpy``), which returns compiled
modules; they are kept in the module attribute ``"external_mods"`` and ``relax.build`` puts
their functions into the executable::

    lv = cls.fused_relax_matmul_relax_add_relax_nn_relu_numpy(x, w, b)
        ─►  lv = R.call_dps_packed("fused_relax_matmul_relax_add_relax_nn_relu_numpy",
                                   (x, w, b), out_sinfo=R.Tensor((2, 4), dtype="float32"))

Example::

    mod = relax.transform.RunCodegen()(relax.backend.contrib.numpy.partition_for_numpy(mod))
    print(mod.attrs["external_mods"][0].get_source())
"""

from __future__ import annotations

from mlckit.error import TVMError
from mlckit.ffi.registry import get_global_func
from mlckit.ir.module import GlobalVar, IRModule
from mlckit.ir.transform import ModulePass, PassInfo

from ..expr import Call, Function, Tuple
from ..expr_functor import ExprMutator
from ..op import call_dps_packed


class _Replacer(ExprMutator):
    def __init__(self, targets: dict):
        super().__init__()
        self.targets = targets  # GlobalVar name -> (symbol, Function)

    def visit_call_(self, op: Call):
        call = super().visit_call_(op)
        if isinstance(call.op, GlobalVar) and call.op.name_hint in self.targets:
            symbol, func = self.targets[call.op.name_hint]
            return call_dps_packed(symbol, Tuple(list(call.args)), func.ret_struct_info)
        return call


def run_codegen(mod: IRModule, target_options: dict | None = None,
                entry_functions: list | None = None) -> IRModule:
    """``mod`` with its ``Codegen`` functions compiled by their codegens and called through
    ``R.call_dps_packed`` (see the module doc)."""
    by_codegen: dict[str, list] = {}
    targets = {}
    for gv, func in mod.functions.items():
        if isinstance(func, Function) and "Codegen" in func.attrs:
            symbol = func.attrs.get("global_symbol", gv.name_hint)
            by_codegen.setdefault(func.attrs["Codegen"], []).append(func)
            targets[gv.name_hint] = (symbol, func)
    if not targets:
        return mod
    ext_mods = list(mod.attrs.get("external_mods", []))
    for codegen, funcs in by_codegen.items():
        run = get_global_func(f"relax.ext.{codegen}", allow_missing=True)
        if run is None:
            names = ", ".join(f.attrs.get("global_symbol", "?") for f in funcs)
            raise TVMError(
                f"RunCodegen: the codegen relax.ext.{codegen} is not registered, so {names} "
                f"cannot be offloaded to {codegen!r}"
                + (" (cuBLAS needs a GPU and CuPy; on the CPU partition for \"numpy\" "
                   "instead: relax.backend.contrib.numpy.partition_for_numpy)"
                   if codegen == "cublas" else ""))
        ext_mods += list(run(funcs, (target_options or {}).get(codegen, {}), {}))
    replacer = _Replacer(targets)
    out = IRModule({}, {**mod.attrs, "external_mods": ext_mods}, dict(mod.global_infos))
    for gv, func in mod.functions.items():
        if gv.name_hint in targets:
            continue
        out.functions[gv] = replacer.visit_expr(func) if isinstance(func, Function) else func
    return out


def RunCodegen(target_options: dict | None = None,  # noqa: N802 - TVM's name
               entry_functions: list | None = None) -> ModulePass:
    """The pass offloading ``Codegen`` functions to their libraries (see the module doc).

    Example::

        mod = relax.transform.RunCodegen()(mod)
    """

    def run(mod: IRModule, ctx) -> IRModule:
        return run_codegen(mod, target_options, entry_functions)

    return ModulePass(run, PassInfo(0, "RunCodegen"))


__all__ = ["RunCodegen", "run_codegen"]
