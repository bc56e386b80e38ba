"""numba_cpu: a PrimFunc compiled to machine code through ``numba.njit``.

The PrimFunc is lowered by TIR passes you can print (``numba_cpu.lower(f).show()``):
``compact_buffer_allocation`` (a cache buffer shrinks to the tile one loop iteration uses),
``scalarize_local_buffers`` (a small "local" tile indexed by constants becomes one-element
buffers), ``promote_invariant_elements`` (a loop-invariant element held in a one-element
buffer across the loop), then TVM's default TIR pipeline (blocks gone, buffers flat,
``T.vectorized`` loops as ``T.Ramp``/``T.Broadcast`` vectors, ``T.unroll`` loops copied
out), TVM's ``CommonSubexprElimTIR`` (an index repeated in a loop body computed once) and
``legalize_half``.  The generator then prints the lowered TIR as Python (numba flavour:
one-element "local" buffers as scalars, parallel loops -> ``prange``, a vector store as LLVM
vectors, ``C_1[ramp(i, 1, 16)] = ... + broadcast(a, 16) * B_1[ramp(j, 1, 16)]``
(``numba_cpu.vectors``; lane by lane where it is more than arithmetic), float32 constants
typed, a parameter's flat view ``flat_view(A)``: ``numba_cpu.views``, a buffer the kernel
allocates as a workspace, ``workspace_alloc`` ... ``workspace_free``: ``numba_cpu.workspace``,
so that a kernel without parallel loops, extern or Python calls is compiled without Numba's
runtime, ``_nrt=False``: ``needs_runtime``) and Numba compiles it
for C-contiguous arrays of the buffers' dtypes when it is built; a PrimFunc with
``tir.noalias`` with Numba's ``noalias`` flag (LLVM may assume its arrays never overlap, as
TVM's codegen does; a call whose written array overlaps another argument is refused).  Once
kernels of the same argument types repeat, a kernel has no CPython wrapper of its own: it
is called through the entry of its number of arguments (``numba_cpu.entry``).  Numba compiles
it through its pipeline less the passes that find nothing in generated code, its ``range``
loops compiled as counted loops (``numba_cpu.counted_range``), reusing the types of calls
on numbers found before (``numba_cpu.kernel_pipeline``).  ``f.source`` is
the generated module, for learners to read.  The generator only prints: what makes the
code fast is in the passes.

Caching:

- in one process, building a structurally equal PrimFunc again returns the same compiled
  function (keyed by ``mlckit.ir.structural_hash``);
- across processes, the source is written to ``$MLCKIT_CACHE_DIR/numba/<name>_<sha>/``
  (default ``~/.cache/mlckit``; ``<sha>`` hashes the source) and compiled with Numba's
  ``cache=True``, so a second process loads the machine code instead of compiling (without
  first installing Numba's typing and lowering registries, which only a compile needs:
  ``numba_cpu.cache_load``); the least recently used entries are evicted past
  ``MLCKIT_CACHE_MAX_MB`` (``disk_cache``).

A kernel is built with Python's cyclic garbage collector paused (``backend.collector``).

Example::

    from mlckit.backend import numba_cpu
    f = numba_cpu.build(mm_relu)
    f(a, b, c)
    print(f.source)
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib.util
import itertools
import os
import sys
import threading
import types
from pathlib import Path

import numpy as np

from mlckit.error import TVMError, TVMTypeError
from mlckit.ir.module import IRModule
from mlckit.tir import dtype as dt
from mlckit.tir.expr import IntImm
from mlckit.tir.function import PrimFunc
from mlckit.tir.op_extern import get_extern
from mlckit.tir.pipeline import get_tir_pipeline
from mlckit.tir.stmt import For, ForKind
from mlckit.tir.transform import (
    common_subexpr_elim,
    compact_buffer_allocation,
    keep_auto_unrolled_loops,
    legalize_half,
)
from mlckit.tir.transform.promote_invariant_elements import promote_invariant_elements
from mlckit.tir.transform.scalarize_local_buffers import scalarize_local_buffers

from .. import disk_cache
from ..codegen import NUMBA, CodegenError, GeneratedSource, func_name, generate
from ..collector import collector_paused
from ..extern import collect_externs, resolve_externs
from ..signature import ArgumentError, Signature, param_names
from .cache_load import load_without_registries
from .entry import enter_through_entry, native_address, ready
from .kernel_pipeline import Compiler, KernelCompiler

__all__ = ["ArgumentError", "CodegenError", "NumbaCompileError", "NumbaFunction",
           "build",
           "llvm_pipeline",
           "cache_dir", "to_source"]


class NumbaCompileError(TVMError):
    """Numba could not compile the generated source (the message shows it)."""


# Options of LLVM that mlckit switches off while it compiles, each "--name=false" (llvmlite's
# options are global to the process, so they are put back afterwards: "--name=true", LLVM's
# default on x86 and Apple cores):
# - partial and run-time loop unrolling: unrolled by 8, the naive matmul's walk down a
#   column of B becomes 8 loads each 16 KiB apart per iteration, which the CPU's stride
#   prefetcher no longer follows (1.0 GFLOP/s against 1.2 rolled; TVM's LLVM unrolled it
#   by 2).  Full unrolling of small constant loops, as TVM's LLVM does, stays on;
# - LICM's promotion of memory to registers ("enable" flag inverted: LLVM spells it
#   --disable-licm-promotion): in the tiled matmul it held the 32 elements of a row of C
#   over the loop of k_1, half of them spilled to the stack (3 GFLOP/s; 5.9 without).
#   Keeping a value in a register is the schedule's word here: the pass
#   PromoteInvariantElements holds an accumulator in a one-element "local" buffer,
#   ScalarizeLocalBuffers splits a small "local" tile into such buffers, and the generator
#   prints them as scalars (codegen_local).
_OFF_OPTIONS = ("unroll-allow-partial", "unroll-runtime")
_ON_OPTIONS = ("disable-licm-promotion",)
# written into every generated module, so that Numba's on-disk cache of code compiled
# under another pipeline is not reused
NUMBA_PASSES = ("Numba: its nopython pipeline less the passes for closures and array "
                "expressions, its range loops counted (numba_cpu.kernel_pipeline)")
PIPELINE = ("LLVM: SLP vectorizer on, no partial loop unrolling, no LICM promotion "
            "(numba_cpu.llvm_pipeline)")
ENTRY = ("called through numba_cpu.entry, shared by kernels of the same argument types, once "
         "they repeat (entry.ready); else through its own CPython wrapper")
NO_LOOP_VECTORIZER = ("LLVM: no loop vectorizer either: the lanes written out are the "
                      "vector code")


# Numba binds the C math functions its code calls to wrappers in its own helper library
# (built against an old glibc: ``expf`` through the errno/SVID compatibility wrapper); the
# C library's own entry points, which TVM's kernels call, are ~4 % faster for ``expf``
# (softmax's exp: 667 against 693 us for 256 x 1024) and return the same values.
_LIBM_FUNCTIONS = tuple(
    name + suffix
    for name in ("exp", "expm1", "log", "log10", "log1p", "pow", "sin", "cos", "tan",
                 "sinh", "cosh", "tanh", "asin", "acos", "atan", "atan2", "asinh", "acosh",
                 "atanh")
    for suffix in ("", "f")
)


@functools.cache
def _bind_libm():
    """Point the math functions of Numba-compiled code at the C library's own (Linux; once)."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes
    import ctypes.util

    import llvmlite.binding as llvm
    from numba.core.registry import cpu_target

    _ = cpu_target.target_context  # Numba installs its bindings first; these replace them
    try:
        libm = ctypes.CDLL(ctypes.util.find_library("m") or "libm.so.6")
    except OSError:
        return
    for name in _LIBM_FUNCTIONS:
        try:
            llvm.add_symbol(name, ctypes.cast(getattr(libm, name), ctypes.c_void_p).value)
        except AttributeError:
            continue


