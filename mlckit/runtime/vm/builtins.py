"""The VM's builtin functions (``vm.builtin.*``, ``relax.run.*``), registered in the global
function registry under TVM's names.

Run-time values: tensors are NumPy arrays inside the VM (NDArrays at its boundary), shapes
are ``ShapeTuple``, prim values Python ints / floats, tuples Python tuples.

The checks take the error-context string that ``VMShapeLower`` wrote
(``ErrorContext(fn=main, loc=param[0], param=x, annotation=...)``) and turn it into a
message naming the function, the argument, the dimension and the values seen::

    main: argument 'x' (param[0]) does not match its annotation R.Tensor((n, 784), "float32"):
    dimension 1 is 785, expected 784 (its shape is (3, 785))
"""

from __future__ import annotations

import re
import sys

import numpy as np

from mlckit.error import TVMValueError
from mlckit.ffi.registry import register_func
from mlckit.runtime.arguments import dim_detail, dtype_detail, mismatch, ndim_detail

from ..ndarray import aligned_empty
from .executable import DataType, ShapeTuple
from .memory import is_tensor


class VMStructInfoError(TVMValueError):
    """A value does not match its annotation at run time (argument, match_cast, return)."""


def builtin(name: str):
    """Register a VM builtin: it receives and returns raw VM values (no NDArray wrapping)."""

    def wrap(f):
        f._mlckit_vm_builtin = True
        register_func(name, f, override=True)
        return f

    return wrap


class ShapeHeap:
    """The per-call int64 array of symbolic values (``n``, ``n * 512`` …), with the slot
    names and where each slot got its value (for error messages)."""

    __slots__ = ("data", "names", "origins")

    def __init__(self, size: int, names: list):
        self.data = np.zeros(size, dtype="int64")
        self.names = names
        self.origins = [""] * size

    def __repr__(self) -> str:
        return "ShapeHeap(" + ", ".join(f"{n}={v}" for n, v in zip(self.names, self.data)) + ")"


# -- error contexts ---------------------------------------------------------------------------
_CTX = re.compile(r"ErrorContext\(fn=(?P<fn>[^,]*), loc=(?P<loc>[^,]*)"
                  r"(?:, (?P<kind>param|var)=(?P<name>[^,]*))?, annotation=(?P<ann>.*?)"
                  r"(?:, field=(?P<field>\d+))?\)\s*$")


class _Ctx:
    """An error context, parsed only when a check fails (the checks run on every call)."""

    def __init__(self, text: str):
        self.text = text
        m = _CTX.match(text or "")
        self.fn = m["fn"] if m else "?"
        self.loc = m["loc"] if m else ""
        self.name = m["name"] if m else None
        self.ann = m["ann"] if m else ""
        self.field = m["field"] if m else None

    @property
    def what(self) -> str:
        if self.loc.startswith("param["):
            what = f"argument {self.name!r} ({self.loc})"
        elif self.loc == "match_cast":
            what = f"R.match_cast of {self.name!r}"
        elif self.loc == "return":
            what = "the return value"
        else:
            what = "a value"
        if self.field is not None:
            what += f" field {self.field}"
        return what

    def fail(self, detail: str):
        if not self.text:
            raise VMStructInfoError(detail)
        # worded as a built kernel's argument check (runtime.arguments.mismatch)
        raise VMStructInfoError(mismatch(f"{self.fn}: {self.what}", f"its annotation {self.ann}",
                                         detail))


def _describe_value(value) -> str:
    if isinstance(value, np.ndarray):
        return f"a tensor of shape {tuple(value.shape)} and dtype {value.dtype}"
    if isinstance(value, ShapeTuple):
        return f"a shape {tuple(value)}"
    if isinstance(value, tuple):
        return f"a tuple of {len(value)} values"
    return f"a {type(value).__name__} ({value!r})"


# -- shape heap and checks --------------------------------------------------------------------
@builtin("vm.builtin.alloc_shape_heap")
def alloc_shape_heap(vm, size, names=""):
    return ShapeHeap(int(size), [n.strip() for n in str(names).split(",")] if names else
                     [f"slot{i}" for i in range(int(size))])


_NP_DTYPES: dict = {}


def _np_dtype(dtype) -> np.dtype:
    """``np.dtype(dtype)``, cached (a dict lookup instead of NumPy's parser on every call)."""
    found = _NP_DTYPES.get(dtype)
    if found is None:
        found = _NP_DTYPES[dtype] = np.dtype(str(dtype))
    return found


@builtin("vm.builtin.check_tensor_info")
def check_tensor_info(value, ndim, dtype, err_ctx=""):
    if (type(value) is np.ndarray and (ndim == -1 or value.ndim == ndim)
            and (not dtype or value.dtype == _np_dtype(dtype))):
        return  # the common case, without building the error context
    ctx = _Ctx(err_ctx)
    if not is_tensor(value):  # a NumPy array, or a device array on a GPU
        ctx.fail(f"expected a tensor, got {_describe_value(value)}")
    if ndim != -1 and value.ndim != ndim:
        ctx.fail(ndim_detail(ndim, value.shape))
    if dtype and value.dtype != _np_dtype(dtype):
        ctx.fail(dtype_detail(dtype, value.dtype))


