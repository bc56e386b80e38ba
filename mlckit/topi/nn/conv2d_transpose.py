"""Transposed 2-d convolution (TVM's ``topi.nn.dilate``, ``conv2d_transpose_nchw`` and
``group_conv2d_transpose_nchw``).

A transposed convolution is an ordinary one over a stretched input: ``data_dilate`` puts
``stride - 1`` zeros between the input's pixels, ``data_pad`` pads it by ``k - 1 - pad``
(plus ``output_padding`` at the bottom/right), ``kernel_transform`` turns the IOHW kernel
into OIHW and rotates it by 180 degrees, and ``compute`` convolves with stride 1::

    X = te.placeholder((1, 4, 3, 3), name="X")
    W = te.placeholder((4, 2, 3, 3), name="W")           # (in, out // groups, kh, kw)
    Y = topi.nn.group_conv2d_transpose_nchw(X, W, 2, 1, None, (1, 1), groups=2)  # (1, 4, 6, 6)

Output size: ``(size - 1) * stride - pad_before - pad_after + k + output_padding``.
"""

from __future__ import annotations

from mlckit import te
from mlckit.arith import Analyzer
from mlckit.error import TVMValueError
from mlckit.tir import op as tir_op
from mlckit.tir.expr import EQ, IntImm, const

from ..utils import check_tensor, shape_text
from .pad import pad


def dilate(data: te.Tensor, strides, dilation_value=0.0, name: str = "DilatedInput"):
    """``data`` with ``strides[i] - 1`` copies of ``dilation_value`` between neighbours along
    dimension ``i``.

    Example::

        D = topi.nn.dilate(X, [1, 1, 2, 2], name="data_dilate")   # (1, 4, 3, 3) -> (1, 4, 5, 5)
    """
    data = check_tensor("nn.dilate", data, "data")
    if len(strides) != data.ndim:
        raise TVMValueError(f"topi.nn.dilate: {len(strides)} strides for data "
                            f"{shape_text(data.shape)} of rank {data.ndim}")
    ana = Analyzer()
    shape = [ana.simplify((n - 1) * s + 1) for n, s in zip(data.shape, strides)]

    def _dilate(*indices):
        index, on_grid = [], []
        for i, s in zip(indices, strides):
            if s == 1:
                index.append(i)
            else:
                index.append(tir_op.indexdiv(i, s))
                remainder = tir_op.indexmod(i, s)
                on_grid.append(EQ(remainder, const(0, remainder.dtype)))
        if not on_grid:
            return data[tuple(index)]
        return tir_op.if_then_else(tir_op.all(*on_grid), data[tuple(index)],
                                   const(dilation_value, data.dtype))

    return te.compute(shape, _dilate, name=name)


def _pair(value, what: str) -> tuple:
    if isinstance(value, (int, IntImm)):
        return int(value), int(value)
    values = tuple(int(v) for v in value)
    if len(values) != 2:
        raise TVMValueError(f"topi.nn.conv2d_transpose: {what} {values} must have 2 values")
    return values


def _padding(padding) -> tuple:
    """``(top, left, bottom, right)`` from 1, 2 or 4 values (TVM's ``get_pad_tuple``)."""
    if isinstance(padding, (int, IntImm)):
        padding = (int(padding),)
    pads = tuple(int(p) for p in padding)
    if len(pads) == 1:
        return pads * 4
    if len(pads) == 2:
        return pads * 2
    if len(pads) == 4:
        return pads
    raise TVMValueError(f"topi.nn.conv2d_transpose: padding {pads} must have 1, 2 or 4 values")


def _stretched(data: te.Tensor, kernel_hw, stride, padding, output_padding) -> te.Tensor:
    """The input dilated by the strides and padded so that a stride-1 convolution with the
    rotated kernel gives the transposed convolution."""
    (sh, sw), (oph, opw) = _pair(stride, "stride"), _pair(output_padding, "output_padding")
    if oph >= sh or opw >= sw:
        raise TVMValueError(f"topi.nn.conv2d_transpose: output_padding {(oph, opw)} must be "
                            f"less than the strides {(sh, sw)}")
    fh, fw = kernel_hw
    top, left, bottom, right = _padding(padding)
    dilated = dilate(data, [1, 1, sh, sw], name="data_dilate")
    return pad(dilated, [0, 0, fh - 1 - top, fw - 1 - left],
               [0, 0, fh - 1 - bottom + oph, fw - 1 - right + opw], name="data_pad")


