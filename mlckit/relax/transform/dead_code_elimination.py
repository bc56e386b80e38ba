"""``DeadCodeElimination``: remove unused bindings and unused functions (as TVM's
``relax.transform.DeadCodeElimination``).

1. Functions no entry function reaches (through calls, ``R.call_tir`` or any other reference
   to their GlobalVar) are removed.  Entry functions are the public ones (those with a
   ``global_symbol``: every ``@R.function`` / ``@T.prim_func`` not marked ``private``) and
   those named in ``entry_functions``.
2. In every Relax function, bindings whose variable nothing uses and whose value has no side
   effect are removed (``relax.analysis.remove_all_unused``); empty blocks disappear.
3. Step 1 again: a removed binding may have been the last use of a function.

When a function refers to a GlobalVar the module does not have, the module's functions are
all kept (as TVM does), only the bindings are cleaned.

Example::

    mod = relax.transform.DeadCodeElimination()(mod)
    mod = relax.transform.DeadCodeElimination(["main"])(mod)
"""

from __future__ import annotations

from mlckit.error import TVMKeyError
from mlckit.ir.module import GlobalVar, IRModule
from mlckit.ir.node import Node
from mlckit.ir.transform import ModulePass, PassInfo

from ..analysis.remove_all_unused import remove_all_unused
from ..expr import Function


def collect_call_map(mod: IRModule) -> dict[str, list[str]]:
    """Function name -> names of the GlobalVars it refers to (first reference first).

    Example::

        collect_call_map(mod)["main"]       # ["dense", "add", ...]
    """
    return {gv.name_hint: _global_vars_in(func) for gv, func in mod.functions.items()}


def _global_vars_in(func) -> list[str]:
    out: list[str] = []
    seen: set[int] = set()

    def walk(x):
        if isinstance(x, GlobalVar):
            if x.name_hint not in out:
                out.append(x.name_hint)
            return
        if isinstance(x, Node):
            if id(x) in seen:
                return
            seen.add(id(x))
            for name in type(x).field_names():
                walk(getattr(x, name))
        elif isinstance(x, (list, tuple)):
            for y in x:
                walk(y)
        elif isinstance(x, dict):
            for y in x.values():
                walk(y)

    walk(func)
    return out


def remove_unused_functions(mod: IRModule, entries: set[str]) -> IRModule:
    """``mod`` without the functions no entry reaches (unchanged when some reference
    names a function the module does not have).

    Example::

        mod = remove_unused_functions(mod, {"main"})
    """
    call_map = collect_call_map(mod)
    reachable = set(entries)
    todo = list(entries)
    while todo:
        name = todo.pop()
        if name not in call_map:
            return mod  # a callee outside the module: keep everything, as TVM
        for callee in call_map[name]:
            if callee not in reachable:
                reachable.add(callee)
                todo.append(callee)
    if all(gv.name_hint in reachable for gv in mod.functions):
        return mod
    out = mod.copy()
    for gv in list(out.functions):
        if gv.name_hint not in reachable:
            del out.functions[gv]
    return out


def dead_code_elimination(mod: IRModule, entry_functions=None) -> IRModule:
    """``mod`` without unused bindings and unreachable functions (see the module doc).

    Example::

        mod = dead_code_elimination(mod, ["main"])
    """
    entries = set()
    for name in entry_functions or []:
        if name not in mod:
            names = ", ".join(sorted(gv.name_hint for gv in mod.functions)) or "none"
            raise TVMKeyError(f"DeadCodeElimination: entry function {name!r} is not in the "
                              f"module (it has: {names})")
        entries.add(mod.get_global_var(name).name_hint)
    entries |= {gv.name_hint for gv, f in mod.functions.items()
                if getattr(f, "attrs", {}).get("global_symbol")}
    mod = remove_unused_functions(mod, entries)
    updated = None
    for gv, func in mod.functions.items():
        if isinstance(func, Function):
            new = remove_all_unused(func)
            if new is not func:
                updated = updated or mod.copy()
                updated.functions[gv] = new
    return remove_unused_functions(updated or mod, entries)


def DeadCodeElimination(entry_functions=None) -> ModulePass:  # noqa: N802 - TVM's name
    """The pass removing dead bindings and unused functions (opt_level 1, as TVM).

    Example::

        mod = DeadCodeElimination()(mod)
    """
    names = list(entry_functions or [])
    return ModulePass(lambda mod, ctx: dead_code_elimination(mod, names),
                      PassInfo(1, "DeadCodeElimination"))


__all__ = ["DeadCodeElimination", "collect_call_map", "dead_code_elimination",
           "remove_unused_functions"]
