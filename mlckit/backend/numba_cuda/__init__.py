"""numba_cuda: thread-bound TIR as ``numba.cuda`` kernels, on a GPU, on the CPU or simulated.

``mlckit.build(mod, target="cuda")`` lands here.  The PrimFunc is lowered for the GPU
(``compact_buffer_allocation(gpu=True)``: a ``"shared"`` cache shrinks to the tile of one
thread block, a ``"local"`` one to the tile of one thread; then TVM's TIR pipeline, see
:func:`cuda_pipeline`, so that the kernels print ``T.launch_thread`` and flat buffers), split into
kernels at its outermost thread-bound loops (``kernels.py``: launch configuration, the checks a GPU needs),
given barriers where threads hand shared memory to each other (the TIR pass
``tir.transform.ThreadSync("shared")``, visible in TVMScript) and written as a readable Python
module of ``@cuda.jit`` kernels plus a host function that launches them
(``source.py``).  ``f.get_source()`` shows that module in every mode.

Three ways to run it (``f.mode``):

- ``"gpu"``: a CUDA GPU is there (the driver loads and ``numba.cuda.is_available()``): the
  kernels run on it.  NumPy arguments are copied to the device and the written ones back;
  ``mlckit.nd.array(x, mlckit.cuda(0))`` arrays stay on the device.
- ``"cpu"`` (the default without a GPU, said once through the ``mlckit`` logger): the fast
  path (``fast.py``): the same lowered TIR run through ``numba_cpu``, thread blocks in
  parallel, bound loops as loops.  TIR's meaning is the sequential one, so this is the
  reference result, at the course's sizes in seconds.  ``f.cpu_source`` is what runs.
- ``"sim"``: the generated kernels on Numba's CUDA simulator, thread by thread: slow (use
  small sizes) but a proof that the GPU code is right; a schedule built without its barriers
  (``sync=False``) visibly goes wrong there.  The simulator must be chosen before anything
  imports ``numba.cuda`` (``NUMBA_ENABLE_CUDASIM=1``; ``mode="sim"`` sets it when it still
  can, see ``mlckit.runtime.gpu``).

The mode comes from ``build(..., mode=...)``, else the environment variable
``MLCKIT_CUDA_MODE`` (``gpu``, ``cpu`` or ``sim``), else ``"sim"`` when
``NUMBA_ENABLE_CUDASIM=1``, else ``"gpu"`` when there is a GPU and ``"cpu"`` when not.

Example::

    f = mlckit.build(sch.mod, target="cuda")       # sch: vector add, split and bound
    f["main"](a, b, c)
    print(f.get_source())                          # @cuda.jit def main_kernel(A, B, C): ...
"""

from __future__ import annotations

import linecache
import logging
import os
import threading

import numpy as np

from mlckit.error import TVMError, TVMTypeError, TVMValueError
from mlckit.ir.module import IRModule
from mlckit.ir.transform import Sequential
from mlckit.runtime import cuda_driver
from mlckit.tir.function import PrimFunc
from mlckit.tir.pipeline import get_tir_pipeline
from mlckit.tir.transform import compact_buffer_allocation, thread_sync

from ..codegen import CodegenError, func_name
from ..extern import collect_externs, resolve_externs
from ..signature import ArgumentError, DeviceStandIn, Signature, as_array, param_names
from .kernels import (
    GPULimitError,
    Kernel,
    MemoryVerificationError,
    ScopeError,
    ThreadBindingError,
    find_kernels,
)
from .launch import LaunchPlans, launches_only, native_arrays
from .source import cuda_source

__all__ = ["MODES", "ArgumentError", "CodegenError", "CudaCompileError", "CudaFunction",
           "GPULimitError", "Kernel", "MemoryVerificationError", "ScopeError", "ThreadBindingError", "build",
           "default_mode", "lower", "to_source"]

MODES = ("gpu", "cpu", "sim")
ENV_MODE = "MLCKIT_CUDA_MODE"
logger = logging.getLogger("mlckit")
_said_cpu = False


class CudaCompileError(TVMError):
    """``numba.cuda`` could not compile a generated kernel (the message shows the source)."""


