"""The Relax virtual machine: runs an ``Executable`` (as ``tvm.relax.VirtualMachine``).

Example::

    ex = relax.build(MyModule, target="llvm")
    vm = relax.VirtualMachine(ex, mlckit.cpu())
    out = vm["main"](x_nd, w0, b0, w1, b1)       # NDArrays or NumPy arrays in, NDArray out
    print(vm.profile(x_nd, w0, b0, w1, b1))      # per-kernel table

Inside the VM tensors are NumPy arrays.  Kernels (compiled PrimFuncs) receive them as they
are; functions registered with ``mlckit.register_func`` receive ``mlckit.nd.NDArray``
views (writing into an output argument writes the VM's tensor, as in TVM); the values a
Relax function returns come back as NDArrays.

Packed functions are found by name: first among the module's compiled PrimFuncs, then in
the global registry (TVM's order).  A name found in neither raises when it is called,
naming the Relax function and the instruction that calls it.
"""

from __future__ import annotations

import difflib
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from mlckit.backend.signature import compact_copy
from mlckit.error import TVMError
from mlckit.ffi.registry import get_global_func, missing_message
from mlckit.ffi.views import html_view
from mlckit.runtime.module import time_evaluator

from . import builtins as _builtins  # noqa: F401 - registers vm.builtin.*
from .builtins import ShapeHeap
from .bytecode import VM_REGISTER, VOID_REGISTER, ArgKind, Opcode
from .executable import VMExecutable
from .memory import vm_memory
from .pycompile import CompiledFunction, compile_function

_CALL, _RET, _GOTO, _IF = 0, 1, 2, 3


class VMError(TVMError):
    """The VM cannot run a call (a missing function, a wrong argument count …)."""


def _to_vm(value):
    """An argument from outside: NDArray → its NumPy array; sequences → tuples."""
    view = getattr(value, "_mlckit_numpy_view", None)
    if view is not None:
        value = view()
    if isinstance(value, np.ndarray):
        # a view (a transpose, a slice with a step, a broadcast …) is copied once, as TVM's
        # tvm.runtime.tensor copies it: kernels index compact rows.  The copy is read-only: a
        # kernel that writes the argument in place is refused (as TVM refuses non-compact
        # arrays), never run on the copy while the caller's array stays as it was
        return value if value.flags.c_contiguous else compact_copy(value)
    if isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
        return tuple(_to_vm(v) for v in value)
    if isinstance(value, np.generic):
        return value.item()
    return value


def _to_device_vm(memory):
    """``_to_vm`` for a VM whose tensors live on the GPU: host arrays are copied there once,
    device arrays (and device NDArrays) are taken as they are."""

    def to_vm(value):
        inner = getattr(value, "_mlckit_device_array", None)
        if inner is not None and inner() is not None:
            return inner()
        value = _to_vm(value)
        if isinstance(value, np.ndarray):
            return memory.to_device(value)
        if type(value) is tuple:
            return tuple(to_vm(v) for v in value)
        return value

    return to_vm


def _nd(device, on_device: bool = False):
    from mlckit.runtime.ndarray import NDArray

    from .memory import is_tensor

    def wrap(value):
        if isinstance(value, np.ndarray) or (on_device and is_tensor(value)):
            return NDArray(value, device)
        if isinstance(value, tuple) and type(value) is tuple:
            return tuple(wrap(v) for v in value)
        return value

    return wrap


def _check_arity(name: str, func, count: int) -> None:
    """Raise VMError when the registered ``func`` cannot take ``count`` arguments."""
    import inspect

    try:
        sig = inspect.signature(func)
    except (TypeError, ValueError):
        return
    try:
        sig.bind(*range(count))
    except TypeError:
        raise VMError(f"the packed function {name!r} was called with {count} argument"
                      f"{'s' if count != 1 else ''} (for R.call_dps_packed: the inputs, then "
                      f"the outputs), but the Python function registered for it takes "
                      f"{getattr(func, '__name__', 'f')}{sig}") from None


def _from_user(value):
    device_array = getattr(value, "_mlckit_device_array", None)
    if device_array is not None and device_array() is not None:
        return device_array()
    view = getattr(value, "_mlckit_numpy_view", None)
    if view is not None:
        return view()
    return value


@dataclass
class ProfileRow:
    name: str
    calls: int = 0
    seconds: float = 0.0