def cache_dir() -> Path:
    """Where generated modules and Numba's cache live (``$MLCKIT_CACHE_DIR/numba``, bounded:
    see ``backend.disk_cache``)."""
    return disk_cache.cache_root() / "numba"


def to_source(func: PrimFunc, name: str | None = None, fastmath: bool = False,
              cache: bool = True) -> str:
    """The Python module Numba compiles for ``func`` (imports, helpers, ``@njit`` function).

    Example::

        print(to_source(mm_relu))     # ... @njit(cache=True) def mm_relu(A, B, C): ...
    """
    body = generate(lower(func), NUMBA, name)
    externs = resolve_externs(func, body.externs, "numba", strict=False)
    return _module_source(body, fastmath, cache and not externs and not body.uses_packed,
                          externs.notes)


def lower(func: PrimFunc) -> PrimFunc:
    """The TIR the generator prints: ``keep_auto_unrolled_loops`` (the loops
    ``pragma_auto_unroll_max_step`` picks stay ``T.unroll`` loops for LLVM to unroll: a
    written-out 64-step unroll takes Numba 20 s to compile; ``sch.unroll``'s are written
    out), ``compact_buffer_allocation`` (a ``cache_write("local")`` tile shrinks to its
    region), ``scalarize_local_buffers`` (a small "local" buffer indexed by constants becomes
    one-element buffers: scalars in the source), ``promote_invariant_elements`` (a
    loop-invariant element held in a one-element "local" buffer, printed as a scalar:
    ``Y_acc``), TVM's default TIR pipeline (``tir.get_tir_pipeline``: blocks and ``T.init``
    gone, buffers flat, vectorized loops as ``T.Ramp``/``T.Broadcast``, loops unrolled),
    ``common_subexpr_elim`` (TVM runs it after the pipeline: Numba types each repeated index
    once), then ``legalize_half`` (float16 stored as uint16 bits and computed in float32:
    Numba has no float16 on a CPU).  As TVM, a ``T.vectorized`` loop of symbolic extent is refused.

    The promotion runs before the pipeline: on a reduction block it takes the ``T.init()``
    out of the loop (``Y_acc[0] = 0`` before it), where after ``LowerInitBlock`` an
    ``if k == 0`` stays in every iteration (layer_norm's rows: 0.52 against 0.28 ms).

    Example::

        numba_cpu.lower(mm_relu).show()     # Y_acc = T.decl_buffer((1,), scope="local") ...
    """
    func = keep_auto_unrolled_loops(func)
    func = scalarize_local_buffers(compact_buffer_allocation(func))
    # vectorized and unrolled loops are left to VectorizeLoop and UnrollLoop
    func = promote_invariant_elements(func, skip=_vectorized_or_unrolled)
    func = get_tir_pipeline("default")(IRModule({"main": func}))["main"]
    return legalize_half(common_subexpr_elim(func))


