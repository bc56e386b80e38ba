"""Convolutions (TVM's ``topi.nn.conv``, ``topi.nn.conv2d``, ``conv2d_nchw``,
``group_conv2d_nchw``).

``conv`` is TVM's generic N-d convolution: the input padded into ``pad_temp``, then one
reduction named ``conv<d>d_<layout>`` (``group_conv2d_nchw`` with groups) over the input
channels of a group and the kernel window::

    X = te.placeholder((1, 3, 32, 32), name="X")
    W = te.placeholder((8, 3, 3, 3), name="W")
    Y = topi.nn.conv2d(X, W, strides=1, padding=1, dilation=1)   # (1, 8, 32, 32)

Output size along a spatial dimension: ``(size + pad_before + pad_after - (k - 1) * dilation
- 1) // stride + 1``.
"""

from __future__ import annotations

import re

from mlckit import te
from mlckit.arith import Analyzer
from mlckit.error import TVMValueError
from mlckit.tir.expr import IntImm, convert

from ..utils import check_tensor, shape_text
from .pad import pad


def get_pad_tuple_generic(padding, kernel: list) -> tuple[list, list]:
    """``(pad_begin, pad_end)`` per spatial dimension from an int, ``len(kernel)`` values
    (both sides), ``2 * len(kernel)`` values (all befores, then all afters), ``"VALID"`` or
    ``"SAME"`` (TVM's rule: the extra padding of an odd total goes before).

    >>> from mlckit import topi
    >>> topi.nn.get_pad_tuple_generic(1, [3, 3])
    ([1, 1], [1, 1])
    >>> topi.nn.get_pad_tuple_generic("VALID", [3, 3])
    ([0, 0], [0, 0])
    """
    dims = len(kernel)
    if isinstance(padding, (tuple, list)):
        if len(padding) == dims:
            totals = [p * 2 for p in padding]
        elif len(padding) == 2 * dims:
            return list(padding[:dims]), list(padding[dims:])
        else:
            raise TVMValueError(f"topi.nn.conv: padding {tuple(padding)} must have {dims} or "
                                f"{2 * dims} values")
    elif isinstance(padding, (int, IntImm)):
        totals = [int(padding) * 2] * dims
    elif padding == "VALID":
        totals = [0] * dims
    elif padding == "SAME":
        totals = [k - 1 for k in kernel]
    else:
        raise TVMValueError(f"topi.nn.conv: unknown padding {padding!r}")
    begin = [(p + 1) // 2 for p in totals]
    return begin, [t - b for t, b in zip(totals, begin)]


def _per_dim(value, dims: int, what: str) -> list:
    if isinstance(value, (int, IntImm)):
        return [int(value)] * dims
    values = list(value)
    if len(values) != dims:
        raise TVMValueError(f"topi.nn.conv: {what} {tuple(values)} must have {dims} values")
    return values


def _const(value):
    """A Python int for a constant dimension, the expression otherwise."""
    value = convert(value)
    return value.value if isinstance(value, IntImm) else value


def _permutation_to_canonical(layout: str, first: str, second: str) -> list[int]:
    """Positions in ``layout`` of ``first``, ``second`` and then the other letters: the
    permutation to N-C-spatial (or O-I-spatial) order."""
    rest = [m.start() for m in re.finditer(f"[^{first}{second}]", layout)]
    return [layout.find(first), layout.find(second), *rest]


def _inverse(perm: list[int]) -> list[int]:
    inv = [0] * len(perm)
    for i, p in enumerate(perm):
        inv[p] = i
    return inv


def conv(inp: te.Tensor, filt: te.Tensor, stride, padding, dilation, groups: int,
         data_layout: str, kernel_layout: str = "", out_dtype: str | None = None) -> te.Tensor:
    """A convolution in any layout whose letters are ``N``, ``C`` and spatial ones
    (``NCHW``, ``NHWC``, ``NCW`` ...); the kernel in ``kernel_layout`` (``O``, ``I``,
    spatial; default ``OIHW``-like for channel-first data, ``HWIO``-like otherwise).

    Example::

        Y = topi.nn.conv(X, W, 1, 1, 1, groups=1, data_layout="NCHW", kernel_layout="OIHW")
    """
    inp = check_tensor("nn.conv", inp, "input")
    filt = check_tensor("nn.conv", filt, "filter")
    dims = inp.ndim - 2
    out_dtype = inp.dtype if out_dtype is None else out_dtype
    strides = _per_dim(stride, dims, "stride")
    dilations = _per_dim(dilation, dims, "dilation")

    data_to = _permutation_to_canonical(data_layout, "N", "C")
    data_from = _inverse(data_to)
    # the reduction axes (channel, spatial...) in the data layout's order
    red_from = [p - 1 if p > data_from[0] else p for p in data_from[1:]]
    if kernel_layout == "":
        first_spatial = re.search("[^NC]", data_layout).start()
        kernel_to = list(range(dims + 2)) if data_layout.find("C") < first_spatial else \
            [dims + 1, dims, *range(dims)]
    else:
        kernel_to = _permutation_to_canonical(kernel_layout, "O", "I")
    kernel_from = _inverse(kernel_to)

    batch, in_channel, *spatial = [_const(inp.shape[i]) for i in data_to]
    num_filter, _, *kernel_dims = [_const(filt.shape[i]) for i in kernel_to]
    for what, channels in (("input channels", in_channel), ("output channels", num_filter)):
        if isinstance(channels, int) and channels % groups != 0:
            raise TVMValueError(f"topi.nn.conv: the {what} ({channels}) are not divisible by "
                                f"groups={groups}: input {shape_text(inp.shape)}, filter "
                                f"{shape_text(filt.shape)}")

    dilated = [(k - 1) * d + 1 for k, d in zip(kernel_dims, dilations)]
    pad_begin, pad_end = get_pad_tuple_generic(padding, dilated)
    ana = Analyzer()
    out_spatial = []
    for size, k, dil, pb, pe, s in zip(spatial, kernel_dims, dilations, pad_begin, pad_end,
                                       strides):
        extent = (size - (k - 1) * dil - 1 + pb + pe) // s + 1
        out_spatial.append(extent if isinstance(extent, int) else ana.simplify(extent))
        if isinstance(extent, int) and extent <= 0:
            raise TVMValueError(
                f"topi.nn.conv: the output would be empty: input {shape_text(inp.shape)}, "
                f"filter {shape_text(filt.shape)}, stride {tuple(strides)}, padding "
                f"{tuple(pad_begin + pad_end)}, dilation {tuple(dilations)}")
    pad_before = [([0, 0] + list(pad_begin))[i] for i in data_from]
    pad_after = [([0, 0] + list(pad_end))[i] for i in data_from]
    temp = pad(inp, pad_before, pad_after, name="pad_temp")
    rc = te.reduce_axis((0, in_channel // groups), name="rc")
    rs = [te.reduce_axis((0, k), name=f"r{n}") for n, k in zip("yxz", kernel_dims)]

    def rule(*args):
        nn, ff, *dim_indices = [args[i] for i in data_to]
        channel = rc.var if groups == 1 else \
            ff // (num_filter // groups) * (in_channel // groups) + rc.var
        data_index = [nn, channel] + [i * s + r.var * d for i, s, r, d in
                                      zip(dim_indices, strides, rs, dilations)]
        kernel_index = [ff, rc.var] + [r.var for r in rs]
        axes = [rc, *rs]
        return te.sum(
            temp[tuple(data_index[i] for i in data_from)].astype(out_dtype)
            * filt[tuple(kernel_index[i] for i in kernel_from)].astype(out_dtype),
            axis=[axes[i] for i in red_from])

    name = f"{'group_' if groups > 1 else ''}conv{dims}d_{data_layout.lower()}"
    out_shape = [([batch, num_filter] + out_spatial)[i] for i in data_from]
    index_names = [["nn", "ff", "yy", "xx", "zz"][i] for i in data_from]
    return te.compute(out_shape, rule, name=name, tag=name, varargs_names=index_names)


def conv2d(input: te.Tensor, filter: te.Tensor, strides, padding, dilation,  # noqa: A002
           data_layout: str = "NCHW", kernel_layout: str = "",
           out_dtype: str | None = None) -> te.Tensor:
    """A 2-d convolution (TVM's ``topi.nn.conv2d``): ``conv`` with one group.

    Example::

        Y = topi.nn.conv2d(X, W, strides=(2, 2), padding=(1, 1), dilation=1)
    """
    return conv(input, filter, strides, padding, dilation, 1, data_layout, kernel_layout,
                out_dtype)


def conv2d_nchw(Input: te.Tensor, Filter: te.Tensor, stride, padding, dilation,  # noqa: N803
                out_dtype: str | None = None) -> te.Tensor:
    """A 2-d convolution of NCHW data with an OIHW kernel (compute ``conv2d_nchw``).

    Example::

        Y = topi.nn.conv2d_nchw(X, W, 1, 0, 1)
    """
    return conv(Input, Filter, stride, padding, dilation, 1, "NCHW", "OIHW", out_dtype)


def group_conv2d_nchw(Input: te.Tensor, Filter: te.Tensor, stride, padding,  # noqa: N803
                      dilation, groups: int, out_dtype: str | None = None) -> te.Tensor:
    """A grouped 2-d convolution of NCHW data (compute ``group_conv2d_nchw``): the filter
    is ``(out_channels, in_channels // groups, kh, kw)``.

    Example::

        Y = topi.nn.group_conv2d_nchw(X, W, 1, 1, 1, groups=4)
    """
    return conv(Input, Filter, stride, padding, dilation, groups, "NCHW", "OIHW", out_dtype)
