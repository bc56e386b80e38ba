"""mlckit: machine-learning compilation for learners, in readable Python.

    import mlckit as tvm
    from mlckit.script import ir as I, tir as T, relax as R

Numba is imported only when a kernel is compiled, and the TVMScript parser only when
``mlckit.script`` is used, so ``import mlckit`` stays light.
"""

from . import error, ffi, instrument, ir, nd, relax, runtime, te, tir, transform
from .driver import build
from .error import TVMError
from .ffi import get_global_func, register_func
from .ir import (
    DiagnosticError,
    IRModule,
    assert_structural_equal,
    structural_equal,
    structural_hash,
)
from .runtime import Device, cpu, cuda, device, gpu

__version__ = "0.1.0"


def __getattr__(name: str):
    if name == "lnumpy":  # mlckit.lnumpy.to_source(func)
        import importlib

        return importlib.import_module("mlckit.lnumpy")
    raise AttributeError(f"module 'mlckit' has no attribute {name!r}")