def _vectorized_or_unrolled(loop: For, outer: list) -> bool:
    return any(x.kind in (ForKind.VECTORIZED, ForKind.UNROLLED) for x in (*outer, loop))


def _module_source(body: GeneratedSource, fastmath: bool, cache: bool,
                   extern_notes: list = ()) -> str:
    flags = [f"cache={cache}"]
    if body.uses_prange:
        flags.append("parallel=True")
    if fastmath:
        flags.append("fastmath=True")
    runtime = needs_runtime(body)
    if not runtime:
        flags.append("_nrt=False")
    helper_flags = [flag for flag, on in (("cache=True", cache), ("_nrt=False", not runtime)) if on]
    body_text = str(body).replace("@njit(cache=True)", f"@njit({', '.join(helper_flags)})")
    header = [
        f'"""PrimFunc {body.func_name!r} compiled by mlckit.backend.numba_cpu (generated)."""',
        "",
        f"# {NUMBA_PASSES}",
        f"# {PIPELINE}",
        f"# {ENTRY}",
        *([f"# {NO_LOOP_VECTORIZER}"] if body.uses_lanes else []),
        *([f"# {NOALIAS}"] if declares_noalias(body.func) else []),
        *([] if runtime else [f"# {NO_RUNTIME}"]),
        "",
        *(["import math", ""] if body.uses_math else []),
        "import numpy as np",
        "from numba import njit" + (", prange" if body.uses_prange else "")
        + (", objmode" if body.uses_packed else ""),
        *(["from mlckit.backend.extern import call_packed"] if body.uses_packed else []),
        *(["from mlckit.backend.numba_cpu.views import flat_view"] if body.uses_flat_view
          else []),
        *([f"from mlckit.backend.numba_cpu.vectors import {', '.join(body.vector_names)}"]
          if body.vector_names else []),
        *(["from mlckit.backend.numba_cpu.workspace import workspace_alloc, workspace_free"]
          if body.uses_workspaces else []),
        "",
        *([*extern_notes, ""] if extern_notes else []),
        "",
    ]
    lines = body_text.splitlines()
    # the kernel is the last top-level def: decorate it
    k = max(i for i, ln in enumerate(lines) if ln.startswith("def "))
    lines.insert(k, f"@njit({', '.join(flags)})")
    return "\n".join(header + lines) + "\n"


