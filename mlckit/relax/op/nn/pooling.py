"""2-d pooling: ``relax.op.nn.max_pool2d``, ``avg_pool2d``, ``adaptive_avg_pool2d`` (TVM's
names, attributes and shape rules), lowered through ``topi.nn.pool2d`` /
``topi.nn.adaptive_pool``.

    lv = R.nn.max_pool2d(x, pool_size=(2, 2), strides=(2, 2))
    lv = R.nn.avg_pool2d(x, pool_size=3, strides=1, padding=1)      # padding not counted
    lv = R.nn.adaptive_avg_pool2d(x, output_size=(1, 1))            # global average

With ``ceil_mode`` the output size rounds up (a last window starting in the padding is
dropped); ``count_include_pad`` makes the average divide by the whole window.
"""

from __future__ import annotations

from mlckit import topi
from mlckit.arith import Analyzer
from mlckit.ir.node import node
from mlckit.tir import expr as tx
from mlckit.topi.nn.pooling import select_dim

from ...expr import Call
from ...struct_info import TensorStructInfo
from ..op_attrs import Attrs
from ..op_common import as_expr, check_num_args, fail, shape_text, tensor_arg
from ..op_def import def_op
from .layout import complete_padding_2d, from_canonical, layout_permutation, pair, to_canonical


@node
class Pool2DAttrs(Attrs):
    """``max_pool2d``/``avg_pool2d``'s attributes, in TVM's order."""

    pool_size: tuple = (1, 1)
    strides: tuple = (1, 1)
    dilation: tuple = (1, 1)
    padding: tuple = (0, 0, 0, 0)
    ceil_mode: bool = False
    count_include_pad: bool = False
    layout: str = "NCHW"
    out_layout: str = "NCHW"


def _pool_op(name: str, pool_type: str, doc: str):
    full = f"relax.nn.{name}"

    def construct(data, pool_size=(1, 1), strides=(1, 1), padding=(0, 0), dilation=(1, 1),
                  ceil_mode: bool = False, count_include_pad: bool = False,
                  layout: str = "NCHW", out_layout=None) -> Call:
        attrs = Pool2DAttrs(pair(pool_size, full, "pool_size"), pair(strides, full, "strides"),
                            pair(dilation, full, "dilation"),
                            complete_padding_2d(padding, full), bool(ceil_mode),
                            bool(count_include_pad), layout,
                            layout if out_layout is None else out_layout)
        return Call(operator.op, [as_expr(data, full, "data")], attrs)

    construct.__name__ = construct.__qualname__ = name
    construct.__doc__ = (f"{doc}\n\nExample::\n\n    lv = R.nn.{name}(x, pool_size=(2, 2), "
                         "strides=(2, 2))\n")
    operator = def_op(full, arguments=("data",))(construct)
    operator.infer(_infer_pool2d)

    @operator.legalize(condition=_same_layout)
    def _lower(bb, call: Call):
        a = call.attrs
        return bb.call_te(topi.nn.pool2d, call.args[0], list(a.pool_size), list(a.strides),
                          list(a.dilation), list(a.padding), pool_type, a.ceil_mode, a.layout,
                          a.count_include_pad, primfunc_name_hint=name)

    return operator


def _same_layout(call: Call) -> bool:
    return call.attrs.out_layout == call.attrs.layout


def _data_dims(call: Call):
    check_num_args(call)
    data = tensor_arg(call, 0)
    a = call.attrs
    perm = layout_permutation(call, a.layout, "NCHW", "layout")
    out_perm = layout_permutation(call, a.out_layout, "NCHW", "out_layout")
    if data.ndim not in (-1, 4):
        fail(call, f"requires data to be 4-d ({a.layout}), but its shape is "
                   f"{shape_text(data.dims) if data.dims is not None else f'of rank {data.ndim}'}")
    return data, perm, out_perm


