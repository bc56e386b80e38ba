"""The checked runtime of lnumpy: arrays that check every index, and the error they raise.

The generated source is plain NumPy (``Y = np.empty(...)``, ``A[vi, vk]``): it runs unchanged
outside mlckit.  When mlckit runs it, the argument arrays are wrapped in :class:`CheckedArray`
and the ``np`` it sees is :data:`checked_np`, whose ``empty`` / ``zeros`` return checked
arrays too, so every access is bounds-checked without cluttering the source.
"""

from __future__ import annotations

import sys
import types

import numpy as np

from mlckit.error import TVMIndexError

# filename of generated code -> GeneratedSource (for error messages)
SOURCES: dict = {}


class OutOfBoundsError(TVMIndexError):
    """An lnumpy kernel accessed a buffer outside its shape.

    Attributes: ``buffer`` (name), ``indices``, ``shape``, ``loop_values`` (loop variable ->
    value), ``iter_values`` (block iterator -> value), ``statement`` (TVMScript text of the
    TIR statement), ``lineno`` (line in the lnumpy source).

    >>> import numpy as np
    >>> import mlckit.lnumpy
    >>> from mlckit.script import tir as T
    >>> @T.prim_func
    ... def shift(a: T.Buffer((4,), "float32"), b: T.Buffer((4,), "float32")):
    ...     for i in range(4):
    ...         with T.block("B"):
    ...             vi = T.axis.spatial(4, i)
    ...             b[vi] = a[vi + 1]
    >>> try:
    ...     mlckit.lnumpy.LNumpyFunction(shift)(np.zeros(4, "float32"), np.zeros(4, "float32"))
    ... except mlckit.lnumpy.OutOfBoundsError as err:
    ...     where = (err.buffer, err.indices, err.shape)
    >>> where
    ('a', (4,), (4,))
    """

    def __init__(self, message, *, buffer=None, indices=None, shape=None, loop_values=None,
                 iter_values=None, statement=None, lineno=None):
        super().__init__(message)
        self.buffer = buffer
        self.indices = indices
        self.shape = shape
        self.loop_values = loop_values or {}
        self.iter_values = iter_values or {}
        self.statement = statement
        self.lineno = lineno


class CheckedArray:
    """A NumPy array whose element accesses are bounds-checked (no negative wrap-around)."""

    __slots__ = ("array", "name", "shape", "dtype", "ndim")

    def __init__(self, array: np.ndarray, name: str):
        self.array = array
        self.name = name
        self.shape = array.shape
        self.dtype = array.dtype
        self.ndim = array.ndim

    def _check(self, key, write: bool):
        idx = key if isinstance(key, tuple) else (key,)
        shape = self.shape
        if len(idx) == len(shape):
            for k, n in zip(idx, shape):
                if not (isinstance(k, (int, np.integer)) and 0 <= k < n
                        or _lanes_in_range(k, n)):
                    break
            else:
                return
        _raise_oob(self, idx, write)

    def __getitem__(self, key):
        if isinstance(key, slice):  # b[0:8]: a leading part of b's memory
            key = (key,)
        if isinstance(key, tuple) and any(isinstance(k, slice) for k in key):
            return self._region(key)
        self._check(key, False)
        return self.array[key]

    def _region(self, key):
        """A checked view of a region (a T.match_buffer of a tile): indices and bounds in
        range, else an out-of-bounds error naming the buffer."""
        if any(isinstance(k, slice) and k.step is not None for k in key):
            # not a region: the lanes of a vector load, which give their step (A[i, 0:4:1])
            self._check(key, False)
            return self.array[key]
        for k, n in zip(key, self.shape):
            if isinstance(k, slice):
                ok = 0 <= k.start <= k.stop <= n
            else:
                ok = isinstance(k, (int, np.integer)) and 0 <= k < n
            if not ok or len(key) != len(self.shape):
                _raise_oob(self, key, False)
        return CheckedArray(self.array[key], self.name)

    def __setitem__(self, key, value):
        self._check(key, True)
        self.array[key] = value

    def reshape(self, shape):
        return CheckedArray(self.array.reshape(shape), self.name)

    def __array__(self, dtype=None, copy=None):
        return self.array if dtype is None else self.array.astype(dtype)

    def __repr__(self):
        return f"CheckedArray({self.name}, shape={self.shape}, dtype={self.dtype})"


