"""mlckit: machine-learning compilation for learners, in readable Python.

    import mlckit as tvm
    from mlckit.script import ir as I, tir as T, relax as R
"""

from . import ir, relax, tir
from .ir import (
    DiagnosticError,
    IRModule,
    assert_structural_equal,
    structural_equal,
    structural_hash,
)

__version__ = "0.1.0"