def _infer_pool2d(call: Call) -> TensorStructInfo:
    data, perm, out_perm = _data_dims(call)
    if data.dims is None:
        return TensorStructInfo(None, data.dtype, 4)
    a = call.attrs
    n, c, h, w = to_canonical(data.dims, perm)
    ana = Analyzer()
    out = []
    for size, k, s, d, before, after in ((h, a.pool_size[0], a.strides[0], a.dilation[0],
                                          a.padding[0], a.padding[2]),
                                         (w, a.pool_size[1], a.strides[1], a.dilation[1],
                                          a.padding[1], a.padding[3])):
        numerator = size + (before + after) - d * (k - 1) - 1
        if a.ceil_mode:
            numerator = numerator + (s - 1)
        raw = tx.floordiv(numerator, s) + 1
        if a.ceil_mode:
            invalid_last = (raw - 1) * s >= size + before
            raw = select_dim(invalid_last, raw - 1, raw)
        dim = ana.simplify(raw)
        if isinstance(dim, tx.IntImm) and dim.value <= 0:
            fail(call, f"the output would be empty: data {shape_text(data.dims)}, pool_size "
                       f"{list(a.pool_size)}, strides {list(a.strides)}, padding "
                       f"{list(a.padding)}, dilation {list(a.dilation)}")
        out.append(dim)
    return TensorStructInfo(from_canonical([n, c, *out], out_perm), data.dtype)


max_pool2d = _pool_op("max_pool2d", "max", "The maximum over each window of H and W.")
avg_pool2d = _pool_op("avg_pool2d", "avg", "The average over each window of H and W.")


# -- adaptive_avg_pool2d --------------------------------------------------------------------------
@node
class AdaptivePool2DAttrs(Attrs):
    """``adaptive_avg_pool2d``: the output H and W (None: the input's), the layouts."""

    output_size: tuple | None = None
    layout: str = "NCHW"
    out_layout: str = "NCHW"


@def_op("relax.nn.adaptive_avg_pool2d", arguments=("data",))
def adaptive_avg_pool2d(data, output_size=None, layout: str = "NCHW", out_layout=None) -> Call:
    """The average of ``output_size`` nearly equal windows over H and W (the output has H
    and W of ``output_size``; None keeps the input's).

    Example::

        lv = R.nn.adaptive_avg_pool2d(x, output_size=(1, 1))     # (n, c, 7, 7) -> (n, c, 1, 1)
    """
    op = "relax.nn.adaptive_avg_pool2d"
    size = None if output_size is None else pair(output_size, op, "output_size")
    return Call(adaptive_avg_pool2d.op, [as_expr(data, op, "data")],
                AdaptivePool2DAttrs(size, layout, layout if out_layout is None else out_layout))


@adaptive_avg_pool2d.infer
def _infer_adaptive(call: Call) -> TensorStructInfo:
    data, perm, out_perm = _data_dims(call)
    a = call.attrs
    if data.dims is None:
        if data.shape is not None and a.out_layout == a.layout and a.output_size is None:
            return data
        return TensorStructInfo(None, data.dtype, 4)
    dims = to_canonical(data.dims, perm)
    if a.output_size is not None:
        dims[2:] = [tx.IntImm("int64", s) for s in a.output_size]
    return TensorStructInfo(from_canonical(dims, out_perm), data.dtype)


@adaptive_avg_pool2d.legalize(condition=_same_layout)
def _lower_adaptive(bb, call: Call):
    a = call.attrs

    def adaptive_avg_pool2d(x):  # noqa: F811 - names the PrimFunc
        perm = [a.layout.index(letter) for letter in "HW"]
        size = list(a.output_size) if a.output_size is not None else [x.shape[p] for p in perm]
        size = [tx.IntImm("int64", s) if isinstance(s, int) else s for s in size]
        return topi.nn.adaptive_pool(x, size, "avg", a.layout)

    return bb.call_te(adaptive_avg_pool2d, call.args[0])


__all__ = ["AdaptivePool2DAttrs", "Pool2DAttrs", "adaptive_avg_pool2d", "avg_pool2d",
           "max_pool2d"]
