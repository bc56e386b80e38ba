"""Built code as TVM's runtime hands it out: ``Module`` (functions by name), ``Executable``
(what ``tvm.compile`` returns) and ``time_evaluator``'s ``BenchmarkResult``.

Example::

    ex = tvm.compile(MyModule, target="llvm")     # an Executable
    ex["mm_relu"](a, b, c)                        # a function of its module
    timer = ex.mod.time_evaluator("mm_relu", tvm.cpu(), number=10)
    print(timer(a, b, c).mean)                    # seconds per call
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from mlckit.error import TVMAttributeError, TVMTypeError

__all__ = ["BenchmarkResult", "Executable", "Module", "time_evaluator"]


@dataclass
class BenchmarkResult:
    """Timings in seconds, as TVM's: ``results`` has one mean per repeat.

    >>> from mlckit.runtime import BenchmarkResult
    >>> r = BenchmarkResult([0.25, 0.75])
    >>> r.mean, r.median, r.min, r.max
    (0.5, 0.5, 0.25, 0.75)
    """

    results: list = field(default_factory=list)
    note: str = ""  # how the timing was taken, where it matters (printed under the table)

    @property
    def mean(self) -> float:
        return statistics.fmean(self.results)

    @property
    def median(self) -> float:
        return statistics.median(self.results)

    @property
    def min(self) -> float:
        return min(self.results)

    @property
    def max(self) -> float:
        return max(self.results)

    @property
    def std(self) -> float:
        return statistics.pstdev(self.results) if len(self.results) > 1 else 0.0

    def __str__(self) -> str:
        ms = 1e3
        return (f"Execution time summary:\n {'mean (ms)':>10} {'median (ms)':>12} "
                f"{'max (ms)':>10} {'min (ms)':>10} {'std (ms)':>10}\n "
                f"{self.mean * ms:10.4f} {self.median * ms:12.4f} {self.max * ms:10.4f} "
                f"{self.min * ms:10.4f} {self.std * ms:10.4f}"
                + (f"\n {self.note}" if self.note else ""))

    __repr__ = __str__


def time_evaluator(func: Callable, dev=None, number: int = 10, repeat: int = 1,
                   min_repeat_ms: float = 0) -> Callable:
    """A timer for ``func``: ``timer(*args)`` runs it once to warm up, then ``repeat`` times
    ``number`` calls, and returns a :class:`BenchmarkResult` of seconds per call.  With
    ``min_repeat_ms``, a repeat shorter than that is run again with more calls (as TVM's
    timer: enough for the time measured, at least 1.618 times as many), and the later
    repeats keep that count.

    NumPy arrays that do not start on a 64-byte boundary (NumPy places a large array 16
    bytes into a page) are timed on aligned copies, as TVM times its own 64-byte aligned
    tensors: a vector load straddling two cache lines costs the kernel up to a third of its
    speed.  The copies are written back afterwards, and the result's ``note`` says so."""

    def evaluator(*args) -> BenchmarkResult:
        args, copies = _aligned_copies(args)
        func(*args)  # warm-up (and Numba's compilation)
        results = []
        n = max(1, number)
        for _ in range(max(1, repeat)):
            while True:
                start = time.perf_counter()
                for _ in range(n):
                    func(*args)
                if dev is not None and hasattr(dev, "sync"):
                    dev.sync()  # GPU launches return at once: wait for them
                elapsed = time.perf_counter() - start
                if elapsed * 1e3 >= min_repeat_ms or n >= 1 << 20:
                    break
                per_call_ms = max(elapsed * 1e3 / n, 1e-6)
                n = min(int(max(min_repeat_ms / per_call_ms + 1, n * 1.618)), 1 << 20)
            results.append(elapsed / n)
        if dev is not None and hasattr(dev, "sync"):
            dev.sync()
        for original, copy in copies:
            if original.flags.writeable:  # what the calls wrote, where the caller looks
                original[...] = copy
        note = (f"({len(copies)} NumPy argument(s) off a 64-byte boundary timed on aligned "
                "copies, as mlckit.nd.array allocates)") if copies else ""
        return BenchmarkResult(results, note)

    return evaluator


