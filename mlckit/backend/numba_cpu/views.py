"""``flat_view(A)``: a C-contiguous array's elements as one row, for generated kernels.

Lowered TIR reads a parameter through a flat view of its memory (``A_1 = T.Buffer((16384,),
data=A.data)``, FlattenBuffer); the kernel Numba compiles prints it as ``A_1 =
flat_view(A)``.  It is what ``A.reshape((16384,))`` gives, built directly: the same data,
one extent (the array's size), one stride (its item size), the same owner.  Numba compiles
``reshape`` as a general routine (a shape check, an error path, a loop over the
dimensions); this is a handful of LLVM instructions, and a kernel compiles about a sixth
faster (the course's ``mm_relu`` schedules: median 340 -> 282 ms on a 2-core host).

The view's type, :class:`FlatRow`, is indexed as TIR indexes a flat buffer: at the offset
given, never negative, so without the wraparound Numba adds for Python's ``a[-1]``.  With
the arrays promised distinct (``tir.noalias``), LLVM then vectorizes the loops TVM's LLVM
vectorizes (the course's plain 32 x 32 tiling of a 1024³ matmul: 3.6 -> 13 GFLOP/s).

Example::

    from numba import njit
    from mlckit.backend.numba_cpu.views import flat_view

    @njit
    def total(A):
        A_1 = flat_view(A)     # A: float32[128, 128], C-contiguous
        s = 0.0
        for i in range(16384):
            s += A_1[i]
        return s
"""

from __future__ import annotations

import operator

from numba.core import cgutils, ir_utils, types
from numba.core.datamodel import models, register_default
from numba.core.imputils import impl_ret_borrowed, lower_builtin
from numba.extending import intrinsic

__all__ = ["FlatRow", "array_field", "array_value", "flat_view"]


def _arrayobj():
    """Numba's array lowering helpers (``numba.np.arrayobj``: array structs, element loads
    and stores), imported when a kernel is compiled: a process that only loads kernels from
    the cache imports this module but never needs them (~25 ms of a fresh process's build
    of ``mm_relu``; ``numba_cpu.workspace``)."""
    from numba.np import arrayobj

    return arrayobj


class FlatRow(types.Array):
    """Numba's type of ``flat_view(A)``: a 1-D C-contiguous array indexed by TIR's flat
    indices, which are never negative (TIR's accesses are in bounds).  Indexed by an
    integer it reads and writes the element at that offset, without the negative-index
    wraparound Numba adds for Python's ``a[-1]``: that ``select`` hides from LLVM that
    neighbouring iterations touch neighbouring elements, and the loop stays scalar.
    (So ``A_1[-1]`` is not the last element here: the view is for generated code, whose
    indices are in bounds.)  Anything else (a slice, ``.shape``) is an ordinary array's."""

    def __init__(self, dtype, readonly: bool = False):
        super().__init__(dtype, 1, "C", readonly=readonly,
                         name=f"flat_view({dtype}{', readonly' if readonly else ''})")

    def copy(self, dtype=None, ndim=None, layout=None, readonly=None):
        # what is derived from a view (a slice's type) is an ordinary array
        return types.Array(dtype or self.dtype, ndim or self.ndim, layout or self.layout,
                           readonly=(not self.mutable) if readonly is None else readonly)


register_default(FlatRow)(models.ArrayModel)


def array_field(context, builder, array_type, value, name: str):
    """Field ``name`` (``data``, ``nitems``, ``shape``, ...) of the array struct ``value``,
    taken out of the value itself: no copy of the struct on the stack, as Numba's array
    helpers make, for LLVM's passes to take apart again."""
    position = context.data_model_manager[array_type].get_field_position(name)
    return builder.extract_value(value, position)


def array_value(context, builder, array_type, **fields):
    """The struct value of an array of ``array_type`` with ``fields`` (``meminfo`` and
    ``parent`` left null where not given), built in registers."""
    model = context.data_model_manager[array_type]
    value = cgutils.get_null_value(context.get_value_type(array_type))
    for name, field in fields.items():
        value = builder.insert_value(value, field, model.get_field_position(name))
    return value


@intrinsic
def flat_view(typingctx, ary):
    """The elements of the C-contiguous array ``ary`` as a 1-D view (no copy).

    Example::

        A_1 = flat_view(A)    # A: float32[128, 128] -> A_1: float32[16384], same memory
    """
    if not isinstance(ary, types.Array) or ary.layout != "C":
        return None  # Numba reports the call as untyped: only C-contiguous arrays
    row = FlatRow(ary.dtype, readonly=not ary.mutable)

    def codegen(context, builder, signature, args):
        def field(name):
            return array_field(context, builder, ary, args[0], name)

        view = array_value(context, builder, row, meminfo=field("meminfo"),
                           parent=field("parent"), nitems=field("nitems"),
                           itemsize=field("itemsize"), data=field("data"),
                           shape=cgutils.pack_array(builder, [field("nitems")]),
                           strides=cgutils.pack_array(builder, [field("itemsize")]))
        return impl_ret_borrowed(context, builder, row, view)

    return row(ary), codegen


def _element(context, builder, row_type, row, index, index_type):
    """The pointer to element ``index`` of the view ``row``: its data pointer, taken out of
    the array's struct value, plus the offset (no array struct is rebuilt on the stack)."""
    data = array_field(context, builder, row_type, row, "data")
    return builder.gep(data, [context.cast(builder, index, index_type, types.intp)],
                       inbounds=True)


@lower_builtin(operator.getitem, FlatRow, types.Integer)
def _load(context, builder, sig, args):
    row_type, index_type = sig.args
    pointer = _element(context, builder, row_type, args[0], args[1], index_type)
    value = _arrayobj().load_item(context, builder, row_type, pointer)
    return impl_ret_borrowed(context, builder, sig.return_type, value)


@lower_builtin(operator.setitem, FlatRow, types.Integer, types.Any)
def _store(context, builder, sig, args):
    row_type, index_type, value_type = sig.args
    pointer = _element(context, builder, row_type, args[0], args[1], index_type)
    value = context.cast(builder, args[2], value_type, row_type.dtype)
    _arrayobj().store_item(context, builder, row_type, value, pointer)
    return context.get_dummy_value()


def _same_memory(lhs, args, alias_map, arg_aliases):
    """Numba's alias analysis: ``lhs = flat_view(A)`` is ``A``'s memory (as for ``reshape``);
    without it, dead-code elimination (after inlining, or in a ``prange`` loop) drops
    writes that only go through the view."""
    rhs = args[0].name
    if rhs in arg_aliases:
        arg_aliases.add(lhs)
    else:
        alias_map.setdefault(rhs, set()).add(lhs)
        alias_map.setdefault(lhs, set()).add(rhs)


ir_utils.alias_func_extensions[("flat_view", __name__)] = _same_memory