@builtin("vm.builtin.check_shape_info")
def check_shape_info(value, ndim, err_ctx=""):
    if not isinstance(value, tuple):
        _Ctx(err_ctx).fail(f"expected a shape, got {_describe_value(value)}")
    if ndim != -1 and len(value) != ndim:
        _Ctx(err_ctx).fail(f"expected a shape of {ndim} values, got {tuple(value)}")


@builtin("vm.builtin.check_prim_value_info")
def check_prim_value_info(value, dtype, err_ctx=""):
    ok = isinstance(value, (int, float, np.integer, np.floating, bool, np.bool_))
    if not ok:
        _Ctx(err_ctx).fail(f"expected a {dtype or 'scalar'} value, got {_describe_value(value)}")


@builtin("vm.builtin.check_tuple_info")
def check_tuple_info(value, size, err_ctx=""):
    if not isinstance(value, tuple) or isinstance(value, ShapeTuple):
        _Ctx(err_ctx).fail(f"expected a tuple, got {_describe_value(value)}")
    if len(value) != size:
        _Ctx(err_ctx).fail(f"expected a tuple of {size} fields, got {len(value)}")


@builtin("vm.builtin.check_func_info")
def check_func_info(value, err_ctx=""):
    if not callable(value):
        _Ctx(err_ctx).fail(f"expected a function, got {_describe_value(value)}")


def _match(values, heap, codes, err_ctx, unit: str):
    """Check / store ``values`` by ``codes``; ``err_ctx`` (a string or a ``_Ctx``) is parsed
    only when a check fails."""
    ctx = err_ctx if isinstance(err_ctx, _Ctx) else None
    for d in range(len(values)):
        code, v = codes[2 * d], codes[2 * d + 1]
        got = int(values[d])
        if code == 0:  # assert equal to immediate
            if got != v:
                ctx = ctx or _Ctx(err_ctx)
                ctx.fail(dim_detail(d, got, v, values) if unit == "dimension" else
                         f"{unit} {d} is {got}, expected {v}")
        elif code == 1:  # store to heap
            heap.data[v] = got
            heap.origins[v] = _Origin(err_ctx, unit, d)
        elif code == 3:  # assert equal to load
            want = int(heap.data[v])
            if got != want:
                origin = str(heap.origins[v])
                by = f", bound by {origin}" if origin else ""
                ctx = ctx or _Ctx(err_ctx)
                ctx.fail(f"{unit} {d} is {got}, but {heap.names[v]} = {want}{by}"
                         f"{_shape_note(values, unit)}")


class _Origin:
    """Where a heap slot got its value (``argument 'x' (param[0]) dimension 0``), as text
    only when an error message needs it."""

    __slots__ = ("err_ctx", "unit", "index")

    def __init__(self, err_ctx, unit: str, index: int):
        self.err_ctx, self.unit, self.index = err_ctx, unit, index

    def __str__(self) -> str:
        ctx = self.err_ctx if isinstance(self.err_ctx, _Ctx) else _Ctx(self.err_ctx)
        return f"{ctx.what} {self.unit} {self.index}"


def _shape_note(values, unit) -> str:
    return f" (its shape is {tuple(int(x) for x in values)})" if unit == "dimension" else ""


@builtin("vm.builtin.match_shape")
def match_shape(value, heap, ndim, *args):
    *codes, err_ctx = args
    shape = value.shape if is_tensor(value) else value
    if len(shape) != ndim:
        _Ctx(err_ctx).fail(f"expected {ndim} dimensions, got shape {tuple(shape)}")
    _match(shape, heap, codes, err_ctx, "dimension")


@builtin("vm.builtin.match_prim_value")
def match_prim_value(value, heap, code, slot, err_ctx=""):
    _match([value], heap, [code, slot], err_ctx, "value")


@builtin("vm.builtin.make_shape")
def make_shape(heap, ndim, *codes):
    out = []
    for d in range(ndim):
        code, v = codes[2 * d], codes[2 * d + 1]
        out.append(int(v) if code == 0 else int(heap.data[v]))
    return ShapeTuple(out)


@builtin("vm.builtin.make_prim_value")
def make_prim_value(heap, code, value):
    return int(value) if code == 0 else int(heap.data[value])


