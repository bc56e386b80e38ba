"""The Relax virtual machine: bytecode, executable, builtins, interpreter, profiler.

Example::

    ex = relax.build(mod, target="llvm")
    vm = VirtualMachine(ex, mlckit.cpu())
    vm["main"](x)
"""

from mlckit.ffi.registry import register_func

from . import builtins
from .builtins import ShapeHeap, Storage, VMStructInfoError
from .bytecode import VM_REGISTER, VOID_REGISTER, Arg, ArgKind, Instruction, Opcode
from .executable import DataType, ExecBuilder, ShapeTuple, VMExecutable, VMFuncInfo
from .virtual_machine import ProfileReport, VirtualMachine, VMError

# relax.build finds the VM's code generator through the registry (relax sits below runtime)
register_func("relax.ExecBuilder", ExecBuilder, override=True)

__all__ = ["VM_REGISTER", "VOID_REGISTER", "Arg", "ArgKind", "DataType", "ExecBuilder",
           "Instruction", "Opcode", "ProfileReport", "ShapeHeap", "ShapeTuple", "Storage",
           "VMError", "VMExecutable", "VMFuncInfo", "VMStructInfoError", "VirtualMachine",
           "builtins"]
