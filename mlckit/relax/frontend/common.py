"""Helpers shared by frontends (TVM's ``relax.frontend.common``)."""

from __future__ import annotations

from mlckit.error import TVMTypeError
from mlckit.ir import IRModule


def detach_params(mod: IRModule) -> tuple[IRModule, dict]:
    """Move the ``"params"`` attribute (bound weights) out of every function of ``mod``:
    returns the module without it and ``{function name: [NDArray, ...]}``.

    Example::

        mod, params = relax.frontend.detach_params(mod)
        weights = params["main"]
    """
    from mlckit.runtime.ndarray import NDArray

    if not isinstance(mod, IRModule):
        raise TVMTypeError(f"detach_params expects an IRModule, got {type(mod).__name__}")
    detached = IRModule()
    params: dict[str, list] = {}
    for gvar, func in mod.functions.items():
        attrs = getattr(func, "attrs", None) or {}
        if "params" in attrs:
            values = list(attrs["params"])
            bad = [type(v).__name__ for v in values if not isinstance(v, NDArray)]
            if bad:
                raise TVMTypeError(f"detach_params: the \"params\" of function "
                                   f"{gvar.name_hint!r} must be NDArrays, found {bad[0]}")
            params[gvar.name_hint] = values
            func = func.without_attr("params")
        detached.functions[gvar] = func
    return detached, params
