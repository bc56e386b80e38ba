"""``mlckit.transform``: the pass infrastructure (alias of ``mlckit.ir.transform``, as
``tvm.transform``).

Example::

    import mlckit as tvm
    seq = tvm.transform.Sequential([relax.transform.ToNonDataflow()])
"""

from .ir.transform import *  # noqa: F403
from .ir.transform import (
    FunctionPass,
    ModulePass,
    Pass,
    PassContext,
    PassInfo,
    PrintIR,
    Sequential,
    function_pass,
    module_pass,
)

__all__ = ["FunctionPass", "ModulePass", "Pass", "PassContext", "PassInfo", "PrintIR",
           "Sequential", "function_pass", "module_pass"]
