"""Argument checks shared by the backends: count, array-ness, rank, dtype and shape.

Every compiled kernel checks its arguments against the PrimFunc's buffers *before* it runs,
so a learner passing the wrong array gets a sentence, not a crash or silent garbage.
Symbolic shape variables (``n`` in ``T.Buffer((n, 128))``) are bound from the first buffer
that has them as a whole dimension and must agree everywhere else.

Example::

    sig = Signature(mm_relu)
    arrays = sig.check([a, b, c])     # NumPy arrays (NDArrays unwrapped), or ArgumentError
"""

from __future__ import annotations

import numpy as np

from mlckit.error import TVMError
from mlckit.tir import dtype as dt
from mlckit.tir.expr import (
    Add,
    FloorDiv,
    FloorMod,
    IntImm,
    Max,
    Min,
    Mul,
    PrimExpr,
    Sub,
    Var,
)
from mlckit.tir.function import PrimFunc


class ArgumentError(TVMError, TypeError, ValueError):
    """A kernel was called with the wrong number, kind, shape or dtype of arguments.

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
    >>> try:
    ...     f(np.zeros(4, "float32"), np.zeros(3, "float32"))
    ... except mlckit.lnumpy.ArgumentError as err:
    ...     print(err)
    copy(): argument 2 (b) does not match its buffer T.Buffer((4,), "float32"): dimension 0 is 3, expected 4 (its shape is (3,))
    """


# -- the one wording of an argument check (built kernels and the VM) --------------------------
def mismatch(who: str, expected: str, detail: str) -> str:
    """``<who> does not match <expected>: <detail>``, as both a built kernel and the VM say it.

    Example::

        mismatch("main(): argument 1 (A)", 'its buffer T.Buffer((4,), "float32")',
                 dtype_detail("float32", "float64"))
    """
    return f"{who} does not match {expected}: {detail}"


def ndim_detail(expected: int, shape) -> str:
    """``expected 2 dimensions, got 1 (its shape is (4,))``."""
    return (f"expected {expected} dimension{'s' if expected != 1 else ''}, got {len(shape)} "
            f"(its shape is {tuple(int(d) for d in shape)})")


def dtype_detail(expected, got) -> str:
    """``expected dtype float32, got float64``."""
    return f"expected dtype {expected}, got {got}"


def dim_detail(axis: int, got: int, expected, shape=None) -> str:
    """``dimension 1 is 785, expected 784 (its shape is (3, 785))``."""
    note = f" (its shape is {tuple(int(d) for d in shape)})" if shape is not None else ""
    return f"dimension {axis} is {got}, expected {expected}{note}"


def _buffer_text(buf) -> str:
    return f'its buffer T.Buffer({_shape_text(buf.shape)}, "{buf.dtype}")'


