"""``BindParams(func_name, params)``: replace parameters by constants, by name (as TVM's
``relax.transform.BindParams``).

``params`` maps a parameter name (or the parameter Var itself) to an array (NumPy, NDArray
or anything with ``.numpy()``).  The function keeps only its other parameters; a symbolic
dimension that a bound array fixes (``"n"`` in ``R.Tensor(("n", 784))``) is replaced by its
value everywhere in the function.

Example::

    mod = BindParams("main", {"w0": w0, "b0": b0})(MyModule)
    vm["main"](x)              # the weights are now constants
"""

from __future__ import annotations

import numpy as np

from mlckit.error import TVMKeyError, TVMTypeError, TVMValueError
from mlckit.ir.module import IRModule
from mlckit.ir.transform import ModulePass, PassInfo
from mlckit.tir import expr as tx

from ..analysis.struct_info import substitute_tir_vars
from ..expr import Constant, Function, Var
from ..expr_functor import ExprMutator
from ..struct_info import TensorStructInfo


def _as_numpy(value) -> np.ndarray:
    """The array behind ``value``, not yet copied (the Constant takes its own copy)."""
    if isinstance(value, np.ndarray) or hasattr(value, "_mlckit_numpy_view"):
        return np.asarray(value)
    if hasattr(value, "numpy"):
        return np.asarray(value.numpy())
    return np.asarray(value)


class _Binder(ExprMutator):
    """Replace Vars by Constants and TIR vars by their values (also in struct infos)."""

    def __init__(self, consts: dict, tir_map: dict):
        super().__init__()
        self.var_remap.update(consts)
        self.tir_map = tir_map

    def _sub(self, node):
        return substitute_tir_vars(node, self.tir_map) if self.tir_map else node

    def visit_var_def(self, var: Var) -> Var:
        new = super().visit_var_def(var)
        if self.tir_map and new.struct_info_ is not None:
            sinfo = self._sub(new.struct_info_)
            if sinfo is not new.struct_info_:
                new = type(new)(new.name_hint, sinfo, span=new.span)
                self.var_remap[id(var)] = new
        return new

    def visit_call_(self, call):
        new = super().visit_call_(call)
        if self.tir_map and new.sinfo_args:
            sinfo_args = self._sub(list(new.sinfo_args))
            if any(a is not b for a, b in zip(sinfo_args, new.sinfo_args)):
                new = new.replace(sinfo_args=sinfo_args)
        return new

    def visit_shape_expr_(self, op):
        return self._sub(op)

    def visit_prim_value_(self, op):
        return self._sub(op)


def bind_params(func: Function, params: dict) -> Function:
    """``func`` with the parameters named in ``params`` bound to constants."""
    consts: dict = {}
    tir_map: dict = {}
    by_name: dict = {}
    for p in func.params:
        if p.name_hint in by_name:
            by_name[p.name_hint] = None  # ambiguous name
        else:
            by_name[p.name_hint] = p
    for key, value in params.items():
        if isinstance(key, Var):
            param = key if any(key is p for p in func.params) else None
        else:
            param = by_name.get(key)
            if key in by_name and param is None:
                raise TVMValueError(f"BindParams: more than one parameter is named {key!r}; bind by "
                                 "Var instead")
        if param is None:
            names = ", ".join(p.name_hint for p in func.params)
            raise TVMKeyError(f"BindParams: the function has no parameter {key!r} (its parameters "
                           f"are: {names})")
        data = _as_numpy(value)
        sinfo = param.struct_info_
        if isinstance(sinfo, TensorStructInfo):
            _check_and_bind_dims(param, sinfo, data, tir_map)
        consts[id(param)] = Constant(data)
    binder = _Binder(consts, tir_map)
    # parameters first: a parameter whose shape a bound array fixes becomes a new Var,
    # which the body's uses must see
    kept = [binder.visit_var_def(p) for p in func.params if id(p) not in consts]
    body = binder.visit_with_new_scope(func.body)
    ret = substitute_tir_vars(func.ret_struct_info, tir_map) if tir_map else func.ret_struct_info
    return func.replace(params=kept, body=body, ret_struct_info=ret)


def _check_and_bind_dims(param: Var, sinfo: TensorStructInfo, data: np.ndarray, tir_map: dict):
    name = param.name_hint
    if sinfo.dtype and np.dtype(sinfo.dtype) != data.dtype:
        raise TVMTypeError(f"BindParams: parameter {name!r} is annotated {sinfo.dtype}, but the "
                        f"array bound to it is {data.dtype}")
    if sinfo.ndim != -1 and sinfo.ndim != data.ndim:
        raise TVMValueError(f"BindParams: parameter {name!r} has {sinfo.ndim} dimensions, but the "
                         f"array bound to it has shape {data.shape}")
    for axis, (dim, size) in enumerate(zip(sinfo.dims or [], data.shape)):
        if isinstance(dim, tx.IntImm) and int(dim.value) != size:
            raise TVMValueError(f"BindParams: dimension {axis} of parameter {name!r} is "
                             f"{dim.value}, but the array bound to it has shape {data.shape}")
        if isinstance(dim, tx.Var):
            bound = next((v for k, v in tir_map.items() if k is dim), None)
            if bound is not None and int(bound.value) != size:
                raise TVMValueError(f"BindParams: {dim.name_hint} = {bound.value} from an earlier "
                                 f"parameter, but dimension {axis} of {name!r} is {size}")
            tir_map[dim] = tx.IntImm(dim.dtype, size)


def BindParams(func_name: str, params: dict) -> ModulePass:  # noqa: N802 - TVM's name
    """The pass binding ``params`` (name -> array) as constants in function ``func_name``.

    Example::

        mod = BindParams("main", {"w0": nd.array(w0)})(mod)
    """

    def run(mod: IRModule, ctx) -> IRModule:
        if func_name not in mod:
            names = ", ".join(gv.name_hint for gv in mod.get_global_vars())
            raise TVMKeyError(f"BindParams: the module has no function {func_name!r} (it has: "
                           f"{names})")
        func = mod[func_name]
        if not isinstance(func, Function):
            raise TVMTypeError(f"BindParams: {func_name!r} is not a Relax function")
        out = mod.copy()
        out.update_func(func_name, bind_params(func, params))
        return out

    return ModulePass(run, PassInfo(0, "BindParams"))