def _aligned_copies(args) -> tuple[list, list]:
    """``args`` with each NumPy array off a 64-byte boundary replaced by an aligned copy, and
    the (original, copy) pairs."""
    import numpy as np

    from .ndarray import ALLOC_ALIGNMENT, aligned_copy

    out, copies = [], []
    for a in args:
        if (type(a) is np.ndarray and a.size and a.flags.c_contiguous
                and a.ctypes.data % ALLOC_ALIGNMENT):
            copy = aligned_copy(a)
            copies.append((a, copy))
            a = copy
        out.append(a)
    return out, copies


class Module:
    """Built functions by name: ``mod["mm_relu"](a, b, c)``; ``mod(a, b, c)`` when there is
    one function, which also answers to ``"main"`` (TVM's entry function).
    ``mod.get_source()`` shows the generated Python.

    >>> import numpy as np
    >>> import mlckit as tvm
    >>> from mlckit import te
    >>> A = te.placeholder((3,), "float32", name="A")
    >>> B = te.compute((3,), lambda i: A[i] * 2, name="B")
    >>> mod = tvm.build(te.create_prim_func([A, B]), target="lnumpy")
    >>> b = tvm.nd.empty((3,), "float32")
    >>> mod["main"](tvm.nd.array(np.arange(3, dtype="float32")), b)
    >>> b.numpy()
    array([0., 2., 4.], dtype=float32)
    """

    def __init__(self, functions: dict, target: str, backend: str):
        self.functions = dict(functions)
        self.target = target
        self.backend = backend

    def __getitem__(self, name: str):
        return self.get_function(name)

    def get_function(self, name: str, query_imports: bool = False):
        if name in self.functions:
            return self.functions[name]
        if name == "main" and len(self.functions) == 1:
            return next(iter(self.functions.values()))
        have = ", ".join(sorted(self.functions)) or "none"
        raise TVMAttributeError(f"the module has no function {name!r} (it has: {have})")

    def __contains__(self, name: str) -> bool:
        return name in self.functions or (name == "main" and len(self.functions) == 1)

    def __call__(self, *args):
        if len(self.functions) != 1:
            raise TVMTypeError(
                "this module has several functions: call one by name, mod['name'](...)")
        return next(iter(self.functions.values()))(*args)

    @property
    def entry_name(self) -> str:
        return next(iter(self.functions))

    def get_source(self, fmt: str = "") -> str:
        return "\n\n".join(str(f.source) for f in self.functions.values())

    @property
    def imported_modules(self) -> list:
        """TVM keeps a GPU kernel's source in an imported module; here the module itself
        (``rt_mod.imported_modules[0].get_source()`` shows the kernels)."""
        return [self]

    def time_evaluator(self, func_name: str, dev=None, number: int = 10, repeat: int = 1,
                       min_repeat_ms: float = 0, f_preproc: str = "", **_ignored) -> Callable:
        """A timer for ``func_name`` (see :func:`time_evaluator`).

        Example::

            timer = mod.time_evaluator("mm_relu", tvm.cpu(), number=10, repeat=3)
            timer(a, b, c).mean     # seconds per call
        """
        return time_evaluator(self.get_function(func_name), dev, number, repeat, min_repeat_ms)

    def __repr__(self) -> str:
        return f"<mlckit runtime Module ({self.backend}): {', '.join(self.functions)}>"


class Executable:
    """What ``tvm.compile`` returns for a TIR module: ``ex.mod`` is the runtime
    :class:`Module`; ``ex["name"]`` one of its functions; ``ex(*args)`` its ``main``.

    Example::

        ex = tvm.compile(MyModule, target="llvm")
        ex["mm_relu"](a, b, c)
        ex.mod.time_evaluator("mm_relu", tvm.cpu())(a, b, c).mean
    """

    def __init__(self, mod: Module):
        self.mod = mod

    def __getitem__(self, name: str):
        return self.mod.get_function(name)

    def __call__(self, *args):
        return self.mod.get_function("main")(*args)

    def jit(self, **_ignored) -> Module:
        """The runnable module (already runnable: Numba compiles on first call)."""
        return self.mod

    def get_source(self, fmt: str = "") -> str:
        return self.mod.get_source(fmt)

    @property
    def imported_modules(self) -> list:
        return self.mod.imported_modules

    def time_evaluator(self, func_name: str, dev=None, **kwargs) -> Callable:
        return self.mod.time_evaluator(func_name, dev, **kwargs)

    def __repr__(self) -> str:
        return f"<mlckit Executable: {self.mod!r}>"
