"""``flat_view(A)``: a C-contiguous array's elements as one row, for generated kernels.

Lowered TIR reads a parameter through a flat view of its memory (``A_1 = T.Buffer((16384,),
data=A.data)``, FlattenBuffer); the kernel Numba compiles prints it as ``A_1 =
flat_view(A)``.  It is what ``A.reshape((16384,))`` gives, built directly: the same data,
one extent (the array's size), one stride (its item size), the same owner.  Numba compiles
``reshape`` as a general routine (a shape check, an error path, a loop over the
dimensions); this is a handful of LLVM instructions, and a kernel compiles about a sixth
faster (the course's ``mm_relu`` schedules: median 340 -> 282 ms on a 2-core host).

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

from numba.core import cgutils, ir_utils, types
from numba.core.imputils import impl_ret_borrowed
from numba.extending import intrinsic
from numba.np.arrayobj import make_array, populate_array

__all__ = ["flat_view"]


@intrinsic
def flat_view(typingctx, ary):
    """The elements of the C-contiguous array ``ary`` as a 1-D view (no copy).

    Example::

        A_1 = flat_view(A)    # A: float32[128, 128] -> A_1: float32[16384], same memory
    """
    if not isinstance(ary, types.Array) or ary.layout != "C":
        return None  # Numba reports the call as untyped: only C-contiguous arrays
    row = ary.copy(ndim=1, layout="C")

    def codegen(context, builder, signature, args):
        src = make_array(ary)(context, builder, args[0])
        view = make_array(row)(context, builder)
        populate_array(view, data=src.data,
                       shape=cgutils.pack_array(builder, [src.nitems]),
                       strides=cgutils.pack_array(builder, [src.itemsize]),
                       itemsize=src.itemsize, meminfo=src.meminfo, parent=src.parent)
        return impl_ret_borrowed(context, builder, row, view._getvalue())

    return row(ary), codegen


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
