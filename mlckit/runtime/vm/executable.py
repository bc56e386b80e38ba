"""The VM executable: a function table, a constant pool, bytecode, and compiled kernels
(as TVM's ``VMExecutable``); and ``ExecBuilder``, which codegen uses to fill one.

Example::

    ex = relax.build(MyModule, target="llvm")
    print(ex.as_text())      # @main: call ... in: %0, i2, c[0] dst: %void ...
    print(ex.stats())
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from mlckit.ffi import Shape
from mlckit.ffi.views import html_view

from .bytecode import VM_REGISTER, Arg, ArgKind, Instruction, Opcode, reg_name


class ShapeTuple(Shape):
    """A shape value at run time (TVM's ``ShapeTuple``, ``tvm_ffi.Shape``): a tuple of ints."""

    def __repr__(self) -> str:
        return f"ShapeTuple({list(self)})"


class DataType(str):
    """A dtype value at run time (TVM's ``DataType``): a string such as ``"float32"``."""


@dataclass
class VMFuncInfo:
    """An entry of the function table: ``kind`` is ``"vm_func"`` (bytecode),
    ``"packed_func"`` (a kernel or a registered function, found by name) or
    ``"vm_tir_func"``."""

    kind: str
    name: str
    start_instr: int = 0
    end_instr: int = 0
    num_args: int = 0
    register_file_size: int = 0
    param_names: list = field(default_factory=list)
    param_sinfo: list = field(default_factory=list)


class VMExecutable:
    """What ``relax.build`` returns (TVM's ``relax.VMExecutable``; ``relax.Executable`` is
    its older name); run it with ``VirtualMachine(ex, device)``.

    ``func_table`` / ``func_map``: the functions; ``constants``: the constant pool;
    ``instructions``: all bytecode; ``kernels``: compiled PrimFuncs by name (callables
    taking arrays, destination-passing style); ``mod``: the lowered IRModule.
    """

    def __init__(self):
        self.func_table: list[VMFuncInfo] = []
        self.func_map: dict[str, int] = {}
        self.constants: list = []
        self.instructions: list[Instruction] = []
        self.kernels: dict[str, Callable] = {}
        self.mod = None
        self.target = None

    # -- text views (TVM's AsText / Stats) -------------------------------------------------
    def _func_name(self, index: int) -> str:
        if 0 <= index < len(self.func_table):
            return self.func_table[index].name
        return f"unknown_func_index({index})"

    def _arg_text(self, arg: Arg) -> str:
        if arg.kind == ArgKind.Register:
            return reg_name(arg.value)
        if arg.kind == ArgKind.Immediate:
            return f"i{arg.value}"
        if arg.kind == ArgKind.ConstIdx:
            return f"c[{arg.value}]"
        return f"f[{self._func_name(arg.value)}]"

    def as_text(self) -> str:
        """The bytecode, formatted as TVM's ``Executable.as_text()``.

        Example::

            @main:
              call  vm.builtin.check_tensor_info in: %0, i2, c[0], c[1] dst: %void
              ...
              ret   %7
        """
        out = []
        for info in self.func_table:
            if info.kind == "packed_func":
                out.append(f"@{info.name} packed_func;\n\n")
                continue
            if info.kind == "vm_tir_func":
                out.append(f"@{info.name} num_inputs={info.num_args} vm_tir_func;\n\n")
                continue
            out.append(f"@{info.name}:\n")
            for instr in self.instructions[info.start_instr:info.end_instr]:
                out.append("  ")
                if instr.op == Opcode.Call:
                    args = ", ".join(self._arg_text(a) for a in instr.args)
                    out.append(f"{'call':<6}{self._func_name(instr.func_idx):<16} in: {args:<12}"
                               f" dst: {reg_name(instr.dst)}\n")
                elif instr.op == Opcode.Ret:
                    out.append(f"{'ret ':<6}{reg_name(instr.result)}\n")
                elif instr.op == Opcode.Goto:
                    out.append(f"{'goto':<6}{instr.pc_offset}\n")
                else:
                    out.append(f"{'If':<6}{reg_name(instr.cond)}, {instr.false_offset}\n")
            out.append("\n")
        return "".join(out)

    def stats(self) -> str:
        """A summary of the constant pool and the globals, as TVM's ``Executable.stats()``."""
        items = []
        for c in self.constants:
            if isinstance(c, np.ndarray):
                items.append("scalar" if c.ndim == 0 else f"[{', '.join(map(str, c.shape))}]")
            elif isinstance(c, ShapeTuple):
                items.append(f"shapetuple[{', '.join(map(str, c))}]")
            elif isinstance(c, DataType):
                items.append(str(c))
            elif isinstance(c, str):
                items.append(f'"{c}"')
            else:
                items.append(repr(c))
        names = ", ".join(info.name for info in self.func_table)
        return (f"Relax VM executable statistics:\n"
                f"  Constant pool (# {len(self.constants)}): [{', '.join(items)}]\n"
                f"  Globals (#{len(self.func_table)}): [{names}]\n")

    def __getitem__(self, name: str) -> VMFuncInfo:
        return self.func_table[self.func_map[name]]

    def __repr__(self) -> str:
        names = ", ".join(i.name for i in self.func_table if i.kind == "vm_func")
        return f"<mlckit relax.Executable: {names}; {len(self.kernels)} kernels>"

    def _repr_html_(self) -> str | None:
        """The function table, kernels and bytecode as HTML in a notebook (installed by the notebook layer); None,
        so that the text form shows, when it is not there."""
        return html_view(self)


class ExecBuilder:
    """Fill an Executable function by function (TVM's ``relax.ExecBuilder``).

    Example::

        eb = ExecBuilder()
        eb.emit_function("main", 1, ["x"])
        eb.emit_ret(0)
        eb.end_function("main")
        ex = eb.get()
    """

    def __init__(self):
        self.exec = VMExecutable()
        self._const_dedup: dict = {}

    # -- functions ----------------------------------------------------------------------
    def declare_function(self, name: str, kind: str = "packed_func") -> int:
        idx = self.exec.func_map.get(name)
        if idx is not None:
            return idx
        idx = len(self.exec.func_table)
        self.exec.func_table.append(VMFuncInfo(kind, name))
        self.exec.func_map[name] = idx
        return idx

    def get_function(self, name: str) -> Arg:
        return Arg.func_idx(self.exec.func_map[name])

    def emit_function(self, name: str, num_inputs: int, param_names=None,
                      param_sinfo=None) -> None:
        idx = self.declare_function(name, "vm_func")
        info = self.exec.func_table[idx]
        info.kind = "vm_func"
        info.num_args = num_inputs
        info.param_names = list(param_names or [])
        info.param_sinfo = list(param_sinfo or [])
        info.start_instr = len(self.exec.instructions)

    def end_function(self, name: str, register_file_size: int = 0) -> None:
        info = self.exec.func_table[self.exec.func_map[name]]
        info.end_instr = len(self.exec.instructions)
        info.register_file_size = register_file_size

    # -- instructions -------------------------------------------------------------------
    def emit_call(self, func, args: list, dst: int = -1) -> None:
        func_idx = func.value if isinstance(func, Arg) else self.declare_function(func)
        self.exec.instructions.append(Instruction.call(func_idx, args, dst))

    def emit_ret(self, result: int) -> None:
        self.exec.instructions.append(Instruction.ret(result))

    def emit_goto(self, pc_offset: int) -> None:
        self.exec.instructions.append(Instruction.goto(pc_offset))

    def emit_if(self, cond: int, false_offset: int) -> None:
        self.exec.instructions.append(Instruction.if_(cond, false_offset))

    def num_instructions(self) -> int:
        return len(self.exec.instructions)

    def set_instruction(self, index: int, **fields) -> None:
        instr = self.exec.instructions[index]
        for key, value in fields.items():
            setattr(instr, key, value)

    # -- constants ------------------------------------------------------------------------
    def convert_constant(self, value: Any) -> Arg:
        """An argument for ``value``: small ints are immediates, the rest constants."""
        if isinstance(value, (bool, np.bool_)):
            value = int(value)
        if isinstance(value, int) and not isinstance(value, DataType):
            return Arg.immediate(int(value))
        if isinstance(value, np.ndarray):
            self.exec.constants.append(value)
            return Arg.const_idx(len(self.exec.constants) - 1)
        key = (type(value).__name__, value)
        idx = self._const_dedup.get(key)
        if idx is None:
            idx = self._const_dedup[key] = len(self.exec.constants)
            self.exec.constants.append(value)
        return Arg.const_idx(idx)

    def get(self) -> VMExecutable:
        return self.exec


_ = VM_REGISTER