_MODULES = itertools.count()

NO_RUNTIME = ("_nrt=False: no Numba runtime (reference counts); the kernel's own buffers "
              "are workspaces, freed where their scope ends (numba_cpu.workspace)")


def needs_runtime(body: GeneratedSource) -> bool:
    """Whether the kernel ``body`` is compiled with Numba's runtime (NRT): where it has
    parallel loops (Numba's ``prange`` machinery and its ``np.empty``), calls extern
    functions or Python (``T.call_packed``).  Any other kernel allocates only workspaces
    (``numba_cpu.workspace``) and runs without it: ~9 % less to compile, nothing to
    initialize when loaded from the disk cache.

    Example::

        needs_runtime(generate(lower(mm_relu), NUMBA))    # False
    """
    return body.uses_prange or body.uses_packed or bool(body.externs)


NOALIAS = ("tir.noalias: the arrays never overlap; compiled with Numba's noalias flag, "
           "as TVM's codegen marks the buffers' pointers")


def declares_noalias(func: PrimFunc) -> bool:
    """Whether ``func`` has TVM's ``tir.noalias`` (``tirx.noalias``) attribute set.

    Example::

        declares_noalias(mm_relu)    # True: T.func_attr({"tir.noalias": True})
    """
    value = func.attrs.get("tir.noalias", func.attrs.get("tirx.noalias", False))
    return bool(getattr(value, "value", value))


def _set_kernel_flags(dispatcher, noalias: bool, arity: int) -> None:
    """The Numba flags of a kernel's compiles that ``njit`` has no option for (its function
    compiler's flags hook is wrapped; when a Numba has none, the kernel compiles as a plain
    ``njit`` function: slower, the same numbers):

    - ``noalias`` (what Numba gives the kernels of its own parallel loops), for a PrimFunc
      with ``tir.noalias``: LLVM may assume the arrays' memory never overlaps, keep loads
      in registers across stores and vectorize the loops TVM's LLVM vectorizes;
    - ``no_cfunc_wrapper``: a kernel is called from Python (and the VM) only, never
      through a C function pointer, so Numba's C-callable wrapper is not built (a distinct
      ``mm_relu`` schedule: ~7 % less to compile);
    - Numba's pipeline less the passes that find nothing in a generated kernel, its
      typing reusing the types of calls on numbers (``kernel_pipeline.KernelCompiler``:
      ~20 % less to compile in one process, ~7 % in two tuning workers; the same machine
      code);
    - ``no_cpython_wrapper`` where ``dispatcher._mlckit_entry`` says so (``entry.ready``:
      kernels of these argument types repeat): nor its CPython wrapper (another ~10 %); the
      version is called through the shared entry of ``arity`` arguments
      (``numba_cpu.entry``), which is what the dispatcher calls too."""
    compiler = getattr(dispatcher, "_compiler", None)
    customize = getattr(compiler, "_customize_flags", None)
    if customize is None or getattr(compiler, "_mlckit_flags", False):
        return

    def with_kernel_flags(flags):
        flags = customize(flags)
        flags.no_cfunc_wrapper = True
        flags.no_cpython_wrapper = getattr(dispatcher, "_mlckit_entry", False)
        if noalias:
            flags.noalias = True
        return flags

    compiler._customize_flags = with_kernel_flags
    compiler._mlckit_flags = True
    if getattr(compiler, "pipeline_class", None) is Compiler:
        compiler.pipeline_class = KernelCompiler
    enter_through_entry(dispatcher, arity)


