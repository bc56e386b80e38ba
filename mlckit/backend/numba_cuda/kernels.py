"""Where a PrimFunc's GPU kernels are, how each is launched, and what a GPU forbids.

A kernel starts at a loop bound to ``blockIdx.*`` or ``threadIdx.*`` that no other bound loop
encloses; everything inside it runs on the device, once per thread.  Everything outside the
kernels is the *host* part, which may only loop and launch: a buffer read or written there
would be device memory touched by the CPU, which TVM rejects ("Did you forget to bind?").

A kernel's launch configuration comes from the extents of its bound loops: ``blockIdx.x`` of
extent 8 and ``threadIdx.x`` of extent 128 launch a grid of 8 blocks of 128 threads.  Loops
bound to the same axis share the hardware index (the cooperative fetch's
``threadIdx.x`` loop nested in the compute's); one of a smaller extent than the launch's
runs under ``if tx < extent``.

Example::

    kernels = find_kernels(func)      # after lower(): [Kernel('main_kernel', grid (8,), ...)]
    kernels[0].grid, kernels[0].block
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from mlckit.error import TVMError, TVMValueError
from mlckit.tir import stmt as S
from mlckit.tir.buffer import Buffer, decl_buffer
from mlckit.tir.expr import BufferLoad, IntImm, IterVar, PrimExpr, StringImm
from mlckit.tir.function import PrimFunc

__all__ = ["AXES", "GPULimitError", "Kernel", "MemoryVerificationError", "ScopeError",
           "allocated_buffer", "covers_launch", "find_kernels", "kernel_of_loop", "thread_scope"]

AXES = ("blockIdx.x", "blockIdx.y", "blockIdx.z", "threadIdx.x", "threadIdx.y", "threadIdx.z")
# CUDA's limits on each launch dimension (compute capability 3.0 and later).
AXIS_LIMITS = {"blockIdx.x": 2**31 - 1, "blockIdx.y": 65535, "blockIdx.z": 65535,
               "threadIdx.x": 1024, "threadIdx.y": 1024, "threadIdx.z": 64}
SCOPES = ("global", "shared", "local")
DEFAULT_MAX_THREADS = 1024
DEFAULT_MAX_SHARED = 49152


class MemoryVerificationError(TVMError):
    """Host code touches a buffer: a loop is not bound to ``blockIdx``/``threadIdx``."""


class GPULimitError(TVMValueError):
    """A launch dimension, the threads of a block or its shared memory exceed the device's."""


class ScopeError(TVMValueError):
    """A buffer's storage scope is not one the CUDA backend knows."""


class ThreadBindingError(TVMValueError):
    """A loop is bound to a thread axis that a loop around it is already bound to."""


@dataclass
class Kernel:
    """One kernel: its outermost bound loop, the launch extent per axis, its buffers."""

    name: str
    stmt: S.For
    extents: dict = field(default_factory=dict)  # axis -> PrimExpr
    shared: list = field(default_factory=list)  # Buffers in "shared" memory
    local: list = field(default_factory=list)
    # variables of the host loops around the kernel that it reads: passed to it, as TVM's
    # SplitHostDevice passes them (one launch per iteration of those loops)
    host_vars: list = field(default_factory=list)

    def dims(self, prefix: str) -> list:
        """``[x, y, z]`` extents of ``blockIdx`` or ``threadIdx``, trimmed after the last used."""
        dims = [self.extents.get(f"{prefix}.{a}", IntImm("int32", 1)) for a in "xyz"]
        while len(dims) > 1 and f"{prefix}.{'xyz'[len(dims) - 1]}" not in self.extents:
            dims.pop()
        return dims

    @property
    def grid(self) -> list:
        return self.dims("blockIdx")

    @property
    def block(self) -> list:
        return self.dims("threadIdx")

    @property
    def shared_bytes(self) -> int:
        return sum(_nbytes(b) for b in self.shared)


def _nbytes(buf: Buffer) -> int:
    from mlckit.tir import dtype as dt

    if not all(isinstance(d, IntImm) for d in buf.shape):
        return 0
    return math.prod(int(d.value) for d in buf.shape) * dt.to_numpy(buf.dtype).itemsize


def kernel_of_loop(loop) -> bool:
    """Whether ``loop`` is a thread scope: a ``T.thread_binding`` loop, or (lowered TIR) a
    ``T.launch_thread`` (``AttrStmt`` ``"thread_extent"``)."""
    if isinstance(loop, S.For):
        return loop.kind == S.ForKind.THREAD_BINDING
    return (isinstance(loop, S.AttrStmt) and loop.attr_key == "thread_extent"
            and isinstance(loop.node, IterVar))


