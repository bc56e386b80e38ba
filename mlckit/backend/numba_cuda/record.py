"""Run thread-bound TIR on the CPU as a GPU would, recording every buffer access.

``record_accesses(func, *arrays)`` lowers ``func`` as ``build(..., target="cuda")`` does
(GPU buffer compaction, the kernels, the barriers when ``sync``) and runs each kernel with
the GPU's meaning, not TIR's sequential one: every thread of every block runs the kernel
body with its own ``blockIdx``/``threadIdx``, and a loop bound to a thread axis is that
thread's index, not a loop (``for ax in T.thread_binding(64, "threadIdx.x")`` inside the
kernel is one iteration per thread, as on the device).

The threads are *lanes* of NumPy arrays: every statement runs once for all threads of all
blocks (a value is a Python number when every thread has the same one, else an array with
one entry per thread), conditions that differ between threads become masks.  Running in
lock-step is one legal schedule of the GPU's threads, so with the barriers in place the
arrays receive the kernel's real outputs.  Each load and store of a buffer is recorded for
the threads that run it: which element, in which *barrier interval* (how many
``T.tvm_storage_sync("shared")`` the threads have passed), at which access site (the
``BufferLoad`` / ``BufferStore`` of the lowered TIR) and in which dynamic execution of it
(a ``T.vectorized`` loop is one execution: one vector instruction per thread).
:mod:`.access_log` turns the records into counts, coalescing, bank conflicts and races.

Example::

    log = record_accesses(sch.mod["main"], a, b)        # b now holds the result
    log.races                                          # [] with the barriers
    record_accesses(sch.mod["main"], a, b, sync=False).races[0]
"""

from __future__ import annotations

import math

import numpy as np

from mlckit.error import TVMTypeError
from mlckit.ir.module import IRModule
from mlckit.tir import dtype as dt
from mlckit.tir import expr as E
from mlckit.tir import stmt as S
from mlckit.tir.function import PrimFunc
from mlckit.tir.transform import thread_sync

from ..codegen import func_name
from ..signature import Signature, eval_int
from .access_log import AccessLog, BufferInfo, DivergentBarrier, KernelInfo, Site
from .kernels import find_kernels, storage_sync_name
from .record_expr import ExprRunner, RecordError

__all__ = ["RecordError", "record_accesses"]

DEFAULT_MAX_ACCESSES = 20_000_000


def record_accesses(func, *arrays, sync: bool = True, target=None,
                    max_accesses: int = DEFAULT_MAX_ACCESSES) -> AccessLog:
    """Run ``func`` (a thread-bound PrimFunc, or an IRModule with one) on ``arrays`` thread by
    thread as a GPU would, writing its outputs into them, and return the :class:`AccessLog`
    of every load and store.

    ``sync=True`` inserts the barriers ``build(..., target="cuda")`` inserts; ``sync=False``
    keeps only the ``T.tvm_storage_sync`` written in ``func`` (to see the race a missing one
    causes).  ``max_accesses`` bounds the recording (use small sizes: every access of every
    thread is kept).

    Example::

        log = record_accesses(sch.mod, a, b)
        print(log)                        # counts, uncoalesced accesses, conflicts, races
    """
    func = _prim_func(func)
    name = func_name(func)
    from . import lower

    lowered = lower(func, sync=False, pipeline=False)
    find_kernels(lowered, name, target)  # the checks, before the barriers are planned
    if sync:
        lowered = thread_sync(lowered, "shared")
    kernels = find_kernels(lowered, name, target)
    values, env = Signature(func, name).check(list(arrays))
    runner = _Runner(lowered, kernels, max_accesses)
    # threads a condition switched off still compute (their results are dropped): a division
    # by zero there is no error
    with np.errstate(all="ignore"):
        runner.run(values, env)
    return runner.log()


def _prim_func(func) -> PrimFunc:
    if isinstance(func, IRModule):
        prims = [f for _, f in func.functions.items() if isinstance(f, PrimFunc)]
        mains = [f for gv, f in func.functions.items()
                 if isinstance(f, PrimFunc) and gv.name_hint == "main"]
        if len(prims) == 1 or mains:
            return prims[0] if len(prims) == 1 else mains[0]
        raise TVMTypeError("record_accesses needs one PrimFunc: the module has "
                           f"{len(prims)} and none is called 'main'; pass mod['name']")
    if not isinstance(func, PrimFunc):
        raise TVMTypeError(f"record_accesses runs a tir.PrimFunc, got {type(func).__name__}")
    return func