def _compile_in_pipeline(dispatcher, loop_vectorize: bool) -> None:
    """Every compile of ``dispatcher`` under ``llvm_pipeline``: the version for
    C-contiguous arrays compiled when built, and any other Numba compiles at a call (a
    read-only array is another type: compiled outside the pipeline, its lanes stayed
    scalar)."""
    if getattr(dispatcher, "_mlckit_pipeline", False):
        return  # a module loaded once, built again
    compile_signature = dispatcher.compile

    def compile_in_pipeline(sig):
        with llvm_pipeline(loop_vectorize=loop_vectorize):
            return compile_signature(sig)

    dispatcher.compile = compile_in_pipeline
    dispatcher._mlckit_pipeline = True


class NumbaFunction:
    """A PrimFunc compiled by Numba: ``f(*arrays)`` checks the arguments, then runs.

    ``f.source`` is the generated Python module; ``f.dispatcher`` the Numba dispatcher;
    ``f.address`` the compiled code's address, which ``f`` calls through the entry of its
    number of arguments (``numba_cpu.entry``) once kernels of its argument types repeat;
    ``f.path`` the file it was loaded from (None when it could not be written).
    """

    def __init__(self, func: PrimFunc, name: str, fastmath: bool = False, cache: bool = True):
        self.func = func
        self.name = name
        self.fastmath = fastmath
        self.signature = Signature(func, name)
        self.body = generate(lower(func), NUMBA, name)
        # TVM's tir.noalias: the buffers never overlap, and LLVM is told so (as TVM's
        # codegen marks their pointers): a call with overlapping arrays is refused
        self.noalias = declares_noalias(func)
        self._written = sorted(self.signature.written) if self.noalias else []
        self.path = None
        # extern functions are C function pointers or Numba functions of this process:
        # code calling them is compiled in memory, not cached on disk
        externs = resolve_externs(func, self.body.externs, "numba")
        cache = cache and not externs and not self.body.uses_packed
        self.source = _module_source(self.body, fastmath, cache, externs.notes)
        namespace = None
        if cache:
            try:
                namespace = self._load_from_file()
            except OSError:
                namespace = None
        if namespace is None:  # no writable cache dir: compile in memory, uncached
            self.source = _module_source(self.body, fastmath, False, externs.notes)
            # a module of its own in sys.modules: Numba finds the globals of an objmode
            # block (T.call_packed) through it
            module = types.ModuleType(f"mlckit_numba_{name}_{next(_MODULES)}")
            sys.modules[module.__name__] = module
            namespace = vars(module)
            namespace.update(externs.namespace(self.body.extern_names))
            exec(compile(self.source, f"<numba_cpu {name}>", "exec"), namespace)  # noqa: S102
        self.dispatcher = namespace[self.body.func_name]
        _set_kernel_flags(self.dispatcher, self.noalias, len(self.signature.params))
        load_without_registries(self.dispatcher)
        _compile_in_pipeline(self.dispatcher, loop_vectorize=not self.body.uses_lanes)
        # float16 arguments: arrays passed as their uint16 bits, scalars as float32
        self._half = [k for k, (_p, buf, var) in enumerate(self.signature.params)
                      if (buf.dtype if buf is not None else var.dtype) == "float16"]
        self.compile()

    def _load_from_file(self) -> dict:
        digest = hashlib.sha256(self.source.encode()).hexdigest()[:20]
        module, self.path = disk_cache.load_module(
            cache_dir(), f"{self.name}_{digest}", f"{self.name}.py", self.source,
            f"mlckit_numba_{self.name}_{digest}")
        return vars(module)

    def compile(self):
        """Compile (or load from Numba's cache) the version for C-contiguous arrays."""
        from numba import types
        from numba.core.errors import NumbaError

        sig = []
        for _pname, buf, var in self.signature.params:
            if buf is not None:
                sig.append(types.Array(_numba_dtype(types, _storage(buf.dtype)), buf.ndim, "C"))
            else:
                sig.append(_numba_dtype(types, _compute(var.dtype)))
        sig = tuple(sig)
        # without its CPython wrapper once kernels of these types repeat (entry.ready)
        self.dispatcher._mlckit_entry = ready(sig)
        try:
            # in llvm_pipeline (_compile_in_pipeline); bind(address, arity) when the version
            # has no wrapper (a version from Numba's disk cache is as it was compiled)
            run = self.dispatcher.compile(sig)
        except NumbaError as err:
            raise NumbaCompileError(
                f"Numba could not compile {self.name}:\n{err}\n\nThe generated source:\n"
                f"{_numbered(self.source)}"
            ) from None
        # through the entry; else Numba's dispatcher (a read-only array: a version of its own)
        self._run = run if isinstance(run, functools.partial) else self.dispatcher
        self.address = native_address(self.dispatcher.overloads[sig])

    def __call__(self, *args):
        values, _ = self.signature.check(args)
        if self._written:
            self._check_distinct(values)
        if self._half:
            values = list(values)
            for k in self._half:
                v = values[k]
                values[k] = v.view(np.uint16) if isinstance(v, np.ndarray) else np.float32(v)
        self._run(*values)

    def _check_distinct(self, values):
        """A buffer the kernel writes shares no memory with another argument (tir.noalias)."""
        for k in self._written:
            out = values[k]
            for j, other in enumerate(values):
                if j == k or not isinstance(other, np.ndarray):
                    continue
                # two arrays that each own their memory (no base) overlap only if the same
                if other is out or ((out.base is not None or other.base is not None)
                                    and np.may_share_memory(out, other)):
                    names = [p[0] for p in self.signature.params]
                    raise ArgumentError(
                        f"{self.name}(): argument {k + 1} ({names[k]}), which the kernel "
                        f"writes, shares memory with argument {j + 1} ({names[j]}); the "
                        "PrimFunc declares tir.noalias (its buffers never overlap, and the "
                        "compiled code relies on it, as TVM's does): pass a copy, e.g. "
                        f"{names[j]}.copy()")

    def unchecked_entry(self, arrays: list, may_overlap=()):
        """Numba's compiled function, to call without the argument check, when the check
        would pass ``arrays`` on unchanged; None otherwise.  ``arrays``: one ``(shape,
        numpy dtype)`` per argument, of C-contiguous, aligned, writable ``np.ndarray``s the
        caller guarantees (the VM, for the tensors it allocated and the arguments it
        checked).  Every parameter must be a buffer of that constant shape and dtype (not
        float16, which the check reinterprets).  ``may_overlap``: the positions of arguments
        that may share memory with one another (the VM: its caller's arrays); under
        ``tir.noalias`` a kernel writing one of them keeps its check.

        Example::

            run = f.unchecked_entry([((128, 128), np.dtype("float32"))] * 3)
            run(a, b, c)   # a, b, c as promised: no check, the kernel's entry only
        """
        if len(may_overlap) > 1 and any(k in self._written for k in may_overlap):
            return None
        if self._half or len(arrays) != len(self.signature.params):
            return None
        for (shape, dtype), (_pname, buf, _var) in zip(arrays, self.signature.params):
            if buf is None or np.dtype(dt.to_numpy(buf.dtype)) != dtype:
                return None
            if tuple(shape) != tuple(d.value if isinstance(d, IntImm) else None
                                     for d in buf.shape):
                return None
        return self._run

    @property
    def py_func(self):
        return self.dispatcher.py_func

    def __repr__(self):
        return f"<numba_cpu function {self.signature.describe()}>"


