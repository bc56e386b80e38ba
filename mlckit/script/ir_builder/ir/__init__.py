"""IRBuilder for IRModules: ``I.ir_module()``, ``I.decl_function``, ``I.def_function``."""

from .frame import IRModuleFrame
from .ir import decl_function, def_function, ir_module, module_attrs, module_global_infos

__all__ = ["IRModuleFrame", "decl_function", "def_function", "ir_module", "module_attrs",
           "module_global_infos"]
