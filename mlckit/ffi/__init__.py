"""The lowest layer of mlckit: the global function registry (as ``tvm.ffi``).

Every layer may register or look up functions by name here: backends register their
builders, the VM its builtins, and learners their library functions::

    @mlckit.register_func("env.linear")
    def linear(x, w, b, out): ...
"""

from .registry import (
    GlobalFuncError,
    get_global_func,
    list_global_func_names,
    register_func,
    remove_global_func,
)

register_global_func = register_func  # TVM's newer name

__all__ = ["GlobalFuncError", "get_global_func", "list_global_func_names", "register_func",
           "register_global_func", "remove_global_func"]