# -- memory ---------------------------------------------------------------------------------
class Storage:
    """A block of bytes that tensors are carved out of (``R.memory.alloc_storage``).

    The tensors carved out of it are cached by ``(offset, shape, dtype)``: a planned program
    asks for the same views on every call.
    """

    __slots__ = ("buffer", "device", "owner", "views")

    def __init__(self, nbytes: int, device=None, buffer=None):
        # ``buffer``: the bytes in the VM's memory (device memory on a GPU), else host bytes
        self.buffer = aligned_empty(nbytes, np.uint8) if buffer is None else buffer
        # the array owning the bytes: NumPy makes it the base of every view carved out of an
        # aligned buffer (itself a view), so it is the one whose references count the views
        base = getattr(self.buffer, "base", None)
        self.owner = base if isinstance(self.buffer, np.ndarray) and base is not None else self.buffer
        self.device = device
        self.views: dict = {}

    @property
    def nbytes(self) -> int:
        return self.buffer.size

    def in_use(self) -> bool:
        """True while a tensor carved out of this storage (or a view of one) is alive outside
        the storage's own cache: a returned tensor, one a register of a running function
        holds, a user's slice of either."""
        # getrefcount counts its own argument: the owner is held by self.owner, by the
        # aligned buffer when that is a view of it, and by the base of each cached view; a
        # view by the cache (and the loop variable)
        held = 2 + (self.owner is not self.buffer) + len(self.views)
        if sys.getrefcount(self.owner) != held:
            return True
        for view in self.views.values():
            if sys.getrefcount(view) != 3:
                return True
        return False

    def __repr__(self) -> str:
        return f"Storage({self.nbytes} bytes)"


#: storages kept per size for reuse by a VM (more live at once are allocated, not kept)
POOL_DEPTH = 8


@builtin("vm.builtin.alloc_storage")
def alloc_storage(vm, size, device_index=0, dtype=None, scope="global"):
    """A storage of ``size`` bytes: one of the VM's earlier storages of that size that no live
    tensor uses any more (as TVM's pooled allocator), else a new one."""
    nbytes = max(int(size[0]) if isinstance(size, tuple) else int(size), 1)
    pool = getattr(vm, "_storage_pool", None)
    if pool is not None:
        kept = pool.get(nbytes)
        if kept is None:
            kept = pool[nbytes] = []
        for storage in kept:
            # held by the pool, the loop and getrefcount: no register of a running function
            # holds it (two storages asked for before any tensor is carved stay distinct)
            if sys.getrefcount(storage) == 3 and not storage.in_use():
                return storage
    memory = getattr(vm, "memory", None)  # the GPU's memory for a VM on one (memory.py)
    storage = Storage(nbytes, getattr(vm, "device", None),
                      None if memory is None else memory.empty_bytes(nbytes))
    if vm is not None:
        vm._storage_bytes += nbytes
    if pool is not None and len(kept) < POOL_DEPTH:
        kept.append(storage)
    return storage


def tensor_key(offset, shape, dtype) -> tuple:
    """The key of a tensor in its storage's cache of views (``Storage.views``)."""
    return (offset, shape, dtype)


@builtin("vm.builtin.alloc_tensor")
def alloc_tensor(storage, offset, shape, dtype):
    key = tensor_key(offset, shape, dtype)
    view = storage.views.get(key)
    if view is not None:
        return view
    dt = _np_dtype(dtype)
    count = 1
    for s in shape:
        count *= int(s)
    nbytes = count * dt.itemsize
    if offset + nbytes > storage.nbytes:
        raise MemoryError(f"alloc_tensor: a {tuple(shape)} {dtype} tensor needs {nbytes} bytes at "
                          f"offset {offset}, but the storage has {storage.nbytes}")
    view = storage.buffer[offset:offset + nbytes].view(dt).reshape(tuple(int(s) for s in shape))
    try:
        storage.views[key] = view
    except TypeError:  # an unhashable shape: not cached
        pass
    return view


@builtin("vm.builtin.null_value")
def null_value():
    return None


# -- values ---------------------------------------------------------------------------------
@builtin("vm.builtin.copy")
def copy(value):
    return value


@builtin("vm.builtin.make_tuple")
def make_tuple(*values):
    return tuple(values)


@builtin("vm.builtin.tuple_getitem")
def tuple_getitem(tup, index):
    return tup[index]


@builtin("vm.builtin.read_if_cond")
def read_if_cond(cond):
    return bool(np.asarray(cond).item()) if isinstance(cond, np.ndarray) else bool(cond)


@builtin("vm.builtin.shape_of")
def shape_of(tensor):
    return ShapeTuple(int(s) for s in tensor.shape)


@builtin("vm.builtin.reshape")
def reshape(tensor, shape):
    return tensor.reshape(tuple(shape))


@builtin("vm.builtin.invoke_closure")
def invoke_closure(vm, func, *args):
    return func(*args)


@builtin("vm.builtin.call_tir_dyn")
def call_tir_dyn(func, *args):
    *arrays, shape = args
    return func(*arrays, *[int(s) for s in shape])


# -- relax.run.* : print / assert -----------------------------------------------------------
def _fmt(value):
    if isinstance(value, np.ndarray):
        return str(value)
    return str(value)


@builtin("relax.run.print")
def run_print(fmt, *values):
    text = [_fmt(v) for v in values]
    if fmt:
        print(fmt.format(*text))
    else:
        print(" ".join(text))


@builtin("relax.run.assert_op")
def run_assert(cond, fmt, *values):
    ok = bool(np.asarray(cond).item()) if isinstance(cond, np.ndarray) else bool(cond)
    if not ok:
        text = [_fmt(v) for v in values]
        msg = fmt.format(*text) if fmt else ("Assertion Failed: " + " ".join(text)).strip()
        raise AssertionError(msg)


_ = DataType