def _shape_text(shape) -> str:
    return "(" + ", ".join(_expr_text(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"


def _expr_text(e) -> str:
    if isinstance(e, IntImm):
        return str(e.value)
    if isinstance(e, Var):
        return e.name_hint
    try:
        return e.script()
    except Exception:  # noqa: BLE001 - best effort for a message
        return str(e)


def eval_int(e: PrimExpr, env: dict) -> int | None:
    """Value of an integer shape expression given ``env`` (Var -> int); None if unknown."""
    if isinstance(e, IntImm):
        return int(e.value)
    if isinstance(e, Var):
        return env.get(e)
    ops = {
        Add: lambda a, b: a + b, Sub: lambda a, b: a - b, Mul: lambda a, b: a * b,
        FloorDiv: lambda a, b: a // b, FloorMod: lambda a, b: a % b, Min: min, Max: max,
    }
    fn = ops.get(type(e))
    if fn is None:
        return None
    a, b = eval_int(e.a, env), eval_int(e.b, env)
    if a is None or b is None:
        return None
    return fn(a, b)


def as_array(value):
    """The NumPy array behind ``value`` (an ndarray, or an NDArray without copying)."""
    if isinstance(value, np.ndarray):
        return value
    inner = getattr(value, "_mlckit_numpy_view", None)
    if inner is not None:
        return inner()
    return None


class DeviceStandIn(np.ndarray):
    """What the check sees for an array in another memory (a GPU's): its shape and dtype
    without its data (a broadcast of one zero).  Its layout is the device array's own, so
    the contiguity step passes it as it is.

    Example::

        stand_in = DeviceStandIn.of((128, 128), "float32")
    """

    @classmethod
    def of(cls, shape, dtype) -> DeviceStandIn:
        # writable, as device memory is: the check refuses read-only outputs
        zero = np.zeros((), dtype=np.dtype(dtype))
        return np.lib.stride_tricks.as_strided(zero, tuple(shape), (0,) * len(shape),
                                               writeable=True).view(cls)


class Signature:
    """What a PrimFunc expects of its arguments, and the check that enforces it."""

    def __init__(self, func: PrimFunc, name: str = "main"):
        self.func = func
        self.name = name
        self.params = []  # (python name, buffer or None, var)
        for p in func.params:
            buf = func.buffer_map.get(p)
            self.params.append((buf.name if buf is not None else p.name_hint, buf, p))
        self.written = written_params(func)  # the arrays the kernel writes must be writable
        # the last accepted (shapes, dtypes) of all-array calls, and the symbolic values they
        # gave: a call with the same arrays' shapes and dtypes passes without a second check
        self._cacheable = all(buf is not None for _, buf, _ in self.params)
        self._accepted: tuple | None = None

    def describe(self) -> str:
        parts = []
        for pname, buf, var in self.params:
            if buf is not None:
                parts.append(f"{pname}: {_shape_text(buf.shape)} {buf.dtype}")
            else:
                parts.append(f"{pname}: {var.dtype} scalar")
        return f"{self.name}({', '.join(parts)})"

    def check(self, args) -> tuple[list, dict]:
        """Check ``args``; return the NumPy arrays / scalars to call with and the values of the
        symbolic variables (Var -> int).  Raises :class:`ArgumentError` naming the problem.

        Checked once per signature: when every argument is a NumPy array with the shapes,
        dtypes and writability of the last call that passed, the same verdict is given without
        re-checking."""
        key = None
        if self._cacheable:
            # writability is part of the key: a verdict may depend on it (an output buffer)
            # and so is contiguity: a view is copied, or refused where it is written
            key = tuple([(a.shape, a.dtype, a.flags.writeable, a.flags.c_contiguous)
                         for a in args if type(a) is np.ndarray])
            accepted = self._accepted
            if accepted is not None and key == accepted[0] and len(key) == len(self.params):
                return list(args), accepted[1]
        values, env = self._check(args)
        if key is not None and len(key) == len(self.params) and all(k[3] for k in key):
            self._accepted = (key, env)
        return values, env

    def _check(self, args) -> tuple[list, dict]:
        n = len(self.params)
        if len(args) != n:
            names = ", ".join(p[0] for p in self.params)
            raise ArgumentError(
                f"{self.name}() takes {n} argument{'s' if n != 1 else ''} ({names}) but "
                f"{len(args)} {'was' if len(args) == 1 else 'were'} given; "
                f"the signature is {self.describe()}"
            )
        env: dict = {}
        origin: dict = {}
        out = []
        # scalar parameters first: they may give symbolic sizes their values
        for k, (pname, buf, var) in enumerate(self.params):
            if buf is None:
                value = self.scalar(k, pname, var, args[k])
                env[var] = value
                origin[var] = f"the scalar argument {pname}"
        for k, (pname, buf, var) in enumerate(self.params):
            if buf is None:
                out.append(_np_scalar(var.dtype, env[var]))
                continue
            arr = as_array(args[k])
            where = f"{self.name}(): argument {k + 1} ({pname})"
            if arr is None:
                raise ArgumentError(
                    f"{where} must be a NumPy array or mlckit.nd.NDArray of shape "
                    f"{_shape_text(buf.shape)} and dtype {buf.dtype}, got {type(args[k]).__name__}"
                )
            if arr.ndim != len(buf.shape):
                raise ArgumentError(mismatch(where, _buffer_text(buf),
                                             ndim_detail(len(buf.shape), arr.shape)))
            want = dt.to_numpy(buf.dtype)
            if arr.dtype != want:
                raise ArgumentError(mismatch(
                    where, _buffer_text(buf), dtype_detail(buf.dtype, arr.dtype)
                    + f" (convert it with .astype('{buf.dtype}'))"))
            if k in self.written and not arr.flags.writeable:
                layout = _view_copy_layout(arr)
                if layout is not None:
                    raise ArgumentError(
                        f"{where} was given to the VM as {layout} of shape "
                        f"{tuple(arr.shape)}, not a compact (C-contiguous) array, but "
                        f"{self.name} writes into {pname} in place: the result would go into "
                        "the VM's compact copy, not into your array (TVM refuses non-compact "
                        "arrays too).  Pass a compact array (np.ascontiguousarray(...))")
                raise ArgumentError(
                    f"{where} is read-only, but {self.name} writes its result into {pname}: "
                    f"pass a writable array (for example {pname}.copy(), or np.empty(...))"
                )
            for axis, dim in enumerate(buf.shape):
                if isinstance(dim, Var) and dim not in env:
                    env[dim] = int(arr.shape[axis])
                    origin[dim] = f"{pname}.shape[{axis}]"
            for axis, dim in enumerate(buf.shape):
                expect = eval_int(dim, env)
                got = int(arr.shape[axis])
                if expect is None:
                    raise ArgumentError(
                        f"{where}: cannot determine the size {_expr_text(dim)} of dimension {axis}"
                    )
                if expect != got:
                    if isinstance(dim, IntImm):
                        why = dim_detail(axis, got, expect, arr.shape)
                    elif isinstance(dim, Var):
                        why = (f"dimension {axis} is {got}, but the symbolic size "
                               f"{dim.name_hint} = {expect} (from {origin[dim]}) (its shape is "
                               f"{tuple(arr.shape)})")
                    else:
                        why = (f"dimension {axis} is {got}, but {_expr_text(dim)} = {expect} "
                               f"(its shape is {tuple(arr.shape)})")
                    raise ArgumentError(mismatch(where, _buffer_text(buf), why))
            if not arr.flags.c_contiguous and not isinstance(arr, DeviceStandIn):
                arr = self._compact(k, pname, arr, where)
            out.append(arr)
        return out, env

    def _compact(self, k, pname, arr, where):
        """A C-contiguous array with ``arr``'s values: a copy of an input that is a view (a
        kernel indexes its buffers as compact rows, as TVM's), a refusal for a view the
        kernel writes (the result would go into the copy, not into the caller's array)."""
        if k in self.written:
            raise ArgumentError(
                f"{where} is {_layout_text(arr)}, not a compact (C-contiguous) array, but "
                f"{self.name} writes its result into {pname}: the result would go into a "
                f"copy, not into your array.  Pass a compact array (np.empty(...), or "
                f"np.ascontiguousarray(...)) and copy the result into the view afterwards")
        return np.ascontiguousarray(arr)

    def scalar(self, k, pname, var, value):
        where = f"{self.name}(): argument {k + 1} ({pname})"
        if isinstance(value, np.ndarray) and value.shape == ():
            value = value.item()
        if dt.is_float(var.dtype):
            if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool):
                return float(value)
        elif dt.is_bool(var.dtype):
            if isinstance(value, (bool, np.bool_, int, np.integer)):
                return bool(value)
        elif isinstance(value, (int, np.integer)) and not isinstance(value, bool):
            info = np.iinfo(dt.to_numpy(var.dtype))
            if not info.min <= int(value) <= info.max:
                raise ArgumentError(f"{where} is {int(value)}, which does not fit in "
                                    f"{var.dtype} ([{info.min}, {info.max}])")
            return int(value)
        raise ArgumentError(f"{where} must be a {var.dtype} scalar, got {type(value).__name__}")


# Copies the VM made of views it was given (id -> (weak reference, what the view was)):
# read-only, so that a kernel writing one is refused instead of writing a copy silently.
_VIEW_COPIES: dict = {}


def compact_copy(view: np.ndarray) -> np.ndarray:
    """A read-only C-contiguous copy of ``view`` for a VM argument (TVM's kernels refuse
    non-compact arrays; the VM copies an input once).  A kernel that would write it — an
    in-place call — is refused with a message naming the view, not run on the copy.

    Example::

        x = compact_copy(a[:, ::2])        # x.flags.writeable is False
    """
    import weakref

    copy = np.ascontiguousarray(view)
    copy.flags.writeable = False
    key = id(copy)
    _VIEW_COPIES[key] = (weakref.ref(copy, lambda _r: _VIEW_COPIES.pop(key, None)),
                         _layout_text(view))
    return copy


def _view_copy_layout(arr) -> str | None:
    """What kind of view ``arr`` was copied from by ``compact_copy``, or None."""
    found = _VIEW_COPIES.get(id(arr))
    return found[1] if found is not None and found[0]() is arr else None


def written_params(func: PrimFunc) -> set[int]:
    """Positions of the parameters whose buffers the body stores into (also through a
    ``T.match_buffer`` view of them)."""
    from mlckit.ir.node import Node
    from mlckit.tir.buffer import MatchBufferRegion
    from mlckit.tir.stmt import BufferStore

    stored: list = []
    views: list = []  # (view buffer, source buffer)

    def walk(x):
        if isinstance(x, BufferStore):
            stored.append(x.buffer)
        elif isinstance(x, MatchBufferRegion):
            views.append((x.buffer, x.source.buffer))
        if isinstance(x, Node):
            for name in type(x).field_names():
                walk(getattr(x, name))
        elif isinstance(x, (list, tuple)):
            for y in x:
                walk(y)

    walk(func.body)

    def same(a, b) -> bool:
        return a is b or (a.data is not None and a.data is b.data)

    changed = True
    while changed:  # a store into a view writes its source
        changed = False
        for view, source in views:
            if any(same(view, b) for b in stored) and not any(same(source, b) for b in stored):
                stored.append(source)
                changed = True
    return {k for k, p in enumerate(func.params)
            if (buf := func.buffer_map.get(p)) is not None and any(same(buf, b) for b in stored)}


def _layout_text(arr: np.ndarray) -> str:
    """What kind of view a non-contiguous ``arr`` is, in words."""
    strides = tuple(int(s) for s in arr.strides)
    if any(s == 0 for s, n in zip(strides, arr.shape) if n > 1):
        kind = "a broadcast view (a stride of 0)"
    elif any(s < 0 for s in strides):
        kind = "a reversed view (a negative stride)"
    elif arr.flags.f_contiguous:
        kind = "a Fortran-order (column-major) array, a transpose for example"
    elif arr.ndim >= 2 and abs(strides[-1]) > abs(strides[0]):
        kind = "a transposed view"
    else:
        kind = "a strided view (a slice with a step)"
    return f"{kind} with strides {strides}"


def _np_scalar(dtype: str, value):
    return dt.to_numpy(dtype).type(value)