@contextlib.contextmanager
def llvm_pipeline(loop_vectorize: bool = True):
    """Numba's LLVM pipeline as mlckit wants it, while mlckit compiles a kernel:

    - the SLP vectorizer on: Numba switched it off by default in 2023 (numba#8852,
      miscompilations in the LLVM of that time); without it the lanes of a
      ``T.vectorized`` loop stay scalar.  An explicit ``NUMBA_SLP_VECTORIZE`` wins;
    - no partial or run-time loop unrolling by LLVM (see ``_OFF_OPTIONS``): loops are
      unrolled where the schedule says ``unroll`` (``UnrollLoop`` writes the copies out)
      and, fully, where they are small and constant, as LLVM does for TVM;
    - no promotion of memory to registers by LLVM's LICM (``_ON_OPTIONS``): values are
      held in registers where the passes hold them, as the schedule says;
    - with ``loop_vectorize=False`` (a kernel whose schedule vectorized a loop), no loop
      vectorizer: the lanes written out are the vector code, which the SLP vectorizer
      packs; the loop vectorizer would vectorize the loop around them once more, reading
      each lane with a gather (layer_norm's rows: 48 gathers, 2.6 against 4.4 GB/s);
    - ``expf`` and the other transcendental functions called from the C library itself,
      as TVM's kernels call them (see ``_LIBM_FUNCTIONS``; on Linux, once per process).

    Scoped to mlckit's own compilations: Numba reads the settings when it builds its pass
    pipeline.

    Example::

        with llvm_pipeline():
            dispatcher.compile(signature)
    """
    from numba.core import config

    with _PIPELINE_LOCK:
        _bind_libm()
        saved = config.SLP_VECTORIZE
        if "NUMBA_SLP_VECTORIZE" not in os.environ:
            config.SLP_VECTORIZE = 1
        _set_options(False)
        if not loop_vectorize:
            _set_loop_vectorizer(False)
        try:
            yield
        finally:
            config.SLP_VECTORIZE = saved
            _set_options(True)
            _set_loop_vectorizer(True)