def _scope(buf) -> str:
    return buf.scope or "global"


class _Launch:
    """One kernel launch: its lanes (block-major) and the thread indices of each lane."""

    def __init__(self, kernel, env, index: int):
        self.name = kernel.name
        grid = [_int(e, env) for e in kernel.grid]
        block = [_int(e, env) for e in kernel.block]
        self.grid, self.block, self.index = grid, block, index
        self.n_blocks, self.n_threads = math.prod(grid), math.prod(block)
        lanes = np.arange(self.n_blocks * self.n_threads, dtype=np.int64)
        self.block_id, self.thread_id = lanes // self.n_threads, lanes % self.n_threads
        self.axis = {}
        for prefix, ids, dims in (("blockIdx", self.block_id, grid + [1, 1]),
                                  ("threadIdx", self.thread_id, block + [1, 1])):
            self.axis[f"{prefix}.x"] = ids % dims[0]
            self.axis[f"{prefix}.y"] = ids // dims[0] % dims[1]
            self.axis[f"{prefix}.z"] = ids // (dims[0] * dims[1])
        self.lanes = lanes


def _int(e, env) -> int:
    value = eval_int(e, env)
    if value is None:
        raise RecordError(f"record_accesses: the launch extent {e} is not known from the "
                          "arguments")
    return value


