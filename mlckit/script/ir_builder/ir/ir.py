"""IRBuilder functions of the ``I`` dialect, usable directly::

    with IRBuilder() as ib:
        with I.ir_module():
            gv = I.decl_function("main", signature)   # a GlobalVar, callable at once
            ...                                        # R.function() frames define bodies
    mod = ib.get()
"""

from __future__ import annotations

from typing import Any

from mlckit.error import TVMTypeError
from mlckit.ir.module import GlobalVar

from ..base import IRBuilderError, frame_of
from .frame import IRModuleFrame


def ir_module() -> IRModuleFrame:
    """Start an IRModule frame (``with I.ir_module():``)."""
    return IRModuleFrame()


def _signature_struct_info(func: Any):
    """The struct info a GlobalVar of ``func`` carries (relax functions: their signature)."""
    from mlckit.relax.expr import Function
    from mlckit.relax.struct_info import FuncStructInfo, ObjectStructInfo

    if isinstance(func, Function):
        ret = func.ret_struct_info if func.ret_struct_info is not None else ObjectStructInfo()
        return FuncStructInfo([p.struct_info for p in func.params], ret, func.is_pure)
    if isinstance(func, FuncStructInfo):
        return func
    if func is None:
        return None
    # PrimFuncs and others: an opaque callable (used through R.call_tir)
    return FuncStructInfo.opaque_func(ObjectStructInfo(), purity=True)


def decl_function(name: str, signature: Any = None) -> GlobalVar:
    """Declare the function ``name`` in the current module (before its body exists) and
    return its GlobalVar; ``signature`` (an empty relax Function, a PrimFunc or a
    FuncStructInfo) gives the GlobalVar its struct info so calls to it can be typed.

    Example::

        gv = I.decl_function("linear0", prim_func)
    """
    frame = frame_of(IRModuleFrame, "I.decl_function")
    if name in frame.global_var_map:
        raise IRBuilderError(f"duplicate function name {name!r} in the IRModule")
    gv = GlobalVar(name)
    sinfo = _signature_struct_info(signature)
    if sinfo is not None:
        gv.struct_info_ = sinfo
    frame.global_var_map[name] = gv
    frame.functions[gv] = None
    return gv


def def_function(name: str, func: Any) -> None:
    """Define (give the body of) the function ``name`` declared with ``decl_function``.

    Example::

        I.def_function("linear0", prim_func)
    """
    frame = frame_of(IRModuleFrame, "I.def_function")
    gv = frame.global_var_map.get(name)
    if gv is None:
        raise IRBuilderError(f"function {name!r} must be declared (I.decl_function) before it is "
                             "defined")
    if frame.functions.get(gv) is not None:
        raise IRBuilderError(f"function {name!r} is defined twice in the IRModule")
    from mlckit.relax.expr import Function

    if isinstance(func, Function):
        gv.struct_info_ = _signature_struct_info(func)
    elif getattr(gv, "struct_info_", None) is None:
        gv.struct_info_ = _signature_struct_info(func)
    frame.functions[gv] = func


def module_attrs(attrs: dict) -> None:
    """Set attributes of the module being built (``I.module_attrs({"system_lib_prefix": ""})``)."""
    frame = frame_of(IRModuleFrame, "I.module_attrs")
    if not isinstance(attrs, dict):
        raise TVMTypeError(f"I.module_attrs expects a dict, got {type(attrs).__name__}")
    frame.attrs.update(attrs)


def module_global_infos(global_infos: dict) -> None:
    """Set the global infos of the module being built."""
    frame = frame_of(IRModuleFrame, "I.module_global_infos")
    frame.global_infos.update(global_infos)


