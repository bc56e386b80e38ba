"""Data type conversion: ``astype`` (TVM's ``tvm.relax.op.astype``).

``R.astype(x, "float16")`` keeps the shape of ``x`` and changes its dtype; it is lowered by
``topi.cast`` into a PrimFunc named ``cast``, and a scalar constant is converted at compile
time (TVM's rule)::

    lv = R.astype(x, dtype="float16")
    R.astype(R.const(1.5, "float32"), "int32")   # legalizes to R.const(1, "int32")
"""

from __future__ import annotations

from mlckit import topi

from ..expr import Call, Expr, const
from .op_attrs import AstypeAttrs
from .op_common import as_expr, dtype_or_void, infer_unary, scalar_const
from .op_def import def_op


@def_op("relax.astype", arguments=("x",))
def astype(x, dtype) -> Call:
    """``x`` converted to ``dtype`` element-wise (TVM's ``relax.op.astype``).

    Example::

        lv = R.astype(x, dtype="float16")
    """
    dtype = dtype_or_void(dtype, "relax.astype")
    if dtype == "void":
        from mlckit.error import TVMValueError

        raise TVMValueError("relax.astype: the target dtype is required, e.g. "
                            "R.astype(x, \"float16\")")
    return Call(astype.op, [as_expr(x, "relax.astype", "x")], AstypeAttrs(dtype))


astype.infer(lambda call: infer_unary(call, out_dtype=call.attrs.dtype))


@astype.legalize
def _lower_astype(bb, call: Call):
    arg = scalar_const(call.args[0], python_native=True)
    if isinstance(arg, Expr):
        return bb.call_te(topi.cast, arg, call.attrs.dtype)
    return const(arg, call.attrs.dtype)


__all__ = ["astype"]
