"""VM bytecode (as TVM's ``runtime/vm/bytecode.h``): four instructions over registers.

- ``Call(func_idx, args, dst)``: call entry ``func_idx`` of the function table;
- ``Ret(result)``: return a register;
- ``Goto(pc_offset)``: jump relative to the current instruction;
- ``If(cond, false_offset)``: fall through when ``cond`` is true, else jump.

An argument is a register (``%3``; ``%void`` and ``%vm`` are special), an immediate int
(``i784``), a constant-pool index (``c[0]``) or a function-table index (``f[linear0]``).

Example::

    Instruction.call(2, [Arg.register(0), Arg.immediate(1)], dst=3)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum

VOID_REGISTER = -1   # TVM's kVoidRegister: the result is dropped / the value is None
VM_REGISTER = -2     # TVM's kVMRegister: the virtual machine itself


class Opcode(IntEnum):
    Call = 1
    Ret = 2
    Goto = 3
    If = 4


class ArgKind(IntEnum):
    Register = 0
    Immediate = 1
    ConstIdx = 2
    FuncIdx = 3


def reg_name(reg: int) -> str:
    if reg == VOID_REGISTER:
        return "%void"
    if reg == VM_REGISTER:
        return "%vm"
    return f"%{reg}"


@dataclass(frozen=True)
class Arg:
    """One argument of a Call: ``kind`` and ``value``."""

    kind: ArgKind
    value: int

    @staticmethod
    def register(reg: int) -> Arg:
        return Arg(ArgKind.Register, reg)

    @staticmethod
    def immediate(value: int) -> Arg:
        return Arg(ArgKind.Immediate, value)

    @staticmethod
    def const_idx(index: int) -> Arg:
        return Arg(ArgKind.ConstIdx, index)

    @staticmethod
    def func_idx(index: int) -> Arg:
        return Arg(ArgKind.FuncIdx, index)


@dataclass
class Instruction:
    """One instruction; which fields matter depends on ``op``."""

    op: Opcode
    dst: int = VOID_REGISTER
    func_idx: int = -1
    args: list = field(default_factory=list)
    result: int = VOID_REGISTER
    pc_offset: int = 0
    cond: int = VOID_REGISTER
    false_offset: int = 0

    @staticmethod
    def call(func_idx: int, args: list, dst: int = VOID_REGISTER) -> Instruction:
        return Instruction(Opcode.Call, dst=dst, func_idx=func_idx, args=list(args))

    @staticmethod
    def ret(result: int) -> Instruction:
        return Instruction(Opcode.Ret, result=result)

    @staticmethod
    def goto(pc_offset: int) -> Instruction:
        return Instruction(Opcode.Goto, pc_offset=pc_offset)

    @staticmethod
    def if_(cond: int, false_offset: int) -> Instruction:
        return Instruction(Opcode.If, cond=cond, false_offset=false_offset)
