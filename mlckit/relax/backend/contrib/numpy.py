"""The ``numpy`` codegen: matmul (+ bias, + relu, with or without a transposed weight) run by
NumPy's BLAS on the CPU — mlckit's stand-in for TVM's cuBLAS dispatch where there is no GPU.

Patterns ``numpy.matmul``, ``numpy.matmul_bias``, ``numpy.matmul_bias_relu`` and their
``numpy.matmul_transposed*`` forms (``x @ permute_dims(w)``, as ``nn.Linear`` writes it).

Example::

    mod = partition_for_numpy(mod)               # FuseOpsByPattern(..., annotate_codegen=True)
    mod = relax.transform.RunCodegen()(mod)      # -> R.call_dps_packed("fused_..._numpy", ...)
    vm = relax.VirtualMachine(relax.build(mod, target="llvm"), mlckit.cpu())
"""

from __future__ import annotations

import numpy as np

from mlckit.ffi.registry import register_func

from ...transform.fuse_ops_by_pattern import FuseOpsByPattern
from ..pattern_registry import get_patterns_with_prefix, register_patterns
from ..patterns import make_matmul_pattern
from ..utils import has_leaking_intermediate_variables
from .codegen import build_module

_DTYPES = ("float16", "float32", "float64")


def _check_matmul(context) -> bool:
    """Floating-point operands of equal dtype; a bias that is a vector (or broadcastable)."""
    if has_leaking_intermediate_variables(context):
        return False
    lhs, rhs = context.annotated_expr["lhs"], context.annotated_expr["rhs"]
    dtypes = {lhs.struct_info.dtype, rhs.struct_info.dtype}
    return len(dtypes) == 1 and dtypes <= set(_DTYPES)


def _entries(prefix: str, check) -> list:
    out = []
    for transposed in (False, True):
        base = f"{prefix}.matmul" + ("_transposed" if transposed else "")
        out += [(base, *make_matmul_pattern(transposed_rhs=transposed), check),
                (base + "_bias", *make_matmul_pattern(True, transposed_rhs=transposed), check),
                (base + "_bias_relu", *make_matmul_pattern(True, "relax.nn.relu",
                                                           transposed_rhs=transposed), check)]
    return out


register_patterns(_entries("numpy", _check_matmul))


@register_func("relax.ext.numpy", override=True)
def numpy_codegen(funcs, options=None, constant_names=None):
    """The codegen ``RunCodegen`` calls for ``Codegen: "numpy"`` functions."""
    mod = build_module("numpy", list(funcs), "np", {"np": np})
    mod.functions = {k: _on_host_arrays(f) for k, f in mod.functions.items()}
    return [mod]


def _on_host_arrays(func):
    """``func(*inputs, out)`` on NumPy arrays also where the VM keeps its tensors on a GPU:
    device arrays among the inputs are copied to the host, the result copied back."""

    def run(*arrays):
        *inputs, out = arrays
        host = [a.copy_to_host() if hasattr(a, "copy_to_host") else a for a in inputs]
        if not hasattr(out, "copy_to_device"):
            return func(*host, out)
        result = np.empty(out.shape, out.dtype)
        func(*host, result)
        out.copy_to_device(result)
        return None

    run.__name__ = func.__name__
    return run


def partition_for_numpy(mod, bind_constants: bool = False):
    """Group the subgraphs NumPy's BLAS runs into ``Codegen: "numpy"`` functions.

    Example::

        mod = relax.transform.RunCodegen()(partition_for_numpy(mod))
    """
    patterns = get_patterns_with_prefix("numpy")
    return FuseOpsByPattern(patterns, bind_constants=bind_constants, annotate_codegen=True)(mod)


__all__ = ["numpy_codegen", "partition_for_numpy"]
