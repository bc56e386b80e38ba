"""``DecomposeOpsForInference``: rewrite composite operators into simpler ones for inference
(as TVM's ``relax.transform.DecomposeOpsForInference``).

``R.nn.batch_norm(x, gamma, beta, moving_mean, moving_var, axis, epsilon, center, scale)``
becomes, with the statistics expanded to the rank of ``x`` around ``axis``::

    out = (x - mean) / sqrt(var + epsilon) * gamma + beta      # gamma if scale, beta if center
    (out, moving_mean, moving_var)                             # the tuple batch_norm returns

built from ``relax.op.expand_dims``, ``add``, ``subtract``, ``divide``, ``multiply`` and
``sqrt``.  Operators are found by their TVM names when the pass runs; a module without
``relax.nn.batch_norm`` calls is returned unchanged.

``func_name`` restricts the pass to one function.

Example::

    mod = relax.transform.DecomposeOpsForInference()(mod)
"""

from __future__ import annotations

import importlib

import numpy as np

from mlckit.error import TVMKeyError, TVMNotImplementedError, TVMTypeError
from mlckit.ir.module import IRModule
from mlckit.ir.op import Op
from mlckit.ir.transform import ModulePass, PassInfo

from ..expr import Call, Function, Tuple, const
from ..expr_functor import PyExprMutator
from ..struct_info import TensorStructInfo

BATCH_NORM = "relax.nn.batch_norm"


def _attr(attrs, name: str, default=None):
    """An attribute of a call, whether the attrs are a dict or an object."""
    if attrs is None:
        return default
    if isinstance(attrs, dict):
        return attrs.get(name, default)
    return getattr(attrs, name, default)


def _op_api(name: str):
    """The constructor ``relax.op.<name>`` (found late: the operators are defined above the
    passes that use them)."""
    module = importlib.import_module("mlckit.relax.op")
    for part in name.split("."):
        module = getattr(module, part, None)
        if module is None:
            raise TVMNotImplementedError(f"DecomposeOpsForInference needs relax.op.{name}, which "
                                         "mlckit does not define yet")
    return module


def _expand_to_match_input(data, ndim: int, axis: int):
    """``data`` (the size of dimension ``axis``) with unit dimensions added around it."""
    axis = axis + ndim if axis < 0 else axis
    expand_axes = [i for i in range(ndim) if i != axis]
    return _op_api("expand_dims")(data, expand_axes)


def decompose_batch_norm(call: Call) -> Tuple:
    """The inference form of one ``relax.nn.batch_norm`` call (see the module doc).

    Example::

        tup = decompose_batch_norm(R.nn.batch_norm(x, g, b, m, v, axis=1))
    """
    data, gamma, beta, moving_mean, moving_var = call.args
    sinfo = data.struct_info
    if not isinstance(sinfo, TensorStructInfo) or sinfo.ndim < 0:
        raise TVMTypeError(f"relax.nn.batch_norm: data must be a tensor of known rank, got "
                           f"{sinfo!r}")
    axis = int(_attr(call.attrs, "axis", 1))
    epsilon = float(_attr(call.attrs, "epsilon", 1e-5))
    add, subtract = _op_api("add"), _op_api("subtract")
    divide, multiply, sqrt = _op_api("divide"), _op_api("multiply"), _op_api("sqrt")
    ndim = sinfo.ndim
    mean = _expand_to_match_input(moving_mean, ndim, axis)
    var = _expand_to_match_input(moving_var, ndim, axis)
    eps = const(np.array(epsilon, dtype=sinfo.dtype))
    out = divide(subtract(data, mean), sqrt(add(var, eps)))
    if _attr(call.attrs, "scale", True):
        out = multiply(out, _expand_to_match_input(gamma, ndim, axis))
    if _attr(call.attrs, "center", True):
        out = add(out, _expand_to_match_input(beta, ndim, axis))
    return Tuple([out, moving_mean, moving_var])


class _OpDecomposer(PyExprMutator):
    def visit_call_(self, call: Call):
        call = self.visit_expr_post_order(call)
        if isinstance(call.op, Op) and call.op.name == BATCH_NORM:
            return decompose_batch_norm(call)
        return call


def decompose_ops_for_inference(mod: IRModule, func_name: str | None = None) -> IRModule:
    """``mod`` with its composite operators decomposed (see the module doc).

    Example::

        mod = decompose_ops_for_inference(mod, "main")
    """
    if BATCH_NORM not in Op.list_names():
        return mod
    if func_name is not None and func_name not in mod:
        raise TVMKeyError(f"DecomposeOpsForInference: the module has no function {func_name!r}")
    out = mod.copy()
    for gv, func in mod.functions.items():
        if isinstance(func, Function) and func_name in (None, gv.name_hint):
            out.functions[gv] = _OpDecomposer(mod).visit_expr(func)
    return out


def DecomposeOpsForInference(func_name: str | None = None) -> ModulePass:  # noqa: N802
    """The pass decomposing composite operators for inference (every Relax function, or
    ``func_name``).

    Example::

        mod = DecomposeOpsForInference()(mod)
    """
    return ModulePass(lambda mod, ctx: decompose_ops_for_inference(mod, func_name),
                      PassInfo(0, "DecomposeOpsForInference"))


__all__ = ["DecomposeOpsForInference", "decompose_batch_norm", "decompose_ops_for_inference"]