def _lanes_in_range(k, n: int) -> bool:
    """The lanes of a vector access (a slice with a positive step, or an integer array of
    indices) all in ``[0, n)``."""
    if isinstance(k, slice):
        lanes = range(k.start, k.stop, k.step or 1)
        return (isinstance(k.start, (int, np.integer)) and (k.step or 1) > 0 and len(lanes) > 0
                and k.start >= 0 and lanes[-1] < n)
    if isinstance(k, np.ndarray) and k.dtype.kind in "iu":
        return k.size > 0 and int(k.min()) >= 0 and int(k.max()) < n
    return False


def _raise_oob(arr: CheckedArray, idx: tuple, write: bool):
    frame = sys._getframe(2)
    src = None
    while frame is not None:
        src = SOURCES.get(frame.f_code.co_filename)
        if src is not None:
            break
        frame = frame.f_back
    values = tuple(int(k) if isinstance(k, (int, np.integer)) else k for k in idx)
    kind = "write to" if write else "read of"
    lines = []
    loop_values, iter_values, statement, lineno, line_text = {}, {}, None, None, None
    fname = "kernel"
    if src is not None:
        fname = src.func_name
        lineno = frame.f_lineno
        loops, iters = src.line_context.get(lineno, ((), ()))
        local = frame.f_locals
        for var_name, value in local.items():  # the name the generated code gives the array
            if value is arr:
                arr.name = var_name
                break
        loop_values = {n: _plain(local[n]) for n in loops if n in local}
        iter_values = {n: _plain(local[n]) for n in iters if n in local}
        stmt = src.line_to_stmt.get(lineno)
        statement = _stmt_text(stmt) if stmt is not None else None
        line_text = src.line(lineno).strip()
    if len(idx) != len(arr.shape):
        why = f"{arr.name} has {len(arr.shape)} dimension(s) but is indexed with {len(idx)}"
    else:
        bad = [
            f"index {d} is {v!r}, not in [0, {n})"
            for d, (v, n) in enumerate(zip(values, arr.shape))
            if not (isinstance(v, int) and 0 <= v < n)
        ]
        why = "; ".join(bad)
    access = f"{arr.name}[{', '.join(map(repr, values))}]"
    lines.append(f"lnumpy {fname}: out-of-bounds {kind} buffer {arr.name}: {access} but "
                 f"{arr.name} has shape {tuple(arr.shape)} ({why})")
    if loop_values:
        lines.append("  loop variables:  " + ", ".join(f"{k}={v}" for k, v in loop_values.items()))
    if iter_values:
        lines.append("  block iterators: " + ", ".join(f"{k}={v}" for k, v in iter_values.items()))
    if statement:
        lines.append(f"  TIR statement:   {statement}")
    if line_text:
        lines.append(f"  lnumpy line {lineno}: {line_text}")
    raise OutOfBoundsError(
        "\n".join(lines), buffer=arr.name, indices=values, shape=tuple(arr.shape),
        loop_values=loop_values, iter_values=iter_values, statement=statement, lineno=lineno,
    )


def _plain(v):
    return int(v) if isinstance(v, (int, np.integer)) else v


def _stmt_text(stmt) -> str:
    """TVMScript of a statement, without the declarations the printer adds for free names."""
    from mlckit.tir.stmt import BufferStore

    try:
        text = stmt.script()
    except Exception:  # noqa: BLE001 - best effort in an error message
        return type(stmt).__name__
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if isinstance(stmt, BufferStore):
        return lines[-1].strip() if lines else text
    decl = ("= T.Buffer(", "= T.int32()", "= T.int64()", "= T.float32()", "= T.float64()",
            "= T.bool()")
    body = [ln for ln in lines if not any(d in ln for d in decl)]
    return (body[0] if body else text).strip()


def _empty(shape, dtype=float, **kwargs):
    return CheckedArray(np.empty(shape, dtype=dtype, **kwargs), "alloc")


def _zeros(shape, dtype=float, **kwargs):
    return CheckedArray(np.zeros(shape, dtype=dtype, **kwargs), "alloc")


class _CheckedNumpy(types.ModuleType):
    """``numpy`` as generated lnumpy code sees it: allocations come back checked."""

    def __getattr__(self, name):
        return getattr(np, name)


checked_np = _CheckedNumpy("numpy")
checked_np.empty = _empty
checked_np.zeros = _zeros
