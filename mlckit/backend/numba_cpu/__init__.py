"""numba_cpu: a PrimFunc compiled to machine code through ``numba.njit``.

The PrimFunc is compacted (``tir.transform.compact_buffer_allocation``: a cache buffer shrinks
to the tile one loop iteration uses), then written as Python (the lnumpy generator, numba
flavour: parallel loops -> ``prange``, unrolled loops repeated, ``np.empty`` hoisted out of
loops where that is legal, float32 constants typed, small "local" buffers with constant
indices turned into scalar variables) and compiled by Numba for C-contiguous arrays of the buffers'
dtypes when it is built.  ``f.source`` is the generated module, for learners to read.

Caching:

- in one process, building a structurally equal PrimFunc again returns the same compiled
  function (keyed by ``mlckit.ir.structural_hash``);
- across processes, the source is written to ``$MLCKIT_CACHE_DIR/numba/<sha>.py``
  (default ``~/.cache/mlckit``; ``<sha>`` hashes the source) and compiled with Numba's
  ``cache=True``, so a second process loads the machine code instead of compiling.

Example::

    from mlckit.backend import numba_cpu
    f = numba_cpu.build(mm_relu)
    f(a, b, c)
    print(f.source)
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import os
import sys
import threading
from pathlib import Path

from mlckit.error import TVMError, TVMTypeError
from mlckit.tir import dtype as dt
from mlckit.tir.function import PrimFunc
from mlckit.tir.transform import compact_buffer_allocation

from ..codegen import NUMBA, CodegenError, GeneratedSource, func_name, generate
from ..signature import ArgumentError, Signature

__all__ = ["ArgumentError", "CodegenError", "NumbaCompileError", "NumbaFunction", "build",
           "slp_vectorizer",
           "cache_dir", "to_source"]


class NumbaCompileError(TVMError):
    """Numba could not compile the generated source (the message shows it)."""


def cache_dir() -> Path:
    """Where generated modules and Numba's cache live (``$MLCKIT_CACHE_DIR/numba``)."""
    root = os.environ.get("MLCKIT_CACHE_DIR") or os.path.join(
        os.path.expanduser("~"), ".cache", "mlckit"
    )
    return Path(root) / "numba"


def to_source(func: PrimFunc, name: str | None = None, fastmath: bool = False,
              cache: bool = True) -> str:
    """The Python module Numba compiles for ``func`` (imports, helpers, ``@njit`` function).

    Example::

        print(to_source(mm_relu))     # ... @njit(cache=True) def mm_relu(A, B, C): ...
    """
    return _module_source(generate(lower(func), NUMBA, name), fastmath, cache)


def lower(func: PrimFunc) -> PrimFunc:
    """The TIR passes run before code generation: ``compact_buffer_allocation`` (a
    ``cache_write("local")`` tile shrinks to its region; small "local" buffers with constant
    indices then become scalar variables in the generated source)."""
    return compact_buffer_allocation(func)


def _module_source(body: GeneratedSource, fastmath: bool, cache: bool) -> str:
    flags = [f"cache={cache}"]
    if body.uses_prange:
        flags.append("parallel=True")
    if fastmath:
        flags.append("fastmath=True")
    helpers_cache = "cache=True" if cache else ""
    body_text = str(body).replace("@njit(cache=True)", f"@njit({helpers_cache})")
    header = [
        f'"""PrimFunc {body.func_name!r} compiled by mlckit.backend.numba_cpu (generated)."""',
        "",
        *(["import math", ""] if body.uses_math else []),
        "import numpy as np",
        "from numba import njit" + (", prange" if body.uses_prange else ""),
        "",
        "",
    ]
    lines = body_text.splitlines()
    # the kernel is the last top-level def: decorate it
    k = max(i for i, ln in enumerate(lines) if ln.startswith("def "))
    lines.insert(k, f"@njit({', '.join(flags)})")
    return "\n".join(header + lines) + "\n"


