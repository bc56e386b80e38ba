"""lnumpy: a PrimFunc as low-level NumPy, the reference interpreter of mlckit.

The source is what the MLC course writes by hand (one ``for`` per loop, ``np.empty`` for
``T.alloc_buffer``, ``if vk == 0:`` for a reduction's init, destination passing).  Running it
checks the arguments first and every buffer access while it runs: an out-of-bounds access
raises :class:`OutOfBoundsError` naming the buffer, the indices, the loop variables' values
and the TIR statement.

Example::

    from mlckit.backend import lnumpy
    print(lnumpy.to_source(mm_relu))        # def mm_relu(A, B, C): ...
    f = lnumpy.build(mm_relu)
    f(a, b, c)                              # fills c, checking every access
"""

from __future__ import annotations

import itertools
import linecache
import math

from mlckit.error import TVMTypeError
from mlckit.ir.module import IRModule
from mlckit.tir.analysis.vector_lanes import interfering_lanes
from mlckit.tir.function import PrimFunc

from ..codegen import LNUMPY, CodegenError, GeneratedSource, func_name, generate
from ..extern import call_packed, resolve_externs
from ..signature import ArgumentError, Signature
from .runtime import SOURCES, CheckedArray, OutOfBoundsError, checked_np

__all__ = [
    "ArgumentError", "CodegenError", "GeneratedSource", "LNumpyFunction", "OutOfBoundsError",
    "build", "to_source",
]

_counter = itertools.count()


def to_source(func, name: str | None = None) -> GeneratedSource | str:
    """The lnumpy source of a PrimFunc (or of every PrimFunc of an IRModule).

    For a PrimFunc the result is a :class:`GeneratedSource` (a ``str``) that also maps each
    TIR statement to its lines: ``src.stmt_lines(stmt)``, ``src.line_to_stmt[lineno]``.

    Example::

        >>> print(to_source(relu))          # doctest: +SKIP
        def relu(A, B):
            for i in range(128):
                # block "B"
                vi = i
                B[vi] = max(A[vi], 0.0)
    """
    if isinstance(func, IRModule):
        parts = [
            str(generate(f, LNUMPY, func_name(f, gv.name_hint)))
            for gv, f in func.functions.items()
            if isinstance(f, PrimFunc)
        ]
        return "\n\n".join(parts)
    return generate(func, LNUMPY, name)


class LNumpyFunction:
    """A PrimFunc runnable as checked low-level NumPy: ``f(*arrays)`` (destination passing).

    ``f.source`` is the generated source; ``f.py_func`` the plain Python function.

    >>> from mlckit.script import ir as I, tir as T
    >>> @I.ir_module
    ... class Mod:
    ...     @T.prim_func
    ...     def copy(a: T.Buffer((4,), "float32"), b: T.Buffer((4,), "float32")):
    ...         for i in range(4):
    ...             with T.block("B"):
    ...                 vi = T.axis.spatial(4, i)
    ...                 b[vi] = a[vi]
    >>> import numpy as np
    >>> import mlckit.lnumpy
    >>> f = mlckit.lnumpy.LNumpyFunction(Mod["copy"])
    >>> a, b = np.arange(4, dtype="float32"), np.zeros(4, "float32")
    >>> f(a, b)
    >>> b
    array([0., 1., 2., 3.], dtype=float32)
    """

    def __init__(self, func: PrimFunc, name: str | None = None):
        self.func = func
        self.name = name or func_name(func)
        self.source = generate(func, LNUMPY, self.name)
        self.signature = Signature(func, self.name)
        filename = f"<lnumpy {self.name} #{next(_counter)}>"
        code = compile(self.source, filename, "exec")
        SOURCES[filename] = self.source
        linecache.cache[filename] = (len(self.source), None, self.source.splitlines(True), filename)
        namespace = {"np": checked_np, "math": math, "__name__": "mlckit_lnumpy"}
        namespace.update(resolve_externs(func, self.source.externs, "lnumpy").namespace(
            self.source.extern_names))
        if self.source.uses_packed:
            namespace["call_packed"] = call_packed
        exec(code, namespace)  # noqa: S102 - the code is generated from the IR
        self.py_func = namespace[self.source.func_name]

    def __call__(self, *args):
        values, _ = self.signature.check(args)
        wrapped = [
            CheckedArray(v, pname) if buf is not None else v
            for v, (pname, buf, _var) in zip(values, self.signature.params)
        ]
        self.py_func(*wrapped)

    def __repr__(self):
        return f"<lnumpy function {self.signature.describe()}>"


def build(func: PrimFunc, name: str | None = None) -> LNumpyFunction:
    """Compile ``func`` into a checked lnumpy callable.

    Example::

        f = build(mm_relu); f(a, b, c)
    """
    if not isinstance(func, PrimFunc):
        raise TVMTypeError(f"lnumpy.build expects a tir.PrimFunc, got {type(func).__name__}")
    interference = interfering_lanes(func)
    if interference:  # lnumpy runs the lanes one after another: not TVM's numbers
        raise CodegenError(
            f"lnumpy cannot run {func_name(func, name or 'main')}: {interference}, and lnumpy "
            "runs a T.vectorized loop one lane after another. Build it for 'llvm' (TVM's "
            "vector result) or make the loop serial (the sequential result).")
    return LNumpyFunction(func, name)
