"""The lowest layer of mlckit: the global function registry (as ``tvm.ffi``).

Every layer may register or look up functions by name here: backends register their
builders, the VM its builtins, and learners their library functions::

    @mlckit.register_func("env.linear")
    def linear(x, w, b, out): ...

It also answers for ``tvm_ffi`` (``import mlckit.ffi as tvm_ffi``): ``structural_equal``,
``structural_hash``, ``register_global_func``, ``Array``, ``Map``, ``Shape``, ``Function``.
"""

from .container import Array, Function, Map, Shape
from .registry import (
    GlobalFuncError,
    get_global_func,
    list_global_func_names,
    register_func,
    remove_global_func,
)
from .structural import structural_equal, structural_hash

register_global_func = register_func  # TVM's newer name

__all__ = ["Array", "Function", "GlobalFuncError", "Map", "Shape", "get_global_func",
           "list_global_func_names", "register_func", "register_global_func",
           "remove_global_func", "structural_equal", "structural_hash"]
