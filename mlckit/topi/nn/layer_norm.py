"""Layer normalization (TVM's ``topi.nn.layer_norm``).

One pass sums ``x`` and ``x * x`` over ``axis`` together (compute ``<data>_red_temp``, a
tuple reduction), then ``T_layer_norm`` normalizes with the mean and the variance
``E[x^2] - E[x]^2`` and applies ``gamma`` and ``beta`` (indexed by the normalized axes)::

    X = te.placeholder((2, 3, 4), name="X")
    G = te.placeholder((4,), name="G")
    B = te.placeholder((4,), name="B")
    Y = topi.nn.layer_norm(X, G, B, axis=[-1], epsilon=1e-5)

float16 inputs accumulate in float32, as TVM does.
"""

from __future__ import annotations

from mlckit import te
from mlckit.error import TVMTypeError
from mlckit.tir import op as tir_op
from mlckit.tir.expr import cast, const

from .. import tag as _tag
from ..reduction import real_axes, reduce_axes, reduce_target_shape
from ..utils import check_tensor, compute_ax

_tuple_sum = te.comm_reducer(lambda x, y: tuple(a + b for a, b in zip(x, y)),
                             lambda *dtypes: tuple(const(0, t) for t in dtypes),
                             name="tuple_sum")


def layer_norm(data: te.Tensor, gamma: te.Tensor, beta: te.Tensor | None, axis,
               epsilon: float) -> te.Tensor:
    """``(data - mean) / sqrt(var + epsilon) * gamma + beta`` over the axes ``axis``;
    ``gamma`` and ``beta`` have the shape of those axes (``beta`` may be None).

    Example::

        Y = topi.nn.layer_norm(X, G, B, axis=[1, 2], epsilon=1e-5)
    """
    data = check_tensor("nn.layer_norm", data, "data")
    gamma = check_tensor("nn.layer_norm", gamma, "gamma")
    for what, t in (("gamma", gamma), ("beta", beta)):
        if t is not None and t.dtype != data.dtype:
            raise TVMTypeError(f"topi.nn.layer_norm: data is {data.dtype} but {what} is "
                               f"{t.dtype}; they must have the same dtype")
    if data.dtype not in ("float32", "float16"):
        raise TVMTypeError(f"topi.nn.layer_norm: only float32 and float16 are supported, got "
                           f"{data.dtype}")
    half = data.dtype == "float16"
    axes = real_axes("nn.layer_norm", data, axis)
    raxes = reduce_axes(axes, data)
    shape = reduce_target_shape(axes, data, keepdims=False)

    def sums(indices):
        index, arg, red = [], 0, 0
        for i in range(data.ndim):
            if i in axes:
                index.append(raxes[red].var)
                red += 1
            else:
                index.append(indices[arg])
                arg += 1
        value = data(*index)
        if half:
            value = cast(value, "float32")
        return _tuple_sum((value, value * value), axis=raxes)

    temp_x, temp_x2 = compute_ax(shape, sums, data.op.name + "_red_temp", _tag.COMM_REDUCE)
    extent = const(1, "float32" if half else data.dtype)
    for i in axes:
        extent = extent * data.shape[i]

    def normalize(*indices):
        kept = [v for i, v in enumerate(indices) if i not in axes]
        normed = [v for i, v in enumerate(indices) if i in axes]
        mean = temp_x(*kept) / extent
        var = temp_x2(*kept) / extent - mean * mean
        value = cast(data(*indices), "float32") if half else data(*indices)
        out = (value - mean) * tir_op.rsqrt(var + const(epsilon, var.dtype))
        if half:
            out = cast(out, "float16")
        out = out * gamma(*normed)
        if beta is not None:
            out = out + beta(*normed)
        return out

    return compute_ax(data.shape, lambda idx: normalize(*idx), "T_layer_norm", _tag.INJECTIVE)
