"""cuBLAS patterns (TVM's ``relax.backend.cuda.cublas``): importing this module registers
``cublas.matmul``, ``cublas.matmul_bias``, ``cublas.matmul_bias_relu``,
``cublas.matmul_bias_gelu`` and their ``cublas.matmul_transposed*`` forms, as TVM does.

Running them needs a GPU and CuPy (its ``cupy.matmul`` calls cuBLAS): only then is the
codegen ``relax.ext.cublas`` registered — as in a TVM built without cuBLAS, the tutorial's
``tvm.get_global_func("relax.ext.cublas", True)`` is None otherwise, and
:func:`partition_for_cublas` says what to use instead (``contrib.numpy``, on the CPU).

Example::

    import mlckit.relax.backend.cuda.cublas
    patterns = [relax.backend.get_pattern("cublas.matmul_transposed_bias_relu")]
"""

from __future__ import annotations

from mlckit.error import TVMError
from mlckit.ffi.registry import register_func

from ...transform.fuse_ops_by_pattern import FuseOpsByPattern
from ..contrib.codegen import build_module
from ..pattern_registry import get_patterns_with_prefix, register_patterns
from ..patterns import make_matmul_pattern
from ..utils import has_leaking_intermediate_variables

_DTYPES = ("float16", "float32", "int8", "bfloat16")


def _check_matmul(context) -> bool:
    if has_leaking_intermediate_variables(context):
        return False
    lhs, rhs = context.annotated_expr["lhs"], context.annotated_expr["rhs"]
    dtypes = {lhs.struct_info.dtype, rhs.struct_info.dtype}
    return len(dtypes) == 1 and dtypes <= set(_DTYPES)


def _entries() -> list:
    out = []
    for transposed in (False, True):
        base = "cublas.matmul" + ("_transposed" if transposed else "")
        out.append((base, *make_matmul_pattern(transposed_rhs=transposed), _check_matmul))
        out.append((base + "_bias", *make_matmul_pattern(True, transposed_rhs=transposed),
                    _check_matmul))
        for act in ("relu", "gelu"):
            out.append((f"{base}_bias_{act}",
                        *make_matmul_pattern(True, f"relax.nn.{act}", transposed_rhs=transposed),
                        _check_matmul))
    return out


register_patterns(_entries())


def _cupy():
    """CuPy with a usable GPU, or None."""
    try:
        import cupy  # noqa: PLC0415 - optional: only where there is a GPU

        cupy.cuda.runtime.getDeviceCount()
        return cupy
    except Exception:  # noqa: BLE001 - no CuPy, no driver or no GPU: all mean "not here"
        return None


def _cublas_codegen(funcs, options=None, constant_names=None):
    """Codegen for ``Codegen: "cublas"``: CuPy calls (cuBLAS) on device copies of the
    inputs, the result copied into the VM's output array."""
    cp = _cupy()
    mod = build_module("cublas", list(funcs), "cp", {"cp": cp})
    return [mod.__class__(mod.type_key, mod.source,
                          {k: _on_device(cp, f) for k, f in mod.functions.items()})]


def _on_device(cp, func):
    def run(*arrays):
        *inputs, out = arrays
        result = cp.empty(out.shape, out.dtype)
        func(*[cp.asarray(a) for a in inputs], result)
        out[...] = cp.asnumpy(result)

    run.__name__ = func.__name__
    return run


if _cupy() is not None:
    register_func("relax.ext.cublas", _cublas_codegen, override=True)


def partition_for_cublas(mod, bind_constants: bool = False):
    """Group the subgraphs cuBLAS runs into ``Codegen: "cublas"`` functions; needs a GPU
    and CuPy.

    Example::

        mod = relax.transform.RunCodegen()(partition_for_cublas(mod))
    """
    if _cupy() is None:
        raise TVMError(
            "partition_for_cublas: cuBLAS needs a GPU and CuPy (pip install cupy-cuda12x), and "
            "this machine has no usable one; on the CPU, "
            "mlckit.relax.backend.contrib.numpy.partition_for_numpy offloads the same "
            "matmul (+ bias, + relu) subgraphs to NumPy's BLAS")
    patterns = get_patterns_with_prefix("cublas")
    return FuseOpsByPattern(patterns, bind_constants=bind_constants, annotate_codegen=True)(mod)


__all__ = ["partition_for_cublas"]