def thread_scope(s) -> tuple:
    """``(variable, thread tag, min, extent)`` of a thread scope (see :func:`kernel_of_loop`)."""
    if isinstance(s, S.For):
        tag = s.thread_binding.thread_tag if s.thread_binding is not None else ""
        return s.loop_var, tag, s.min, s.extent
    return s.node.var, s.node.thread_tag, IntImm(s.value.dtype, 0), s.value


def allocated_buffer(s: S.Allocate) -> Buffer:
    """The buffer a lowered ``T.allocate`` holds (its flat shape, dtype and scope)."""
    body = s.body
    if isinstance(body, S.DeclBuffer) and body.buffer.data is s.buffer_var:
        return body.buffer
    return decl_buffer(list(s.extents), s.dtype, s.buffer_var.name_hint, data=s.buffer_var,
                       scope=s.scope)


def find_kernels(func: PrimFunc, name: str, target=None) -> list[Kernel]:
    """The kernels of the lowered ``func``; raises when host code touches memory, a buffer has
    a scope the backend does not know, or a kernel exceeds the device's limits."""
    walker = _HostWalker(func, name)
    walker.stmt(func.body, [])
    kernels = walker.kernels
    base = f"{name}_kernel"
    for n, k in enumerate(kernels):
        k.name = base if n == 0 else f"{base}_{n}"
        _collect_kernel(k, func, name)
        _check_limits(k, func, name, target)
    return kernels


# -- the host part --------------------------------------------------------------------------
class _HostWalker:
    def __init__(self, func: PrimFunc, name: str):
        self.func, self.name = func, name
        self.kernels: list[Kernel] = []

    def stmt(self, s, loops: list):
        if kernel_of_loop(s):
            used = [lp.loop_var for lp in loops if _uses_var(s, lp.loop_var)]
            self.kernels.append(Kernel("", s, host_vars=used))
            return
        if isinstance(s, S.For):
            self.stmt(s.body, loops + [s])
            return
        if isinstance(s, S.Allocate):  # lowered TIR
            buf = allocated_buffer(s)
            _check_scope(buf, self.func, self.name)
            if _scope(buf) != "global":
                raise ScopeError(
                    f"{self.name}: the {_scope(buf)!r} buffer {buf.name!r} is allocated "
                    f"outside every kernel, but {_scope(buf)} memory only exists inside one")
            self.stmt(s.body, loops)
            return
        if isinstance(s, S.BlockRealize):
            block = s.block
            for buf in block.alloc_buffers:
                _check_scope(buf, self.func, self.name)
                if _scope(buf) != "global":
                    raise ScopeError(
                        f"{self.name}: the {_scope(buf)!r} buffer {buf.name!r} is allocated "
                        f"outside every kernel (in block {block.name_hint!r}), but {_scope(buf)} "
                        "memory only exists inside one: each kernel's accesses must stay inside "
                        "its thread-bound loops")
            if block.iter_vars:
                self.unbound(s, loops)
            if block.init is not None:
                self.stmt(block.init, loops)
            self.stmt(block.body, loops)
            return
        if isinstance(s, S.SeqStmt):
            for x in s.seq:
                self.stmt(x, loops)
            return
        if isinstance(s, (S.BufferStore, S.Evaluate, S.IfThenElse, S.While)) and _touches_memory(s):
            self.unbound(s, loops)
        for fname in s.field_names():
            v = getattr(s, fname)
            if isinstance(v, S.Stmt):
                self.stmt(v, loops)

    def unbound(self, s, loops: list):
        buffers = _buffers_touched(s)
        params = {id(b) for b in self.func.buffer_map.values()}
        names = [b.name for b in buffers if id(b) in params] or [b.name for b in buffers]
        errors = "".join(
            f"    Variable `{n}` is directly accessed by host memory (it is not contained in a "
            "thread environment or in the function arguments.\n" for n in names)
        what = (f'block "{s.block.name_hint}"' if isinstance(s, S.BlockRealize)
                else f"the statement {type(s).__name__}")
        if loops:
            names_ = ", ".join(lp.loop_var.name_hint for lp in loops)
            where = (f"{what} runs under the loops {names_}, none of them bound to "
                     "blockIdx/threadIdx" if len(loops) > 1 else
                     f"{what} runs under the loop {names_}, which is not bound to "
                     "blockIdx/threadIdx")
            hint = (f'bind them, e.g. sch.bind({loops[0].loop_var.name_hint}, "blockIdx.x")'
                    + (f' and sch.bind({loops[-1].loop_var.name_hint}, "threadIdx.x")'
                       if len(loops) > 1 else ""))
        else:
            where = f"{what} is outside every loop, so no thread runs it"
            hint = "wrap it in a loop bound to a thread axis"
        raise MemoryVerificationError(
            "Memory verification failed with the following errors:\n" + errors
            + "  Did you forget to bind?\n"
            f"In {self.name}: {where}; for target cuda, buffers can only be accessed inside "
            f"loops bound to GPU threads: {hint}.")


