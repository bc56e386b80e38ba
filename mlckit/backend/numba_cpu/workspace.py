"""``workspace_alloc`` / ``workspace_free``: a kernel's own buffers without Numba's runtime.

A buffer a kernel allocates (``T.alloc_buffer``, what lowering makes an ``Allocate``) lives
as long as the statement it scopes.  TVM's LLVM codegen takes such memory from
``TVMBackendAllocWorkspace`` and gives it back with ``TVMBackendFreeWorkspace`` where the
scope ends; a generated kernel does the same::

    Y = workspace_alloc((16384,), np.float32)
    for i in range(128):
        ...
    workspace_free(Y)

``np.empty`` would do, but it needs Numba's runtime (NRT): a reference count on every
array, incremented and decremented at each use, and NumPy's ``empty`` compiled once per
process (40-150 ms).  A kernel whose only allocations are workspaces compiles with the
runtime off (``@njit(_nrt=False)``): no reference counting to emit and optimize (a
distinct ``mm_relu`` schedule compiles ~9 % faster), and loading it from Numba's disk
cache neither initializes the runtime nor imports ``numba.np.arrayobj`` (``cache_load``).

A workspace is a C-contiguous array to the code that uses it (a 1-D one, the flat buffer
lowered TIR allocates, a ``views.FlatRow``: indexed at TIR's offsets, without Python's
negative-index wraparound, as the parameters' flat views are), its memory aligned
to 64 bytes (TVM's ``kAllocAlignment``), taken from ``PyMem_RawMalloc`` (thread-safe
without the GIL, and found in every CPython process, as the other ``Py*`` functions
Numba's code calls).  It has no owner to count references for (a null ``meminfo``, which
Numba's runtime skips where a kernel does run with it), so it must not outlive its scope:
the generator frees it where the ``Allocate`` ends.  A kernel that raises (a failed
``T.assert``) before that leaks it, as a TVM kernel returning an error code does.

Example::

    from numba import njit
    import numpy as np
    from mlckit.backend.numba_cpu.workspace import workspace_alloc, workspace_free

    @njit(_nrt=False)
    def total(n):
        t = workspace_alloc((n,), np.float64)
        for i in range(n):
            t[i] = i
        s = t.sum()
        workspace_free(t)
        return s
"""

from __future__ import annotations

import functools

from llvmlite import ir
from numba.core import cgutils, types
from numba.extending import intrinsic

from .views import FlatRow, array_field, array_value

__all__ = ["ALIGNMENT", "workspace_alloc", "workspace_free"]

#: bytes: a workspace's first element is on a multiple of this (TVM's kAllocAlignment)
ALIGNMENT = 64
# the allocation's own address is kept in the 8 bytes before the first element
_HEADER = 8

_I8P = ir.IntType(8).as_pointer()


def _raw_function(builder, name: str, return_type, *arg_types):
    module = builder.module
    return cgutils.get_or_insert_function(module, ir.FunctionType(return_type, arg_types), name)


@intrinsic
def workspace_alloc(typingctx, shape, dtype):
    """A new C-contiguous array of ``shape`` (a tuple of integers) and ``dtype`` (a NumPy
    scalar type such as ``np.float32``), uninitialized; ``MemoryError`` where there is no
    memory.  Freed by :func:`workspace_free`.

    Example::

        Y = workspace_alloc((128, 128), np.float32)     # in an @njit function
    """
    if not isinstance(shape, types.BaseTuple) or len(shape.types) == 0 or not all(
            isinstance(n, types.Integer) for n in shape.types):
        return None  # Numba reports the call as untyped
    if not isinstance(dtype, (types.NumberClass, types.DType)):
        return None
    element = dtype.dtype
    # a flat buffer (as lowered TIR allocates them) is a row indexed as the views are
    rank = len(shape.types)
    array_type = FlatRow(element) if rank == 1 else types.Array(element, rank, "C")

    def codegen(context, builder, signature, args):
        intp = context.get_value_type(types.intp)
        dims = [context.cast(builder, v, t, types.intp)
                for v, t in zip(cgutils.unpack_tuple(builder, args[0]), shape.types)]
        itemsize = context.get_constant(types.intp, context.get_abi_sizeof(
            context.get_data_type(element)))
        # as np.empty: a negative extent is an error, and so is a size past what fits
        zero = ir.Constant(intp, 0)
        negative = cgutils.false_bit
        for n in dims:
            negative = builder.or_(negative, builder.icmp_signed("<", n, zero))
        with builder.if_then(negative, likely=False):
            context.call_conv.return_user_exc(builder, ValueError,
                                              ("workspace_alloc: negative dimension",))
        strides, stride, overflow = [], itemsize, cgutils.false_bit
        for n in reversed(dims):
            strides.insert(0, stride)
            product = builder.smul_with_overflow(stride, n)
            stride = builder.extract_value(product, 0)
            overflow = builder.or_(overflow, builder.extract_value(product, 1))
        total = builder.sadd_with_overflow(stride, ir.Constant(intp, ALIGNMENT + _HEADER - 1))
        overflow = builder.or_(overflow, builder.extract_value(total, 1))
        with builder.if_then(overflow, likely=False):
            context.call_conv.return_user_exc(builder, MemoryError,
                                              ("workspace_alloc: the array is too big",))
        raw = builder.call(_raw_function(builder, "PyMem_RawMalloc", _I8P, intp),
                           [builder.extract_value(total, 0)])
        with builder.if_then(cgutils.is_null(builder, raw), likely=False):
            context.call_conv.return_user_exc(builder, MemoryError,
                                              ("workspace_alloc: out of memory",))
        # the first multiple of ALIGNMENT after the header
        start = builder.add(builder.ptrtoint(raw, intp), ir.Constant(intp, _HEADER + ALIGNMENT - 1))
        aligned = builder.and_(start, ir.Constant(intp, -ALIGNMENT))
        header = builder.inttoptr(builder.sub(aligned, ir.Constant(intp, _HEADER)),
                                  _I8P.as_pointer())
        builder.store(raw, header)
        data = builder.inttoptr(aligned, context.get_data_type(element).as_pointer())
        nitems = functools.reduce(lambda a, b: builder.mul(a, b, flags=["nsw"]), dims)
        return array_value(context, builder, array_type, nitems=nitems, itemsize=itemsize,
                           data=data, shape=cgutils.pack_array(builder, dims),
                           strides=cgutils.pack_array(builder, strides))

    return array_type(shape, dtype), codegen


@intrinsic
def workspace_free(typingctx, array):
    """Give back the memory of ``array``, made by :func:`workspace_alloc`.

    Example::

        workspace_free(Y)     # in an @njit function, where Y's scope ends
    """
    if not isinstance(array, types.Array):
        return None

    def codegen(context, builder, signature, args):
        data = array_field(context, builder, array, args[0], "data")
        intp = context.get_value_type(types.intp)
        header = builder.sub(builder.ptrtoint(data, intp), ir.Constant(intp, _HEADER))
        raw = builder.load(builder.inttoptr(header, _I8P.as_pointer()))
        builder.call(_raw_function(builder, "PyMem_RawFree", ir.VoidType(), _I8P), [raw])
        return context.get_dummy_value()

    return types.none(array), codegen
