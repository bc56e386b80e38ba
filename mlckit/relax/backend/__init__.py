"""Library dispatch (TVM's ``tvm.relax.backend``): patterns naming the subgraphs a library
can run, a registry of them, and library "codegens".

The flow, as in TVM's *Customize Optimization* tutorial::

    patterns = relax.backend.get_patterns_with_prefix("numpy")   # registered by contrib.numpy
    mod = relax.transform.FuseOpsByPattern(patterns, annotate_codegen=True)(mod)
    mod = relax.transform.RunCodegen()(mod)       # Codegen functions -> R.call_dps_packed
    ex = relax.build(mod, target="llvm")

``contrib.numpy`` offloads matmul (+ bias, + relu) to NumPy's BLAS on the CPU;
``cuda.cublas`` registers TVM's ``cublas.*`` patterns, and runs them where CuPy and a GPU
are available (otherwise it says so).
"""

from . import patterns, utils
from .contrib import numpy as _numpy  # noqa: F401 - registers the numpy.* patterns
from .pattern_registry import get_pattern, get_patterns_with_prefix, register_patterns

__all__ = ["get_pattern", "get_patterns_with_prefix", "patterns", "register_patterns", "utils"]