def _touches_memory(s) -> bool:
    return bool(_buffers_touched(s))


def _buffers_touched(node) -> list:
    """Buffers loaded or stored under ``node``, outside thread-bound loops, in first-use order."""
    found: dict[int, Buffer] = {}

    def walk(x):
        if kernel_of_loop(x):
            return
        if isinstance(x, (BufferLoad, S.BufferStore)):
            found.setdefault(id(x.buffer), x.buffer)
        if isinstance(x, (list, tuple)):
            for y in x:
                walk(y)
            return
        if not hasattr(x, "field_names"):
            return
        for fname in x.field_names():
            walk(getattr(x, fname))

    walk(node)
    return list(found.values())


def _scope(buf: Buffer) -> str:
    return buf.scope or "global"


def _check_scope(buf: Buffer, func, name: str):
    scope = _scope(buf)
    if scope not in SCOPES:
        raise ScopeError(
            f"{name}: buffer {buf.name!r} has the storage scope {scope!r}, which the CUDA backend "
            f"does not know (it knows {', '.join(repr(s) for s in SCOPES)})")


# -- inside a kernel --------------------------------------------------------------------------
def _collect_kernel(k: Kernel, func, name: str):
    extents: dict = {}

    def walk(s, outer=None):
        outer = outer or {}  # thread axis -> the enclosing thread scope bound to it
        if kernel_of_loop(s):
            var, tag, lo, extent = thread_scope(s)
            if tag not in AXES:
                raise ScopeError(
                    f"{name}: the loop {var.name_hint} is bound to {tag!r}, which the "
                    f"CUDA backend does not support (it supports {', '.join(AXES)})")
            if tag in outer and _uses_var(s.body, thread_scope(outer[tag])[0]):
                _nested_binding(name, s, outer[tag], tag)
            end = lo + extent if not _is_zero(lo) else extent
            extents[tag] = _max_extent(extents.get(tag), end, tag, var, name)
            walk(s.body, {**outer, tag: s})
            return
        if isinstance(s, S.For):
            walk(s.body, outer)
            return
        if isinstance(s, S.Allocate):  # lowered TIR: checked before lowering
            buf = allocated_buffer(s)
            (k.shared if _scope(buf) == "shared" else k.local).append(buf)
            walk(s.body, outer)
            return
        if isinstance(s, S.BlockRealize):
            for buf in s.block.alloc_buffers:
                _check_scope(buf, func, name)
                scope = _scope(buf)
                if scope == "global":
                    raise ScopeError(
                        f"{name}: the 'global' buffer {buf.name!r} is allocated inside a kernel "
                        f"(block {s.block.name_hint!r}); allocate it at the function's top level, "
                        "or give it the scope 'shared' or 'local'")
                if not all(isinstance(d, IntImm) for d in buf.shape):
                    raise ScopeError(
                        f"{name}: the {scope!r} buffer {buf.name!r} has the shape "
                        f"{tuple(str(d) for d in buf.shape)}, but GPU {scope} memory needs a "
                        "constant shape (compaction could not bound its region)")
                (k.shared if scope == "shared" else k.local).append(buf)
            if s.block.init is not None:
                walk(s.block.init, outer)
            walk(s.block.body, outer)
            return
        for fname in s.field_names():
            v = getattr(s, fname)
            if isinstance(v, S.Stmt):
                walk(v, outer)
            elif isinstance(v, list):
                for x in v:
                    if isinstance(x, S.Stmt):
                        walk(x, outer)

    walk(k.stmt)
    k.extents = {tag: extents[tag] for tag in AXES if tag in extents}


def _uses_var(node, var) -> bool:
    """Whether ``var`` occurs in ``node`` (a statement or expression)."""
    from mlckit.ir.node import Node

    def walk(x) -> bool:
        if x is var:
            return True
        if isinstance(x, Node):
            return any(walk(getattr(x, f)) for f in type(x).field_names())
        if isinstance(x, (list, tuple)):
            return any(walk(y) for y in x)
        return False

    return walk(node)