_PIPELINE_LOCK = threading.RLock()


def _set_options(llvm_default: bool):
    """LLVM's own settings (``llvm_default``) or mlckit's for the options above."""
    import llvmlite.binding as llvm

    for option in _OFF_OPTIONS:
        llvm.set_option("mlckit", f"--{option}={str(llvm_default).lower()}")
    for option in _ON_OPTIONS:
        llvm.set_option("mlckit", f"--{option}={str(not llvm_default).lower()}")


def _set_loop_vectorizer(on: bool):
    """LLVM's loop vectorizer on (its default) or off (``--vectorize-loops``)."""
    import llvmlite.binding as llvm

    llvm.set_option("mlckit", f"--vectorize-loops={str(on).lower()}")


def _storage(dtype: str) -> str:
    """The dtype a kernel's array holds: float16 as its bits (``tir.transform.LegalizeHalf``)."""
    return "uint16" if dtype == "float16" else dtype


def _compute(dtype: str) -> str:
    """The dtype a kernel's scalar is computed in: float16 in float32."""
    return "float32" if dtype == "float16" else dtype


def _numba_dtype(types, dtype: str):
    return types.boolean if dt.is_bool(dtype) else getattr(types, dtype)


def _numbered(text: str) -> str:
    return "\n".join(f"{k:4d}  {line}" for k, line in enumerate(text.splitlines(), 1))


_CACHE: dict = {}
_LOCK = threading.Lock()


def build(func: PrimFunc, name: str | None = None, fastmath: bool = False,
          cache: bool = True) -> NumbaFunction:
    """Compile ``func`` with Numba (once per structurally equal PrimFunc in a process).

    ``fastmath=True`` lets LLVM reassociate float math (faster reductions, different
    rounding); ``cache=False`` skips the on-disk cache.

    Example::

        f = build(mm_relu); f(a, b, c); print(f.source)
    """
    from mlckit.ir import structural_equal, structural_hash

    if not isinstance(func, PrimFunc):
        raise TVMTypeError(f"numba_cpu.build expects a tir.PrimFunc, got {type(func).__name__}")
    name = name or func_name(func)
    # the registered implementations of its externs are part of what it runs
    externs = tuple((n, id(get_extern(n))) for n in sorted(collect_externs(func)))
    # structural equality ignores names, but the source and the argument checks show them:
    # a function whose parameters are named differently gets its own kernel
    key = (structural_hash(func), name, param_names(func), fastmath, cache, externs)
    with _LOCK:
        for other, compiled in _CACHE.get(key, ()):
            if other is func or structural_equal(other, func):
                return compiled
    with collector_paused():  # building allocates much, in cycles: collected once, after
        compiled = NumbaFunction(func, name, fastmath, cache)
    with _LOCK:
        _CACHE.setdefault(key, []).append((func, compiled))
    return compiled