def conv2d_transpose_nchw(Input: te.Tensor, Filter: te.Tensor, strides, padding,  # noqa: N803
                          out_dtype: str | None, output_padding=(0, 0)) -> te.Tensor:
    """The transposed convolution of NCHW ``Input`` with an IOHW ``Filter``
    (``(in_channels, out_channels, kh, kw)``).

    Example::

        Y = topi.nn.conv2d_transpose_nchw(X, W, (2, 2), (1, 1), "float32", (1, 1))
    """
    return group_conv2d_transpose_nchw(Input, Filter, strides, padding, out_dtype,
                                       output_padding, 1)


def group_conv2d_transpose_nchw(data: te.Tensor, kernel: te.Tensor, stride, padding,
                                out_dtype: str | None, output_padding, groups: int
                                ) -> te.Tensor:
    """The grouped transposed convolution: ``kernel`` is ``(in_channels, out_channels //
    groups, kh, kw)``; output channel ``c`` reads the input channels of its group.

    Example::

        Y = topi.nn.group_conv2d_transpose_nchw(X, W, 2, 1, None, (1, 1), groups=2)
    """
    data = check_tensor("nn.conv2d_transpose", data, "data")
    kernel = check_tensor("nn.conv2d_transpose", kernel, "kernel")
    out_dtype = data.dtype if out_dtype is None else out_dtype
    in_channels, per_group, fh, fw = kernel.shape
    channels = data.shape[1]
    if isinstance(channels, IntImm) and channels.value % groups != 0:
        raise TVMValueError(f"topi.nn.conv2d_transpose: the input channels ({channels.value}) "
                            f"are not divisible by groups={groups}: data "
                            f"{shape_text(data.shape)}, kernel {shape_text(kernel.shape)}")
    data_pad = _stretched(data, (fh, fw), stride, padding, output_padding)
    ana = Analyzer()
    batch, _, padded_h, padded_w = data_pad.shape
    out_h, out_w = ana.simplify(padded_h - fh + 1), ana.simplify(padded_w - fw + 1)
    dh = te.reduce_axis((0, fh), name="dh")
    dw = te.reduce_axis((0, fw), name="dw")

    def rotated(o, i, h, w):
        return kernel[i, o, fh - 1 - h, fw - 1 - w]

    if groups == 1:
        kernel_transform = te.compute((per_group, in_channels, fh, fw), rotated,
                                      name="kernel_transform")
        dc = te.reduce_axis((0, in_channels), name="dc")

        def conv(b, c, h, w):
            return te.sum(data_pad[b, dc, h + dh, w + dw].astype(out_dtype)
                          * kernel_transform[c, dc, dh, dw].astype(out_dtype),
                          axis=[dc, dh, dw])

        return te.compute((batch, per_group, out_h, out_w), conv, tag="conv2d_transpose_nchw")

    # TVM names this kernel's indices (i, o, h, w)
    kernel_transform = te.compute((per_group, in_channels, fh, fw),
                                  lambda i, o, h, w: kernel[o, i, fh - 1 - h, fw - 1 - w],
                                  name="kernel_transform")
    out_channels = ana.simplify(per_group * groups)
    in_group = ana.simplify(in_channels // groups)
    dc = te.reduce_axis((0, in_group), name="dc")

    def group_conv(b, c, h, w):
        channel = c // per_group * in_group + dc
        return te.sum(data_pad[b, channel, h + dh, w + dw].astype(out_dtype)
                      * kernel_transform[c % per_group, channel, dh, dw].astype(out_dtype),
                      axis=[dc, dh, dw])

    return te.compute((batch, out_channels, out_h, out_w), group_conv,
                      tag="group_conv2d_transpose_nchw")


__all__ = ["conv2d_transpose_nchw", "dilate", "group_conv2d_transpose_nchw"]
