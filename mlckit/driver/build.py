"""``mlckit.build``: compile PrimFuncs into a runtime module of callables (TVM's ``tvm.build``).

Targets: ``"llvm"`` and ``"numba"`` (also ``"llvm -mcpu=..."``, ``"cpu"``) select the Numba
CPU backend; ``"lnumpy"`` the checked low-level NumPy reference.  Functions are called
destination-passing style with NumPy arrays or ``mlckit.nd`` arrays.

Example::

    import mlckit as tvm
    rt_mod = tvm.build(MyModule, target="llvm")
    rt_mod["mm_relu"](a_nd, b_nd, c_nd)
    timer = rt_mod.time_evaluator("mm_relu", tvm.cpu(), number=10)
    print(timer(a_nd, b_nd, c_nd).mean)
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from mlckit.ir.module import IRModule
from mlckit.tir.function import PrimFunc

__all__ = ["BenchmarkResult", "Module", "build", "register_backend"]


def _build_numba(func, name, **options):
    from mlckit.backend import numba_cpu

    return numba_cpu.build(func, name, **options)


def _build_lnumpy(func, name, **options):
    from mlckit.backend import lnumpy

    if options:
        raise TypeError(f"the lnumpy target takes no options, got {sorted(options)}")
    return lnumpy.build(func, name)


# backend name -> builder(func, name, **options) -> callable with .source
BACKENDS: dict[str, Callable] = {"numba_cpu": _build_numba, "lnumpy": _build_lnumpy}
# target kind -> backend name
TARGETS: dict[str, str] = {"llvm": "numba_cpu", "numba": "numba_cpu", "cpu": "numba_cpu",
                           "c": "numba_cpu", "numba_cpu": "numba_cpu", "lnumpy": "lnumpy"}


def register_backend(name: str, builder: Callable, targets=()) -> None:
    """Make ``builder(func, name, **options)`` the backend ``name`` for the target kinds
    ``targets`` (how ``numba_cuda`` plugs in ``"cuda"``)."""
    BACKENDS[name] = builder
    for t in targets:
        TARGETS[t] = name


def _target_kind(target) -> str:
    if target is None:
        return "llvm"
    kind = getattr(getattr(target, "kind", None), "name", None)
    text = kind if kind is not None else str(target)
    return text.split()[0].lower() if text.strip() else "llvm"


@dataclass
class BenchmarkResult:
    """Timings in seconds, as TVM's: ``results`` has one mean per repeat."""

    results: list = field(default_factory=list)

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
                f"{self.min * ms:10.4f} {self.std * ms:10.4f}")

    __repr__ = __str__


class Module:
    """Built functions by name: ``mod["mm_relu"](a, b, c)``; ``mod(a, b, c)`` when there is
    one function.  ``mod.get_source()`` shows the generated Python."""

    def __init__(self, functions: dict, target: str, backend: str):
        self.functions = dict(functions)
        self.target = target
        self.backend = backend

    def __getitem__(self, name: str):
        return self.get_function(name)

    def get_function(self, name: str, query_imports: bool = False):
        try:
            return self.functions[name]
        except KeyError:
            have = ", ".join(sorted(self.functions)) or "none"
            raise AttributeError(f"the module has no function {name!r} (it has: {have})") from None

    def __contains__(self, name: str) -> bool:
        return name in self.functions

    def __call__(self, *args):
        if len(self.functions) != 1:
            raise TypeError(
                "this module has several functions: call one by name, mod['name'](...)"
            )
        return next(iter(self.functions.values()))(*args)

    @property
    def entry_name(self) -> str:
        return next(iter(self.functions))

    def get_source(self, fmt: str = "") -> str:
        return "\n\n".join(str(f.source) for f in self.functions.values())

    def time_evaluator(self, func_name: str, dev=None, number: int = 10, repeat: int = 1,
                       min_repeat_ms: float = 0, f_preproc: str = "", **_ignored) -> Callable:
        """A timer for ``func_name``: ``timer(*args)`` runs it once to warm up, then
        ``repeat`` times ``number`` calls, and returns a :class:`BenchmarkResult`.

        Example::

            timer = mod.time_evaluator("mm_relu", tvm.cpu(), number=10, repeat=3)
            timer(a, b, c).mean     # seconds per call
        """
        func = self.get_function(func_name)

        def evaluator(*args) -> BenchmarkResult:
            func(*args)  # warm-up
            results = []
            for _ in range(max(1, repeat)):
                n = max(1, number)
                while True:
                    start = time.perf_counter()
                    for _ in range(n):
                        func(*args)
                    elapsed = time.perf_counter() - start
                    if elapsed * 1e3 >= min_repeat_ms or n >= 1 << 20:
                        break
                    n *= 2
                results.append(elapsed / n)
            if dev is not None and hasattr(dev, "sync"):
                dev.sync()
            return BenchmarkResult(results)

        return evaluator

    def __repr__(self) -> str:
        return f"<mlckit runtime Module ({self.backend}): {', '.join(self.functions)}>"


def build(func_or_mod, target="llvm", name: str | None = None, **options) -> Module:
    """Compile a PrimFunc or the PrimFuncs of an IRModule for ``target``.

    ``target``: ``"llvm"`` / ``"numba"`` (Numba CPU) or ``"lnumpy"`` (checked reference).
    ``options`` go to the backend (numba: ``fastmath=True``, ``cache=False``).

    Example::

        f = mlckit.build(mm_relu, target="llvm")
        f["mm_relu"](a, b, c)      # or f(a, b, c): it has one function
    """
    kind = _target_kind(target)
    backend = TARGETS.get(kind)
    if backend is None:
        known = ", ".join(sorted(TARGETS))
        raise ValueError(f"unknown target {str(target)!r} (known targets: {known})")
    builder = BACKENDS[backend]
    if isinstance(func_or_mod, PrimFunc):
        from mlckit.backend.codegen import func_name

        fname = name or func_name(func_or_mod)
        funcs = {fname: func_or_mod}
    elif isinstance(func_or_mod, IRModule):
        funcs = {}
        for gv, func in func_or_mod.functions.items():
            if not isinstance(func, PrimFunc):
                raise TypeError(
                    f"mlckit.build compiles TIR only, but the IRModule has the "
                    f"{type(func).__name__} {gv.name_hint!r}: use relax.build for Relax"
                )
            funcs[gv.name_hint] = func
    else:
        raise TypeError(
            f"mlckit.build expects a tir.PrimFunc or an IRModule, got {type(func_or_mod).__name__}"
        )
    built = {fname: builder(func, fname, **options) for fname, func in funcs.items()}
    return Module(built, str(target), backend)