def default_mode() -> str:
    """The mode a build gets without ``mode=``: see the module's docstring."""
    env = os.environ.get(ENV_MODE, "").strip().lower()
    if env:
        if env not in MODES:
            raise TVMValueError(f"{ENV_MODE}={env!r}: expected one of {', '.join(MODES)}")
        return env
    if cuda_driver.simulator_active():
        return "sim"
    return "gpu" if cuda_driver.has_gpu() else "cpu"


def _resolve_mode(mode) -> str:
    global _said_cpu
    if mode is None:
        mode = default_mode()
        if mode == "cpu" and not _said_cpu:
            _said_cpu = True
            logger.warning(
                "mlckit: no CUDA GPU found, so target 'cuda' runs its kernels on the CPU "
                "(thread-bound loops as loops, through Numba); get_source() still shows the "
                "numba.cuda kernels. To run those on Numba's CUDA simulator, build with "
                f"mode='sim' or set {ENV_MODE}=sim.")
    if mode not in MODES:
        raise TVMValueError(f"numba_cuda: unknown mode {mode!r}; expected one of "
                            f"{', '.join(MODES)}")
    if mode == "gpu" and not cuda_driver.has_gpu():
        raise TVMValueError("numba_cuda: mode='gpu' needs a CUDA GPU, and numba.cuda finds "
                            "none here; use mode='cpu' (fast) or mode='sim' (the simulator)")
    return mode


def lower(func: PrimFunc, sync: bool = True, pipeline: bool = True) -> PrimFunc:
    """The TIR the kernels are written from: GPU-aware buffer compaction
    (``compact_buffer_allocation(gpu=True)``), with ``pipeline`` TVM's TIR pipeline
    (:func:`cuda_pipeline`), then, with ``sync``, the barriers
    (``tir.transform.ThreadSync("shared")``).  The CPU path (``fast.py``), the recording
    (``record.py``) and the kernel checks take the TIR before the pipeline
    (``pipeline=False``): blocks and all, as the schedule wrote it.

    Example::

        numba_cuda.lower(sch.mod["main"]).show()     # ... T.tvm_storage_sync("shared") ...
    """
    func = compact_buffer_allocation(func, gpu=True)
    if pipeline:
        func = cuda_pipeline()(IRModule({"main": func}))["main"]
    return thread_sync(func, "shared") if sync else func


def cuda_pipeline() -> Sequential:
    """TVM's default TIR pipeline (``tir.get_tir_pipeline``) less ``VectorizeLoop`` (a kernel
    writes a ``T.vectorized`` loop as a loop) and ``StorageRewrite`` (its in-place reuse,
    ``rs[0] = rsqrt(red[0])`` in ``red``'s memory, assumes one thread: a statement every
    thread of a block runs would read what another thread already overwrote).  After it the
    bound loops are ``T.launch_thread``, the buffers flat ``T.allocate``, no blocks are left;
    every kernel of the tests compiles to PTX with numba-cuda (``tools/cuda_ptx_check.py``,
    no GPU needed)."""
    return Sequential([p for p in get_tir_pipeline("default").passes
                       if p.info.name not in ("VectorizeLoop", "StorageRewrite")],
                      name="numba_cuda_pipeline")


def _host_buffers(func: PrimFunc) -> list:
    """The global buffers the host part allocates (the root block's, or lowered TIR's
    ``T.allocate`` outside the kernels)."""
    from mlckit.tir import stmt as S

    from .kernels import allocated_buffer, kernel_of_loop

    body = func.body
    if isinstance(body, S.BlockRealize) and not body.block.iter_vars:
        return list(body.block.alloc_buffers)
    found = []

    def walk(s):
        if kernel_of_loop(s):
            return
        if isinstance(s, S.Allocate):
            found.append(allocated_buffer(s))
        if isinstance(s, S.SeqStmt):
            for x in s.seq:
                walk(x)
        elif isinstance(s, S.IfThenElse):
            walk(s.then_case)
            if s.else_case is not None:
                walk(s.else_case)
        elif hasattr(s, "body"):
            walk(s.body)

    walk(body)
    return found


def to_source(func: PrimFunc, name: str | None = None, sync: bool = True, target=None,
              fastmath: bool = False) -> str:
    """The Python module of ``numba.cuda`` kernels for ``func`` (without compiling it).

    Example::

        print(to_source(sch.mod["main"]))
    """
    name = name or func_name(func)
    find_kernels(lower(func, sync=False, pipeline=False), name, target)  # the checks
    printed = lower(func, sync)
    kernels = find_kernels(printed, name, target)
    return cuda_source(printed, kernels, name, _host_buffers(printed), fastmath)