class NumbaFunction:
    """A PrimFunc compiled by Numba: ``f(*arrays)`` checks the arguments, then runs.

    ``f.source`` is the generated Python module; ``f.dispatcher`` the Numba dispatcher;
    ``f.path`` the file it was loaded from (None when it could not be written).
    """

    def __init__(self, func: PrimFunc, name: str, fastmath: bool = False, cache: bool = True):
        self.func = func
        self.name = name
        self.fastmath = fastmath
        self.signature = Signature(func, name)
        self.body = generate(lower(func), NUMBA, name)
        self.path = None
        self.source = _module_source(self.body, fastmath, cache)
        namespace = None
        if cache:
            try:
                namespace = self._load_from_file()
            except OSError:
                namespace = None
        if namespace is None:  # no writable cache dir: compile in memory, uncached
            self.source = _module_source(self.body, fastmath, False)
            namespace = {"__name__": f"mlckit_numba_{name}"}
            exec(compile(self.source, f"<numba_cpu {name}>", "exec"), namespace)  # noqa: S102
        self.dispatcher = namespace[self.body.func_name]
        self.compile()

    def _load_from_file(self) -> dict:
        digest = hashlib.sha256(self.source.encode()).hexdigest()[:20]
        directory = cache_dir()
        directory.mkdir(parents=True, exist_ok=True)
        path = directory / f"{self.name}_{digest}.py"
        if not path.exists() or path.read_text() != self.source:
            tmp = directory / f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp"
            tmp.write_text(self.source)
            os.replace(tmp, path)
        module_name = f"mlckit_numba_{self.name}_{digest}"
        module = sys.modules.get(module_name)
        if module is None:
            spec = importlib.util.spec_from_file_location(module_name, path)
            module = importlib.util.module_from_spec(spec)
            sys.modules[module_name] = module
            spec.loader.exec_module(module)
        self.path = path
        return vars(module)

    def compile(self):
        """Compile (or load from Numba's cache) the version for C-contiguous arrays."""
        from numba import types
        from numba.core.errors import NumbaError

        sig = []
        for _pname, buf, var in self.signature.params:
            if buf is not None:
                sig.append(types.Array(_numba_dtype(types, buf.dtype), buf.ndim, "C"))
            else:
                sig.append(_numba_dtype(types, var.dtype))
        try:
            with slp_vectorizer():
                self.dispatcher.compile(tuple(sig))
        except NumbaError as err:
            raise NumbaCompileError(
                f"Numba could not compile {self.name}:\n{err}\n\nThe generated source:\n"
                f"{_numbered(self.source)}"
            ) from None

    def __call__(self, *args):
        values, _ = self.signature.check(args)
        self.dispatcher(*values)

    @property
    def py_func(self):
        return self.dispatcher.py_func

    def __repr__(self):
        return f"<numba_cpu function {self.signature.describe()}>"


@contextlib.contextmanager
def slp_vectorizer():
    """Numba's LLVM pipeline with the SLP vectorizer on, while mlckit compiles a kernel.

    Numba switched it off by default in 2023 (numba#8852, miscompilations in the LLVM of
    that time); without it the lanes of a ``T.vectorized`` loop stay scalar.  Scoped to
    mlckit's own compilations (Numba reads the setting when it builds its pass pipeline);
    an explicit ``NUMBA_SLP_VECTORIZE`` in the environment wins.

    Example::

        with slp_vectorizer():
            dispatcher.compile(signature)
    """
    from numba.core import config

    if "NUMBA_SLP_VECTORIZE" in os.environ:
        yield
        return
    with _SLP_LOCK:
        saved = config.SLP_VECTORIZE
        config.SLP_VECTORIZE = 1
        try:
            yield
        finally:
            config.SLP_VECTORIZE = saved


_SLP_LOCK = threading.RLock()


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
    key = (structural_hash(func), name, fastmath, cache)
    with _LOCK:
        for other, compiled in _CACHE.get(key, ()):
            if other is func or structural_equal(other, func):
                return compiled
    compiled = NumbaFunction(func, name, fastmath, cache)
    with _LOCK:
        _CACHE.setdefault(key, []).append((func, compiled))
    return compiled
