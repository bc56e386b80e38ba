"""Ternary element-wise operators: ``ewise_fma`` (TVM's ``tvm.relax.op.ewise_fma``).

``R.ewise_fma(x1, x2, x3)`` is ``x1 * x2 + x3`` on three tensors of the same shape and dtype
(no broadcasting, as TVM).  TVM v0.23 registers no legalization for it; mlckit lowers it to
one PrimFunc ``ewise_fma`` with a single block ``T_ewise_fma``, so a module using it builds::

    lv = R.ewise_fma(x, w, b)      # x, w, b: R.Tensor((n, 4), "float32")
"""

from __future__ import annotations

from mlckit import te
from mlckit.topi import tag
from mlckit.topi.utils import compute_ax

from ..expr import Call, ShapeExpr
from ..struct_info import TensorStructInfo
from .op_common import as_expr, can_prove_equal, fail, shape_text, tensor_args
from .op_def import def_op


@def_op("relax.ewise_fma", arguments=("x1", "x2", "x3"))
def ewise_fma(x1, x2, x3) -> Call:
    """``x1 * x2 + x3`` element-wise; the three tensors have one shape and one dtype.

    Example::

        lv = R.ewise_fma(x, w, b)
    """
    name = "relax.ewise_fma"
    return Call(ewise_fma.op, [as_expr(x1, name, "x1"), as_expr(x2, name, "x2"),
                               as_expr(x3, name, "x3")])


@ewise_fma.infer
def _infer_ewise_fma(call: Call) -> TensorStructInfo:
    sinfos = tensor_args(call)
    names = ("x1", "x2", "x3")
    ndims = {s.ndim for s in sinfos if s.ndim != -1}
    if len(ndims) > 1:
        ranks = ", ".join(f"{n} has {s.ndim}" for n, s in zip(names, sinfos) if s.ndim != -1)
        fail(call, f"the 3 arguments must have the same number of dimensions, but {ranks}")
    ndim = ndims.pop() if ndims else -1
    dtypes = [s.dtype for s in sinfos]
    if any(d == "" for d in dtypes):
        dtype = ""
    elif len(set(dtypes)) > 1:
        from .op_common import OpTypeError

        fail(call, "the 3 arguments must have the same dtype, but they are "
                   f"{', '.join(f'{n} {d}' for n, d in zip(names, dtypes))}", OpTypeError)
    else:
        dtype = dtypes[0]
    if all(s.dims is not None for s in sinfos):
        dims = [s.dims for s in sinfos]
        for i in range(ndim):
            if not (can_prove_equal(dims[0][i], dims[1][i])
                    and can_prove_equal(dims[1][i], dims[2][i])):
                shapes = ", ".join(f"{n} {shape_text(d)}" for n, d in zip(names, dims))
                fail(call, f"the 3 arguments must have the same shape, but they are {shapes}")
        return TensorStructInfo(ShapeExpr(dims[0]), dtype)
    first = sinfos[0].shape
    if first is not None and all(s.shape is first for s in sinfos):
        return TensorStructInfo(first, dtype, ndim)
    return TensorStructInfo(None, dtype, ndim)


def _te_ewise_fma(x1: te.Tensor, x2: te.Tensor, x3: te.Tensor) -> te.Tensor:
    return compute_ax(list(x1.shape), lambda i: x1(*i) * x2(*i) + x3(*i), "T_ewise_fma",
                      tag.ELEMWISE)


ewise_fma.legalize(lambda bb, call: bb.call_te(_te_ewise_fma, *call.args,
                                               primfunc_name_hint="ewise_fma"))

__all__ = ["ewise_fma"]