@dataclass
class ProfileReport:
    """Per-callee timings of one run: ``rows`` sorted by total time (``str()`` is a table).

    Each row is a kernel, a registered function or a VM builtin that ``call`` instructions
    invoked; ``share`` is its part of the time spent in calls.
    """

    function: str
    rows: list = field(default_factory=list)
    total_seconds: float = 0.0

    def table(self) -> str:
        called = sum(r.seconds for r in self.rows) or 1e-12
        lines = [f"Profile of {self.function} (total {self.total_seconds * 1e3:.3f} ms)",
                 f"{'Name':<36}{'Calls':>7}{'Total (us)':>14}{'Mean (us)':>12}{'Share':>9}"]
        for r in self.rows:
            lines.append(f"{r.name:<36}{r.calls:>7}{r.seconds * 1e6:>14.1f}"
                         f"{r.seconds * 1e6 / max(r.calls, 1):>12.2f}"
                         f"{100 * r.seconds / called:>8.1f}%")
        overhead = self.total_seconds - sum(r.seconds for r in self.rows)
        lines.append(f"{'(VM dispatch and the rest)':<36}{'':>7}{overhead * 1e6:>14.1f}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.table()

    __repr__ = __str__

    def _repr_html_(self) -> str | None:
        """A table sortable by each column (by total time at first) as HTML in a notebook (installed by the notebook layer); None,
        so that the text form shows, when it is not there."""
        return html_view(self)


class VirtualMachine:
    """Run the functions of an ``Executable``: ``vm["main"](*args)``.

    Example::

        vm = VirtualMachine(ex, mlckit.cpu())
        y = vm["main"](np.ones((1, 784), "float32"), w0, b0, w1, b1)
        y.numpy()
    """

    def __init__(self, rt_mod: VMExecutable, device=None, memory_cfg=None, profile: bool = False):
        if not isinstance(rt_mod, VMExecutable):
            rt_mod = getattr(rt_mod, "executable", rt_mod)
        if not isinstance(rt_mod, VMExecutable):
            raise VMError(f"VirtualMachine expects an Executable (from relax.build or "
                          f"tvm.compile of a module with Relax functions), got "
                          f"{type(rt_mod).__name__}")
        if isinstance(device, (list, tuple)):
            device = device[0] if device else None
        if device is None:
            from mlckit.runtime.device import cpu

            device = cpu()
        self.exec = rt_mod
        self.device = device
        self._storage_bytes = 0
        self._storage_pool: dict = {}  # nbytes -> storages to reuse (vm.builtin.alloc_storage)
        self.memory = vm_memory(device)  # host memory, or the GPU's (memory.py)
        self._wrap_out = _nd(device, self.memory.on_device)
        self._to_vm = _to_device_vm(self.memory) if self.memory.on_device else _to_vm
        self._profiling: dict | None = None
        self._funcs: list = [self._resolve(i) for i in range(len(rt_mod.func_table))]
        self._code: dict[int, tuple] = {}
        self._compiled: dict[int, CompiledFunction] = {}
        for i, info in enumerate(rt_mod.func_table):
            if info.kind == "vm_func":
                self._code[i] = (self._decode(i), info.register_file_size)
                compiled = compile_function(self, i)
                if compiled is not None:  # straight-line: one Python function
                    self._compiled[i] = compiled

    # -- function table -----------------------------------------------------------------
    def _resolve(self, index: int):
        info = self.exec.func_table[index]
        if info.kind == "vm_func":
            def call_vm_func(*args, _i=index):
                return self._run(_i, args)

            call_vm_func.__name__ = info.name
            return call_vm_func
        kernel = self.exec.kernels.get(info.name)
        if kernel is not None:
            if info.name in getattr(self.exec, "heap_kernels", ()):
                return lambda heap, _k=kernel: _k(heap.data)
            return kernel
        return self._packed(info.name)

    def _packed(self, name: str):
        func = get_global_func(name, allow_missing=True)
        if func is None:
            return _Missing(self, name)
        if getattr(func, "_mlckit_vm_builtin", False):
            if self.memory.on_device and getattr(func, "_mlckit_host_arrays", False):
                return self.memory.on_host(func)
            return func
        wrap = self._wrap_out

        def call_registered(*args):
            try:
                out = func(*[wrap(a) for a in args])
            except TypeError:
                _check_arity(name, func, len(args))  # a wrong count is the program's, say so
                raise
            if isinstance(out, (list, tuple)):
                return tuple(_from_user(o) for o in out)
            return _from_user(out)

        call_registered.__name__ = name
        return call_registered

    def _decode(self, index: int) -> list:
        info = self.exec.func_table[index]
        consts = self.exec.constants
        code = []
        for instr in self.exec.instructions[info.start_instr:info.end_instr]:
            if instr.op == Opcode.Call:
                spec = []
                for a in instr.args:
                    if a.kind == ArgKind.Register:
                        if a.value == VM_REGISTER:
                            spec.append((False, self))
                        elif a.value == VOID_REGISTER:
                            spec.append((False, None))
                        else:
                            spec.append((True, a.value))
                    elif a.kind == ArgKind.Immediate:
                        spec.append((False, a.value))
                    elif a.kind == ArgKind.ConstIdx:
                        spec.append((False, self.memory.constant(consts[a.value])))
                    else:
                        spec.append((False, _FuncRef(self, a.value)))
                code.append((_CALL, instr.func_idx, tuple(spec), instr.dst))
            elif instr.op == Opcode.Ret:
                code.append((_RET, instr.result))
            elif instr.op == Opcode.Goto:
                code.append((_GOTO, instr.pc_offset))
            else:
                code.append((_IF, instr.cond, instr.false_offset))
        return code

    # -- running ----------------------------------------------------------------------------
    def _run(self, index: int, args) -> Any:
        """Run function ``index``: its compiled Python form (``pycompile``) when it has one,
        else (and while profiling, which times every call) the interpreter."""
        compiled = self._compiled.get(index)
        if compiled is None or self._profiling is not None:
            return self._interpret(index, args)
        try:
            return compiled.fn(*args)
        except Exception as err:
            self._note(err, index, _raising_pc(err, compiled))
            raise

    def _note(self, err: Exception, index: int, pc: int | None) -> None:
        """Add to ``err`` which function and instruction raised it (once)."""
        if getattr(err, "_mlckit_vm_noted", False) or pc is None:
            return
        info = self.exec.func_table[index]
        instr = self.exec.instructions[info.start_instr + pc]
        callee = self.exec.func_table[instr.func_idx].name if instr.func_idx >= 0 else ""
        if hasattr(err, "add_note"):
            err.add_note(f"(raised by the VM while running {info.name!r}, instruction "
                         f"{pc}: call {callee})")
        try:
            err._mlckit_vm_noted = True
        except AttributeError:
            pass

    def _interpret(self, index: int, args) -> Any:
        code, nreg = self._code[index]
        regs = [None] * (nreg + 1)  # the extra last slot receives %void results
        regs[:len(args)] = args
        funcs = self._funcs
        prof = self._profiling
        pc = 0
        try:
            while True:
                ins = code[pc]
                op = ins[0]
                if op == _CALL:
                    f = funcs[ins[1]]
                    call_args = [regs[v] if r else v for r, v in ins[2]]
                    if prof is None:
                        regs[ins[3]] = f(*call_args)
                    else:
                        t0 = time.perf_counter()
                        regs[ins[3]] = f(*call_args)
                        dt = time.perf_counter() - t0
                        row = prof.get(ins[1])
                        if row is None:
                            row = prof[ins[1]] = ProfileRow(self.exec.func_table[ins[1]].name)
                        row.calls += 1
                        row.seconds += dt
                    pc += 1
                elif op == _RET:
                    return regs[ins[1]]
                elif op == _GOTO:
                    pc += ins[1]
                else:
                    pc += 1 if regs[ins[1]] else ins[2]
        except Exception as err:
            self._note(err, index, pc)
            raise

    # -- public API -------------------------------------------------------------------------
    def _entry(self, name: str) -> int:
        idx = self.exec.func_map.get(name)
        if idx is None or self.exec.func_table[idx].kind != "vm_func":
            names = [i.name for i in self.exec.func_table if i.kind == "vm_func"]
            close = difflib.get_close_matches(str(name), names, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise VMError(f"the executable has no Relax function {name!r} (it has: "
                          f"{', '.join(names)}){hint}")
        return idx

    def _check_count(self, idx: int, args) -> None:
        info = self.exec.func_table[idx]
        if len(args) != info.num_args:
            params = ", ".join(info.param_names)
            raise VMError(f"{info.name} expects {info.num_args} argument"
                            f"{'s' if info.num_args != 1 else ''} ({params}), got {len(args)}")

    def __getitem__(self, name: str):
        idx = self._entry(name)
        num_args = self.exec.func_table[idx].num_args
        wrap, run, ndarray = self._wrap_out, self._run, np.ndarray
        on_device, to_device = self.memory.on_device, self._to_vm

        def call(*args):
            if len(args) != num_args:
                self._check_count(idx, args)
            if on_device:  # every host array is copied to the GPU once
                return wrap(run(idx, [to_device(a) for a in args]))
            return wrap(run(idx, [a if type(a) is ndarray and a.flags.c_contiguous
                                  else _to_vm(a) for a in args]))

        call.__name__ = name
        return call

    get_function = __getitem__

    def python_source(self, func_name: str = "main") -> str | None:
        """The Python function the VM runs for ``func_name`` (one line per instruction), or
        None when the function has jumps and is interpreted (mlckit only).

        Example::

            print(vm.python_source("main"))   # def main(r0, r1, …): … return r13
        """
        compiled = self._compiled.get(self._entry(func_name))
        return compiled.source if compiled is not None else None

    @property
    def module(self):
        """The VM as a runtime module (TVM's ``vm.module``): ``vm.module["main"]`` and
        ``vm.module.time_evaluator("main", dev)`` work on it."""
        return self

    def invoke(self, name: str, *args):
        """``vm.invoke("main", *args)``: the same as ``vm["main"](*args)``."""
        return self[name](*args)

    def profile(self, *args, func_name: str | None = None) -> ProfileReport:
        """Run a function once and time every ``call`` it makes (TVM's ``vm.profile``).

        ``vm.profile(*args)`` profiles ``main``; ``vm.profile("f", *args)`` the function ``f``.

        Example::

            report = vm.profile(x, w0, b0, w1, b1)
            print(report)            # Name, Calls, Total (us), Mean (us), Share
        """
        if func_name is None:
            # TVM's form is profile(func_name, *args): a leading string is always the name
            if args and isinstance(args[0], str):
                func_name, args = args[0], args[1:]
            else:
                func_name = "main"
        idx = self._entry(func_name)
        self._check_count(idx, args)
        self._profiling = {}
        try:
            t0 = time.perf_counter()
            self._run(idx, [_to_vm(a) for a in args])
            total = time.perf_counter() - t0
            rows = sorted(self._profiling.values(), key=lambda r: -r.seconds)
        finally:
            self._profiling = None
        return ProfileReport(func_name, rows, total)

    def time_evaluator(self, func_name: str, dev=None, number: int = 10, repeat: int = 1,
                       min_repeat_ms: float = 0, **_ignored):
        """A timer for ``func_name`` (seconds per call), as TVM's ``vm.time_evaluator``."""
        return time_evaluator(self[func_name], dev, number, repeat, min_repeat_ms)

    def __repr__(self) -> str:
        return f"<mlckit VirtualMachine on {self.device}: {self.exec!r}>"


def _raising_pc(err: Exception, compiled: CompiledFunction) -> int | None:
    """The instruction of ``compiled`` that was running when ``err`` was raised."""
    tb = err.__traceback__
    pc = None
    while tb is not None:
        if tb.tb_frame.f_code is compiled.fn.__code__:
            pc = compiled.line_pc.get(tb.tb_lineno)
        tb = tb.tb_next
    return pc


class _FuncRef:
    """A function-table entry used as a value (``f[name]``): callable."""

    def __init__(self, vm: VirtualMachine, index: int):
        self.vm, self.index = vm, index

    def __call__(self, *args):
        return self.vm._funcs[self.index](*args)

    def __repr__(self) -> str:
        return f"<function {self.vm.exec.func_table[self.index].name}>"


class _Missing:
    """A packed function not found when the VM was created: looked up again when called."""

    def __init__(self, vm: VirtualMachine, name: str):
        self.vm, self.name = vm, name

    def __call__(self, *args):
        func = get_global_func(self.name, allow_missing=True)
        if func is None:
            callers = [i.name for i in self.vm.exec.func_table if i.kind == "vm_func" and any(
                ins.func_idx == self.vm.exec.func_map[self.name]
                for ins in self.vm.exec.instructions[i.start_instr:i.end_instr])]
            where = f"called from {', '.join(callers)}" if callers else ""
            kernels = ", ".join(sorted(self.vm.exec.kernels)) or "none"
            raise VMError(missing_message(self.name, where) +
                          f" It is not a PrimFunc of the module either (those are: {kernels}).")
        resolved = self.vm._packed(self.name)
        self.vm._funcs[self.vm.exec.func_map[self.name]] = resolved
        return resolved(*args)


_ = ShapeHeap