def _written_params(func: PrimFunc) -> set:
    """Ids of the parameter buffers the function stores to (copied back after a launch)."""
    from mlckit.tir import stmt as S

    params = {id(b) for b in func.buffer_map.values()}
    found = set()

    def walk(x):
        if isinstance(x, S.BufferStore) and id(x.buffer) in params:
            found.add(id(x.buffer))
        if isinstance(x, (list, tuple)):
            for y in x:
                walk(y)
        elif isinstance(x, S.Stmt):
            for n in x.field_names():
                walk(getattr(x, n))

    walk(func.body)
    return found


class CudaFunction:
    """A PrimFunc built for CUDA: ``f(*arrays)`` checks the arguments, then runs the kernels
    in ``f.mode``.  ``f.source`` / ``f.get_source()``: the ``numba.cuda`` module;
    ``f.kernels``: each kernel's launch configuration; ``f.cpu_source``: what the fast path
    runs (mode ``"cpu"``)."""

    def __init__(self, func: PrimFunc, name: str, target=None, mode=None, sync: bool = True,
                 fastmath: bool = False):
        self.func = func
        self.name = name
        self.signature = Signature(func, name)
        self.lowered = lower(func, sync=False, pipeline=False)  # what the CPU path runs
        find_kernels(self.lowered, name, target)  # the checks, before any compiling
        self.mode = _resolve_mode(mode)
        lowered = lower(func, sync)
        self.kernels = find_kernels(lowered, name, target)
        self.lowered_synced = lowered
        self.host_buffers = _host_buffers(lowered)
        self.source = cuda_source(lowered, self.kernels, name, self.host_buffers, fastmath)
        self.written = _written_params(func)
        self.cpu_source = None
        self._cpu = None
        self._host = None
        self._plans = None  # launches per accepted shapes (launch.py), when the host only launches
        if self.mode == "cpu":
            from .fast import cpu_build

            self._cpu = cpu_build(self.lowered, name, fastmath)
            self.cpu_source = self._cpu.source
        else:
            self._load()

    def _load(self):
        cuda = cuda_driver.numba_cuda(simulator=self.mode == "sim")
        filename = f"<numba_cuda {self.name}>"
        linecache.cache[filename] = (len(self.source), None, self.source.splitlines(True),
                                     filename)
        if self.mode == "gpu":
            def empty(shape, dtype):
                return cuda.device_array(shape, dtype=dtype)
        else:
            def empty(shape, dtype):
                return np.empty(shape, dtype=dtype)
        namespace = {"__name__": f"mlckit_cuda_{self.name}", "empty": empty}
        pointers: list = []
        externs = collect_externs(self.lowered, pointers)
        if pointers and self.mode == "gpu":
            raise CodegenError(f"{self.name}: the kernel passes buffer addresses "
                               f"({pointers[0]}) to an extern function, which mlckit can do on "
                               "the CPU and the simulator but not in a kernel on the GPU")
        namespace.update(resolve_externs(self.func, externs, self.mode))
        exec(compile(self.source, filename, "exec"), namespace)  # noqa: S102
        self._cuda = cuda
        self._host = namespace[_host_name(self.source)]
        if launches_only(self.lowered_synced, self.kernels, self.host_buffers):
            self._plans = LaunchPlans(namespace, self.kernels)

    def get_source(self, fmt: str = "") -> str:
        """The generated ``numba.cuda`` module (kernels and host part)."""
        return self.source

    def __call__(self, *args):
        plans = self._plans
        if plans is not None:  # the hot path: arrays already where the kernels run
            arrays = native_arrays(args, self.mode)
            if arrays is not None:
                launches = plans.get(arrays)
                if launches is None:  # new shapes: the full check, then a plan for them
                    _, env = self.signature.check([_check_view(a) for a in arrays])
                    launches = plans.accept(arrays, env)
                try:
                    for launch in launches:
                        launch(*arrays)
                except Exception as err:  # noqa: BLE001 - only Numba's compile errors are ours
                    self._compile_error(err)
                    raise
                return
        checked = [_check_view(a) for a in args]
        values, _ = self.signature.check(checked)
        if self.mode == "cpu":
            host_values = [_host_value(a, v) for a, v in zip(args, values)]
            self._cpu(*[h for h, _ in host_values])
            for h, back in host_values:
                if back is not None:
                    back(h)
            return
        if self.mode == "sim":
            self._run(self._host, [_host_value(a, v)[0] for a, v in zip(args, values)])
            return
        self._run_gpu(args, values)

    def _run(self, host, values):
        try:
            host(*values)
        except Exception as err:  # noqa: BLE001 - only Numba's compile errors are ours
            self._compile_error(err)
            raise

    def _compile_error(self, err):
        """Raise a :class:`CudaCompileError` showing the source when ``err`` is Numba's."""
        from numba.core.errors import NumbaError

        if isinstance(err, NumbaError):
            raise CudaCompileError(
                f"numba.cuda could not compile {self.name}:\n{err}\n\nThe generated source:\n"
                + "\n".join(f"{k:4d}  {ln}" for k, ln in enumerate(self.source.splitlines(), 1))
            ) from None

    def _run_gpu(self, args, values):
        cuda = self._cuda
        device_values, copy_back = [], []
        for (_pname, buf, _var), arg, value in zip(self.signature.params, args, values):
            if buf is None:
                device_values.append(value)
                continue
            dev = _device_array(arg)
            if dev is None:
                dev = cuda.to_device(value)
                if id(buf) in self.written:
                    copy_back.append((dev, value))
            device_values.append(dev)
        self._run(self._host, device_values)
        for dev, host in copy_back:
            dev.copy_to_host(host)

    def __repr__(self):
        return f"<numba_cuda function {self.signature.describe()} ({self.mode})>"


