"""A VM function's bytecode as one Python function (the VM's fast path).

The interpreter pays for every instruction: fetch, decode, a list of arguments, a dispatch.
A function without jumps (no ``If``/``Goto``: what a dataflow program lowers to) is instead
written out once as Python source, one line per instruction, registers as local variables::

    def main(r0, r1, r2, r3, r4):
        f0, f1, f6, f9 = funcs[0], funcs[1], funcs[6], funcs[9]
        if type(r0) is not ndarray or r0.ndim != 2 or r0.dtype != k1:
            f0(r0, 2, k2, k3)                       # the check, in full, only to fail
        if type(r0) is not ndarray or r0.shape != (1, 784):
            f1(r0, None, 2, 0, 1, 0, 784, k3)
        r5 = f6(vm, k4, 0, k2, k5)                  # vm.builtin.alloc_storage
        r6 = r5.views.get(k6)                       # vm.builtin.alloc_tensor: the view the
        if r6 is None:                              # storage keeps, else the builtin
            r6 = f7(r5, 0, k7, k2)
        ...
        r9 = r6  # r5's view, as before             # the same storage and key again
        ...
        r7 = r6                                     # vm.builtin.copy
        return r13

Same calls, same order, same checks: the argument checks ``VMShapeLower`` emitted run as an
inline guard on the common case (a NumPy array of the right rank, dtype, static shape) and
call the builtin — which raises the located error — only when the guard fails.  ``source``
is kept for reading; ``line_pc`` maps a line to its instruction, for error notes.

A kernel whose arguments the VM knows — tensors it allocated (``alloc_tensor`` of a static
shape: compact, aligned, writable) and arguments past their guards — is called without its
own argument check, through the kernel's ``unchecked_entry`` (numba_cpu's entry, ``k3``
the kernel's address): the check costs more than the kernel on small tensors.  The
arguments count as checked when each is a compact, aligned, writable array (``fast``,
tested once per call); otherwise the kernel is called as usual, and checks::

        fast = type(r0) is ndarray and r0.flags.carray
        ...
        rv = (d5(k3, r0, r2) if fast else f5(r0, r2))   # add_one: r2 allocated here
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from .builtins import tensor_key
from .bytecode import VM_REGISTER, VOID_REGISTER, ArgKind, Opcode


@dataclass
class CompiledFunction:
    """``fn(*args)`` runs the VM function; ``source`` its Python text; ``line_pc`` maps a
    line of ``source`` (1-based) to the index of the instruction it runs."""

    fn: object
    source: str
    line_pc: dict


class _Unsupported(Exception):
    pass


def compile_function(vm, index: int) -> CompiledFunction | None:
    """The VM function ``index`` of ``vm``'s executable as a Python function, or None when it
    has jumps (the interpreter runs those)."""
    try:
        return _Writer(vm, index).write()
    except _Unsupported:
        return None


class _Writer:
    def __init__(self, vm, index: int):
        ex = vm.exec
        self.vm = vm
        self.info = ex.func_table[index]
        self.code = ex.instructions[self.info.start_instr:self.info.end_instr]
        self.table = ex.func_table
        self.consts = ex.constants
        self.values: list = []  # closure constants k0, k1 …
        self.value_names: dict[int, str] = {}
        self.funcs: set[int] = set()
        self.written = set(range(self.info.num_args))
        self.read_first: set[int] = set()
        # what the code knows of a register: (shape, dtype) of a tensor it allocated, or of
        # an argument past its guards (``guards``: register -> {"shape": ..., "dtype": ...})
        self.known: dict[int, tuple] = {}
        self.guards: dict[int, dict] = {}
        self.entries: dict[int, str] = {}  # func index -> the constant of its unchecked entry
        self.reassigned: set[int] = set()  # arguments' registers written by the code
        self.tensor_keys: dict = {}  # alloc_tensor's cache keys, each once
        # (storage register, key) -> the register holding the view alloc_tensor gave
        self.views: dict[tuple, int] = {}
        self.fast_params: set[int] = set()  # arguments a kernel call relies on being compact

    # -- values -------------------------------------------------------------------------
    def const(self, value) -> str:
        key = id(value)
        name = self.value_names.get(key)
        if name is None:
            name = self.value_names[key] = f"k{len(self.values)}"
            self.values.append(value)
        return name

    def reg(self, r: int) -> str:
        if r == VOID_REGISTER:
            return "None"
        if r == VM_REGISTER:
            return "vm"
        if r not in self.written:
            self.read_first.add(r)
        return f"r{r}"

    def arg(self, a) -> str:
        if a.kind == ArgKind.Register:
            return self.reg(a.value)
        if a.kind == ArgKind.Immediate:
            return repr(int(a.value))
        if a.kind == ArgKind.ConstIdx:
            # a VM on a GPU passes its device copy of the constant
            return self.const(self.vm.memory.constant(self.consts[a.value]))
        raise _Unsupported  # a function reference as a value: the interpreter's _FuncRef

    def dst(self, r: int) -> str:
        if r == VOID_REGISTER:
            return "rv"
        self.written.add(r)
        self.known.pop(r, None)
        self.guards.pop(r, None)
        for held in [k for k, v in self.views.items() if r in (k[0], v)]:
            del self.views[held]
        if r < self.info.num_args:
            self.reassigned.add(r)
        return f"r{r}"

    # -- instructions -------------------------------------------------------------------
    def write(self) -> CompiledFunction:
        lines: list[tuple[str, int]] = []
        for pc, ins in enumerate(self.code):
            if ins.op == Opcode.Ret:
                lines.append((f"return {self.reg(ins.result) if ins.result != VOID_REGISTER else 'rv'}",
                              pc))
            elif ins.op == Opcode.Call:
                for text in self.call(ins):
                    lines.append((text, pc))
            else:
                raise _Unsupported
        params = ", ".join(f"r{i}" for i in range(self.info.num_args))
        head = [f"def make(funcs, vm, ndarray, {', '.join(['_'] + [f'k{i}' for i in range(len(self.values))])}):",
                f"    def {_identifier(self.info.name)}({params}):"]
        body = []
        if self.funcs:
            used = sorted(self.funcs)
            body.append(f"{', '.join(f'f{i}' for i in used)}{',' if len(used) == 1 else ''} = "
                        f"{', '.join(f'funcs[{i}]' for i in used)}")
        for i in sorted(self.entries):
            body.append(f"d{i} = {self.entries[i]}  # {self.table[i].name}, unchecked")
        if self.fast_params:
            body.append("fast = " + " and ".join(
                f"type(r{r}) is ndarray and r{r}.flags.carray" for r in sorted(self.fast_params)))
        body.append("rv = None")
        for r in sorted(self.read_first):
            body.append(f"r{r} = None")
        line_pc = {}
        out = list(head)
        for text in body:
            out.append("        " + text)
        for text, pc in lines:
            for part in text.split("\n"):
                out.append("        " + part)
                line_pc[len(out)] = pc
        out.append(f"    return {_identifier(self.info.name)}")
        source = "\n".join(out) + "\n"
        namespace: dict = {}
        exec(compile(source, f"<mlckit vm {self.info.name}>", "exec"), namespace)  # noqa: S102
        fn = namespace["make"](self.vm._funcs, self.vm, np.ndarray, None, *self.values)
        return CompiledFunction(fn, source, line_pc)

    def call(self, ins) -> list[str]:
        name = self.table[ins.func_idx].name
        special = _SPECIAL.get(name)
        if special is not None:
            text = special(self, ins)
            if text is not None:
                return [text]
        self.funcs.add(ins.func_idx)
        args = ", ".join(self.arg(a) for a in ins.args)
        return [f"{self.dst(ins.dst)} = {self.unchecked(ins, args)}"]

    def unchecked(self, ins, args: str) -> str:
        """The call of function ``ins.func_idx`` on ``args``: ``f<i>(...)``, or its unchecked
        entry ``d<i>(...)`` where every argument is a tensor the code knows (module
        docstring).  An entry that is a ``functools.partial`` (numba_cpu's: the kernel's
        address bound to the entry of its number of arguments) is called as its function,
        its bound arguments first: a partial's own call costs about as much as the VM's
        whole step."""
        callee = f"f{ins.func_idx}({args})"
        entry = getattr(self.vm._funcs[ins.func_idx], "unchecked_entry", None)
        if entry is None or not ins.args or any(
                a.kind != ArgKind.Register or a.value not in self.known for a in ins.args):
            return callee
        registers = [a.value for a in ins.args]
        # the caller's arrays may be one another's memory; the VM's own tensors are not
        may_overlap = [k for k, r in enumerate(registers)
                       if r < self.info.num_args or registers.count(r) > 1]
        run = entry([self.known[r] for r in registers], may_overlap=may_overlap)
        if run is None:
            return callee
        if isinstance(run, functools.partial) and not run.keywords:
            args = ", ".join([*(self.const(a) for a in run.args), args])
            run = run.func
        self.entries[ins.func_idx] = self.const(run)
        unchecked = f"d{ins.func_idx}({args})"
        params = {a.value for a in ins.args if a.value < self.info.num_args}
        if not params:
            return unchecked
        self.fast_params |= params
        return f"({unchecked} if fast else {callee})"

    def note_allocation(self, ins) -> None:
        """``alloc_tensor(storage, offset, shape, dtype)`` of a static shape: the result is a
        compact, aligned, writable array the code knows."""
        if len(ins.args) != 4:
            return
        shape, dtype = ins.args[2], ins.args[3]
        if getattr(self.vm.memory, "on_device", True) or shape.kind != ArgKind.ConstIdx \
                or dtype.kind != ArgKind.ConstIdx:
            return  # a device array (memory.py) is not a NumPy array
        try:
            dims = tuple(int(d) for d in self.consts[shape.value])
            self.known[ins.dst] = (dims, np.dtype(str(self.consts[dtype.value])))
        except (TypeError, ValueError):
            return

    def note_guard(self, r: int, **facts) -> None:
        """An argument past a guard: once both its dtype and static shape are guarded, the
        code knows it (a compact one: ``fast``)."""
        if r >= self.info.num_args or r in self.reassigned:
            return
        seen = self.guards.setdefault(r, {})
        seen.update(facts)
        if "shape" in seen and "dtype" in seen:
            self.known[r] = (seen["shape"], seen["dtype"])

    def guarded(self, ins, condition: str) -> str:
        """``if <condition>: <the builtin call>`` (the builtin raises the located error)."""
        self.funcs.add(ins.func_idx)
        args = ", ".join(self.arg(a) for a in ins.args)
        return f"if {condition}:\n    f{ins.func_idx}({args})"


def _identifier(name: str) -> str:
    text = "".join(c if c.isalnum() or c == "_" else "_" for c in name)
    return text if text and not text[0].isdigit() else f"f_{text}"


# -- instructions written inline ------------------------------------------------------------
def _copy(w: _Writer, ins):
    if len(ins.args) != 1 or ins.args[0].kind != ArgKind.Register:
        return None
    src = w.reg(ins.args[0].value)
    known = w.known.get(ins.args[0].value)
    text = f"{w.dst(ins.dst)} = {src}"
    if known is not None and ins.args[0].value >= w.info.num_args:
        w.known[ins.dst] = known  # an argument's knowledge rests on ``fast``: not copied
    return text


def _alloc_tensor(w: _Writer, ins):
    """A tensor of constant offset, shape and dtype: its storage's cached view when there is
    one (the call's own first step, without the call), else the builtin."""
    args = ins.args
    if len(args) != 4 or args[0].kind != ArgKind.Register or args[1].kind != ArgKind.Immediate \
            or any(a.kind != ArgKind.ConstIdx for a in args[2:]):
        return None
    storage = w.reg(args[0].value)
    key = tensor_key(int(args[1].value), w.consts[args[2].value], w.consts[args[3].value])
    try:
        key = w.const(w.tensor_keys.setdefault(key, key))  # one constant per distinct key
    except TypeError:  # an unhashable shape: the builtin does not cache its view either
        return None
    w.funcs.add(ins.func_idx)
    call = ", ".join(w.arg(a) for a in args)
    earlier = w.views.get((args[0].value, key))
    dst = w.dst(ins.dst)
    w.note_allocation(ins)
    w.views[(args[0].value, key)] = ins.dst
    if earlier is not None:  # the storage keeps one view per key: the one taken before
        return f"{dst} = r{earlier}  # {storage}'s view, as before"
    return f"{dst} = {storage}.views.get({key})\nif {dst} is None:\n    {dst} = f{ins.func_idx}({call})"


def _check_tensor_info(w: _Writer, ins):
    args = ins.args
    if (len(args) != 4 or args[0].kind != ArgKind.Register or args[1].kind != ArgKind.Immediate
            or args[2].kind != ArgKind.ConstIdx or ins.dst != VOID_REGISTER):
        return None
    x = w.reg(args[0].value)
    ndim, dtype = int(args[1].value), w.consts[args[2].value]
    cond = [f"type({x}) is not ndarray"]
    if ndim != -1:
        cond.append(f"{x}.ndim != {ndim}")
    if dtype:
        cond.append(f"{x}.dtype != {w.const(np.dtype(str(dtype)))}")
        w.note_guard(args[0].value, dtype=np.dtype(str(dtype)))
    return w.guarded(ins, " or ".join(cond))


def _match_shape(w: _Writer, ins):
    args = ins.args
    if (len(args) < 4 or args[0].kind != ArgKind.Register or args[2].kind != ArgKind.Immediate
            or ins.dst != VOID_REGISTER):
        return None
    ndim = int(args[2].value)
    codes = args[3:-1]
    if len(codes) != 2 * ndim or any(a.kind != ArgKind.Immediate for a in codes):
        return None
    if any(int(codes[2 * d].value) != 0 for d in range(ndim)):
        return None  # symbolic dims: stores and loads of the shape heap, by the builtin
    x = w.reg(args[0].value)
    shape = tuple(int(codes[2 * d + 1].value) for d in range(ndim))
    w.note_guard(args[0].value, shape=shape)
    return w.guarded(ins, f"type({x}) is not ndarray or {x}.shape != {shape!r}")


_SPECIAL = {
    "vm.builtin.alloc_tensor": _alloc_tensor,
    "vm.builtin.copy": _copy,
    "vm.builtin.check_tensor_info": _check_tensor_info,
    "vm.builtin.match_shape": _match_shape,
}


__all__ = ["CompiledFunction", "compile_function"]
