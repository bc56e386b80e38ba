"""``relax.op.argmax`` / ``argmin`` (TVM's search family): the index of the largest /
smallest element over one ``axis`` (of the flattened tensor when None), the first one among
equals; int64 indices.

    lv = R.argmax(logits, axis=1)          # (n, 10) -> (n,)
"""

from __future__ import annotations

from mlckit import topi
from mlckit.ir.node import node

from ..expr import Call
from .axis_common import int_tuple
from .op_attrs import Attrs
from .op_common import as_expr
from .op_def import def_op
from .statistical import reduced_struct_info


@node
class ArgmaxArgminAttrs(Attrs):
    """``argmax``/``argmin``: the axis searched (None: the flattened tensor) and whether it
    stays as a unit dim."""

    axis: int | None = None
    keepdims: bool = False


def _arg_op(name: str, te_func):
    full = f"relax.{name}"

    def construct(x, axis=None, keepdims: bool = False) -> Call:
        axis = None if axis is None else int_tuple(axis, full, "axis")
        if axis is not None and len(axis) != 1:
            from mlckit.error import TVMTypeError

            raise TVMTypeError(f"{full}: axis must be one int (or None), got {list(axis)}")
        return Call(operator.op, [as_expr(x, full, "x")],
                    ArgmaxArgminAttrs(None if axis is None else axis[0], bool(keepdims)))

    construct.__name__ = construct.__qualname__ = name
    construct.__doc__ = (f"The index of the {'largest' if name == 'argmax' else 'smallest'} "
                         f"element along ``axis`` (int64).\n\nExample::\n\n"
                         f"    lv = R.{name}(x, axis=1)\n")
    operator = def_op(full, arguments=("x",))(construct)

    @operator.infer
    def _infer(call: Call):
        axis = call.attrs.axis
        return reduced_struct_info(call, None if axis is None else (axis,), call.attrs.keepdims,
                                   "int64")

    @operator.legalize
    def _lower(bb, call: Call):
        axis = None if call.attrs.axis is None else [call.attrs.axis]
        return bb.call_te(te_func, call.args[0], axis, call.attrs.keepdims)

    return operator


argmax = _arg_op("argmax", topi.argmax)
argmin = _arg_op("argmin", topi.argmin)

__all__ = ["ArgmaxArgminAttrs", "argmax", "argmin"]