def _nested_binding(name: str, inner: S.For, outer: S.For, tag: str):
    """Refuse ``inner``, bound to the thread axis ``tag`` of the loop ``outer`` around it,
    when its body uses ``outer``'s variable.  In a kernel every loop bound to one axis is
    that one thread index (TVM's UnifyThreadBinding), so only the iterations where the two
    variables are equal run: TVM generates that kernel without a word, while the loops read
    one after the other (the no-GPU path) run every pair.  A nested loop that does not use
    the outer variable — a cooperative fetch into shared memory — means the same both ways."""
    blocks = _block_names(inner.body)
    where = f" (around block {blocks[0]!r})" if blocks else ""
    a, b = thread_scope(outer)[0].name_hint, thread_scope(inner)[0].name_hint
    raise ThreadBindingError(
        f"{name}: the loop {b}{where} is bound to {tag!r}, but the loop {a} around it is "
        f"bound to {tag!r} too: on a GPU both are the same thread index, so only the "
        f"iterations with {a} == {b} would run. Bind {b} to another axis (threadIdx.y, or a "
        f"blockIdx), or fuse {a} and {b} (sch.fuse) and bind the fused loop once")


def _block_names(s) -> list:
    names: list = []

    def walk(x):
        if isinstance(x, S.BlockRealize):
            names.append(x.block.name_hint)
        if isinstance(x, S.Stmt):
            for fname in x.field_names():
                v = getattr(x, fname)
                if isinstance(v, (S.Stmt, list)):
                    walk(v)
        elif isinstance(x, list):
            for y in x:
                walk(y)

    walk(s)
    return names


def _is_zero(e) -> bool:
    return isinstance(e, IntImm) and e.value == 0


def _max_extent(old, new: PrimExpr, tag: str, var, name: str):
    if old is None:
        return new
    if isinstance(old, IntImm) and isinstance(new, IntImm):
        return old if old.value >= new.value else new
    from mlckit.ir import structural_equal

    if structural_equal(old, new):
        return old
    raise GPULimitError(
        f"{name}: the loops bound to {tag} have different symbolic extents ({old} and {new} at "
        f"the loop {var.name_hint}); one kernel launches one extent per thread axis")


def _check_limits(k: Kernel, func, name: str, target):
    attrs = dict(getattr(target, "attrs", None) or {})
    max_threads = int(attrs.get("max_threads_per_block") or attrs.get("max_num_threads")
                      or DEFAULT_MAX_THREADS)
    max_shared = int(attrs.get("max_shared_memory_per_block") or DEFAULT_MAX_SHARED)
    for tag, extent in k.extents.items():
        if isinstance(extent, IntImm) and extent.value > AXIS_LIMITS[tag]:
            raise GPULimitError(
                f"{name}: kernel {k.name} binds a loop of extent {extent.value} to {tag}, but "
                f"CUDA allows at most {AXIS_LIMITS[tag]} along {tag}; split the loop first")
    threads = [k.extents.get(f"threadIdx.{a}") for a in "xyz"]
    if all(t is None or isinstance(t, IntImm) for t in threads):
        total = math.prod(t.value for t in threads if t is not None)
        if total > max_threads:
            dims = " x ".join(f"{t.value} ({tag})" for t, tag in zip(threads, AXES[3:])
                              if t is not None)
            raise GPULimitError(
                f"{name}: kernel {k.name} has {total} threads per block ({dims}), more than the "
                f"device's limit of {max_threads}; use smaller threadIdx extents")
    used = k.shared_bytes
    if used > max_shared:
        parts = ", ".join(f"{b.name} {tuple(int(d.value) for d in b.shape)} {b.dtype}"
                          for b in k.shared)
        raise GPULimitError(
            f"{name}: kernel {k.name} needs {used} bytes of shared memory ({parts}), more than "
            f"the device's {max_shared} bytes per block; use smaller tiles")


def storage_sync_name(e) -> str | None:
    """``"shared"`` for ``T.tvm_storage_sync("shared")``, else None."""
    op = getattr(getattr(e, "op", None), "name", "")
    if op == "tir.tvm_storage_sync" and e.args and isinstance(e.args[0], StringImm):
        return e.args[0].value
    return None


def covers_launch(s, full) -> bool:
    """Whether the thread scope ``s`` covers its axis's whole launch extent ``full`` (else it
    runs under ``if tx < extent``)."""
    from mlckit.ir import structural_equal

    _, _, lo, extent = thread_scope(s)
    if not (isinstance(lo, IntImm) and lo.value == 0) or full is None:
        return False
    if isinstance(full, IntImm) and isinstance(extent, IntImm):
        return full.value == extent.value
    return structural_equal(full, extent)