class _Runner(ExprRunner):
    """Runs the lowered function: the host part with plain values, each kernel lane-wise."""

    def __init__(self, func: PrimFunc, kernels: list, max_accesses: int):
        self.func = func
        self.kernels = {id(k.stmt): k for k in kernels}
        self.max_accesses = max_accesses
        self.storage: dict = {}  # id(buffer.data or buffer) -> flat array
        self.buffer_ids: dict = {}  # key -> index in self.buffer_list
        self.buffer_list: list = []
        self.sites: list = []
        self.site_of: dict = {}  # id(node) -> site index
        self.chunks: list = []  # (site, exec, interval, launch, lanes, flat)
        self.divergent: list = []  # barriers only some threads of a block reach
        self.n_recorded = 0
        self.launches: list = []
        self.launch = None
        self.interval = 0
        self.tick = 0
        self.frozen = None  # the execution id while inside a T.vectorized loop
        self.block_name = ""

    # -- entry ------------------------------------------------------------------------------
    def run(self, values, env):
        self.env = {id(v): value for v, value in env.items()}
        for param, value in zip(self.func.params, values):
            buf = self.func.buffer_map.get(param)
            if buf is None:
                self.env[id(param)] = value
                continue
            key = self._key(buf)
            self.storage[key] = value.reshape(-1)
            self._info(buf, key)
        self.mask = None
        self.stmt(self.func.body)

    def log(self) -> AccessLog:
        cols = self.chunks
        if cols:
            sizes = [len(c[4]) for c in cols]
            site, exe, interval, launch = (
                np.repeat(np.array([c[k] for c in cols], np.int64), sizes) for k in range(4))
            lanes = np.concatenate([c[4] for c in cols])
            flat = np.concatenate([c[5] for c in cols])
            block = np.empty_like(lanes)
            thread = np.empty_like(lanes)
            for k, info in enumerate(self.launches):
                sel = launch == k
                block[sel] = lanes[sel] // info.n_threads
                thread[sel] = lanes[sel] % info.n_threads
        else:
            site = exe = interval = launch = block = thread = flat = np.zeros(0, np.int64)
        return AccessLog(self.buffer_list, self.sites, self.launches, site=site, exec_id=exe,
                         interval=interval, launch=launch, block=block, thread=thread,
                         flat=flat, divergent_barriers=self.divergent)

    # -- buffers ----------------------------------------------------------------------------
    @staticmethod
    def _key(buf):
        return id(buf.data) if buf.data is not None else id(buf)

    def _info(self, buf, key) -> int:
        if key not in self.buffer_ids:
            shape = tuple(_int(d, {v: self.env[id(v)] for v in _vars(buf.shape)})
                          if not isinstance(d, E.IntImm) else d.value for d in buf.shape)
            info = BufferInfo(buf.name, _scope(buf), shape, buf.dtype,
                              dt.to_numpy(buf.dtype).itemsize)
            self.buffer_ids[key] = len(self.buffer_list)
            self.buffer_list.append(info)
        return self.buffer_ids[key]

    def _alloc(self, buf):
        key = self._key(buf)
        if key in self.storage:
            return
        index = self._info(buf, key)
        info = self.buffer_list[index]
        size = math.prod(info.shape)
        copies = 1  # a global buffer of the host part: one copy
        if info.scope == "shared":
            copies = self.launch.n_blocks  # one copy per thread block
        elif info.scope == "local":
            copies = len(self.launch.lanes)  # one per thread
        self.storage[key] = np.zeros(size * copies, dt.to_numpy(buf.dtype))

    # -- statements -------------------------------------------------------------------------
    def stmt(self, s):
        kernel = self.kernels.get(id(s))
        if kernel is not None:
            return self.run_kernel(kernel, s)
        method = getattr(self, f"stmt_{type(s).__name__}", None)
        if method is None:
            raise RecordError(f"record_accesses does not run the statement "
                              f"{type(s).__name__} (in block {self.block_name!r})")
        method(s)

    def run_kernel(self, kernel, s):
        host_env = dict(self.env)
        extent_env = {v: host_env.get(id(v)) for v in _vars(list(kernel.extents.values()))}
        self.launch = _Launch(kernel, extent_env, len(self.launches))
        self.launches.append(KernelInfo(kernel.name, tuple(self.launch.grid),
                                        tuple(self.launch.block)))
        self.interval = 0  # barrier intervals are counted per launch
        for key, index in self.buffer_ids.items():  # shared and local memory: one launch
            if self.buffer_list[index].scope in ("shared", "local"):
                self.storage.pop(key, None)
        self.mask = None
        self.stmt_For(s)
        self.launch = None
        self.env = host_env

    def stmt_SeqStmt(self, s):
        for x in s.seq:
            self.stmt(x)

    def stmt_For(self, s):
        var = id(s.loop_var)
        if s.kind == S.ForKind.THREAD_BINDING:
            tag = s.thread_binding.thread_tag if s.thread_binding is not None else ""
            index = self.launch.axis[tag]
            low, ext = self.expr(s.min), self.expr(s.extent)
            outside = (index < low) | (index >= low + ext)
            saved = self.mask
            if np.any(outside):
                self.mask = self._and(saved, ~outside)
            self.env[var] = index
            if self._any():
                self.stmt(s.body)
            self.mask = saved
            return
        low, ext = self.expr(s.min), self.expr(s.extent)
        vector = s.kind == S.ForKind.VECTORIZED and self.frozen is None
        if vector:
            self.tick += 1
            self.frozen = self.tick
        try:
            if np.ndim(low) == 0 and np.ndim(ext) == 0:
                for k in range(int(low), int(low) + int(ext)):
                    self.env[var] = k
                    self.stmt(s.body)
                return
            # bounds that differ between threads: each thread runs its own iterations
            saved = self.mask
            low_all, end_all = np.broadcast_to(low, self.launch.lanes.shape), \
                np.broadcast_to(low + ext, self.launch.lanes.shape)
            live = self._live(saved)
            if not live.any():
                return
            for k in range(int(low_all[live].min()), int(end_all[live].max())):
                self.mask = self._and(saved, (low_all <= k) & (k < end_all))
                self.env[var] = k
                if self._any():
                    self.stmt(s.body)
            self.mask = saved
        finally:
            if vector:
                self.frozen = None

    def stmt_While(self, s):
        saved = self.mask
        while True:
            cond = self.expr(s.condition)
            if np.ndim(cond) == 0:
                if not cond:
                    break
            else:
                self.mask = self._and(self.mask, np.asarray(cond, bool))
                if not self._any():
                    break
            self.stmt(s.body)
        self.mask = saved

    def stmt_IfThenElse(self, s):
        cond = self.expr(s.condition)
        if np.ndim(cond) == 0:
            if cond:
                self.stmt(s.then_case)
            elif s.else_case is not None:
                self.stmt(s.else_case)
            return
        cond = np.asarray(cond, bool)
        saved = self.mask
        self.mask = self._and(saved, cond)
        if self._any():
            self.stmt(s.then_case)
        if s.else_case is not None:
            self.mask = self._and(saved, ~cond)
            if self._any():
                self.stmt(s.else_case)
        self.mask = saved

    def stmt_BlockRealize(self, s):
        block = s.block
        saved_mask, saved_name = self.mask, self.block_name
        pred = self.expr(s.predicate)
        if np.ndim(pred) == 0:
            if not pred:
                return
        else:
            self.mask = self._and(saved_mask, np.asarray(pred, bool))
            if not self._any():
                self.mask = saved_mask
                return
        if block.name_hint != "root":  # the innermost named block: where an access is
            self.block_name = block.name_hint
        for iv, value in zip(block.iter_vars, s.iter_values):
            self.env[id(iv.var)] = self.expr(value)
        for buf in block.alloc_buffers:
            self._alloc(buf)
        if block.match_buffers:
            raise RecordError(f"record_accesses does not run T.match_buffer (block "
                              f"{block.name_hint!r})")
        if block.init is not None:
            first = True
            for iv in block.iter_vars:
                if iv.iter_type == E.IterVarType.CommReduce:
                    first = np.logical_and(first, self.env[id(iv.var)] == self.expr(iv.dom.min))
            inner = self.mask
            if np.ndim(first) == 0:
                if first:
                    self.stmt(block.init)
            else:
                self.mask = self._and(inner, np.asarray(first, bool))
                if self._any():
                    self.stmt(block.init)
                self.mask = inner
        self.stmt(block.body)
        self.mask, self.block_name = saved_mask, saved_name

    def stmt_LetStmt(self, s):
        self.env[id(s.var)] = self.expr(s.value)
        self.stmt(s.body)

    def stmt_AttrStmt(self, s):
        self.stmt(s.body)

    def stmt_DeclBuffer(self, s):
        self.stmt(s.body)

    def stmt_AssertStmt(self, s):
        cond = self.expr(s.condition)
        if not np.all(self._masked(cond, True)):
            raise RecordError(f"record_accesses: an assertion failed: {s.message}")
        self.stmt(s.body)

    def stmt_Evaluate(self, s):
        if storage_sync_name(s.value) is not None:
            self.interval += 1  # every thread of the block waits here
            if self.mask is not None:
                self._check_barrier()
            return
        self.expr(s.value)

    def stmt_BufferStore(self, s):
        value = self.expr(s.value)
        phys, lanes, flat = self.address(s, s.buffer, s.indices)
        store = self.storage[self._key(s.buffer)]
        if np.ndim(value) and lanes is not None:  # one value per lane: the active ones
            value = value[lanes]
        store[phys] = value

    def load(self, e):
        phys, lanes, flat = self.address(e, e.buffer, e.indices)
        store = self.storage[self._key(e.buffer)]
        values = store[phys]
        if lanes is None:
            return values
        out = np.zeros(len(self.launch.lanes), store.dtype)
        out[lanes] = values
        return out

    # -- addresses and the record -----------------------------------------------------------
    def address(self, node, buf, indices):
        """(positions in the buffer's storage, the active lanes or None for all, flat element
        indices) of an access, recorded."""
        if self.launch is None:
            raise RecordError(f"record_accesses: buffer {buf.name!r} is accessed outside a "
                              "kernel")
        key = self._key(buf)
        if key not in self.storage:
            raise RecordError(f"record_accesses: buffer {buf.name!r} is used before it is "
                              "allocated")
        info = self.buffer_list[self.buffer_ids[key]]
        n = len(self.launch.lanes)
        lanes = None if self.mask is None else np.flatnonzero(self.mask)
        values = []  # each index, for the active lanes
        bad = np.zeros(n if lanes is None else len(lanes), bool)
        for index, extent in zip(indices, info.shape):
            v = np.broadcast_to(np.asarray(self.expr(index), np.int64), (n,))
            v = v if lanes is None else v[lanes]
            bad |= (v < 0) | (v >= extent)  # each dimension: A[0, 70] is no A[1, 6]
            values.append(v)
        if bad.any():
            self._out_of_bounds(buf, info, indices, lanes, values, bad)
        active = np.zeros(len(bad), np.int64)
        for v, extent in zip(values, info.shape):
            active = active * extent + v
        size = math.prod(info.shape)
        lane_ids = self.launch.lanes if lanes is None else lanes
        if info.scope == "shared":
            phys = self.launch.block_id[lane_ids] * size + active
        elif info.scope == "local":
            phys = lane_ids * size + active
        else:
            phys = active
        self.record(node, buf, info, lane_ids, active)
        return phys, lanes, active

    def record(self, node, buf, info, lane_ids, flat):
        site = self.site_of.get(id(node))
        if site is None:
            site = self.site_of[id(node)] = len(self.sites)
            write = isinstance(node, S.BufferStore)
            text = str(E.BufferLoad(buf, node.indices))
            if write:
                text = f"{text} = {_short(node.value)}"
            self.sites.append(Site(site, self.buffer_ids[self._key(buf)], "write" if write
                                   else "read", text, self.block_name, self.launch.name))
        self.tick += 1
        exe = self.frozen if self.frozen is not None else self.tick
        self.n_recorded += len(lane_ids)
        if self.n_recorded > self.max_accesses:
            raise RecordError(f"record_accesses: more than {self.max_accesses} accesses; "
                              "record a smaller problem (or raise max_accesses)")
        self.chunks.append((site, exe, self.interval, self.launch.index, lane_ids,
                            np.array(flat, np.int64)))

    def _out_of_bounds(self, buf, info, indices, lanes, values, bad):
        k = int(np.flatnonzero(bad)[0])
        lane = int(k if lanes is None else lanes[k])
        block, thread = self.launch.block_id[lane], self.launch.thread_id[lane]
        where = f" in block {self.block_name!r}" if self.block_name else ""
        raise RecordError(
            f"record_accesses: in {self.launch.name}, block {_coords(block, self.launch.grid)} "
            f"thread {_coords(thread, self.launch.block)} accesses {buf.name}"
            f"[{', '.join(str(i) for i in indices)}] = {buf.name}"
            f"[{', '.join(str(int(v[k])) for v in values)}]{where}, outside {buf.name}'s "
            f"shape {info.shape}")

    def _check_barrier(self):
        """A barrier under a condition: on a GPU every thread of a block must reach it (or
        none), else the block hangs or the barrier means nothing (CUDA leaves it undefined)."""
        n = self.launch.n_threads
        reach = np.bincount(self.launch.block_id[self.mask], minlength=self.launch.n_blocks)
        partial = np.flatnonzero((reach > 0) & (reach < n))
        if len(partial):
            b = int(partial[0])
            self.divergent.append(DivergentBarrier(
                self.launch.name, _coords(b, self.launch.grid), int(reach[b]), n,
                self.block_name, len(partial)))

    # -- masks ------------------------------------------------------------------------------
    def _and(self, mask, cond):
        cond = np.broadcast_to(np.asarray(cond, bool), self.launch.lanes.shape)
        return cond.copy() if mask is None else mask & cond

    def _any(self) -> bool:
        return self.mask is None or bool(self.mask.any())

    def _live(self, mask):
        return np.ones(self.launch.lanes.shape, bool) if mask is None else mask

    def _masked(self, value, fill):
        if self.mask is None or np.ndim(value) == 0:
            return value
        return np.where(self.mask, value, fill)


def _coords(linear: int, dims) -> tuple:
    out = []
    for d in dims:
        out.append(int(linear % d))
        linear //= d
    return tuple(out)


def _short(e, limit: int = 60) -> str:
    text = str(e).splitlines()[-1]
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _vars(exprs) -> list:
    found = []

    def walk(x):
        if isinstance(x, E.Var):
            found.append(x)
        elif isinstance(x, E.PrimExpr):
            for name in x.field_names():
                walk(getattr(x, name))
        elif isinstance(x, (list, tuple)):
            for y in x:
                walk(y)

    walk(exprs)
    return found