def _host_name(source: str) -> str:
    lines = source.splitlines()
    return next(ln[4:ln.index("(")] for ln in reversed(lines) if ln.startswith("def "))


def _device_array(value):
    """The numba device array behind ``value`` (a device NDArray or a numba array), or None."""
    inner = getattr(value, "_mlckit_device_array", None)
    if inner is not None:
        return inner()
    if hasattr(value, "__cuda_array_interface__") and not isinstance(value, np.ndarray):
        return value
    return None


def _check_view(value):
    """What the argument check sees: a device array as a memory-less view of its shape
    (writable, as device memory is: the check refuses read-only outputs)."""
    dev = _device_array(value)
    if dev is None:
        return value
    return DeviceStandIn.of(dev.shape, str(dev.dtype))


def _host_value(arg, checked):
    """(a host array to run on, a function writing it back to the argument or None)."""
    dev = _device_array(arg)
    if dev is None:
        return checked, None
    host = dev.copy_to_host()
    return host, lambda h: dev.copy_to_device(h)


_CACHE: dict = {}
_LOCK = threading.Lock()


def build(func: PrimFunc, name: str | None = None, target=None, mode: str | None = None,
          sync: bool = True, fastmath: bool = False) -> CudaFunction:
    """Build ``func`` for CUDA (once per structurally equal PrimFunc, mode and options).

    ``mode``: ``"gpu"``, ``"cpu"`` or ``"sim"`` (default: see the module's docstring);
    ``sync=False`` leaves the barriers out (to watch a race on the simulator);
    ``target``: a ``Target`` whose ``max_threads_per_block`` / ``max_shared_memory_per_block``
    bound the kernels (default 1024 threads, 48 KiB).

    Example::

        f = build(sch.mod["main"], mode="cpu"); f(a, b, c); print(f.get_source())
    """
    from mlckit.ir import structural_equal, structural_hash

    if not isinstance(func, PrimFunc):
        raise TVMTypeError(f"numba_cuda.build expects a tir.PrimFunc, got {type(func).__name__}")
    name = name or func_name(func)
    mode_key = mode or default_mode()
    # names too: structural equality ignores them, the source and argument checks show them
    key = (structural_hash(func), name, param_names(func), str(target), mode_key, sync, fastmath)
    with _LOCK:
        for other, compiled in _CACHE.get(key, ()):
            if other is func or structural_equal(other, func):
                return compiled
    compiled = CudaFunction(func, name, target, mode, sync, fastmath)
    with _LOCK:
        _CACHE.setdefault(key, []).append((func, compiled))
    return compiled
