"""``relax.op.nn.conv2d`` (TVM's name, attributes and shape rule) and its implementations;
``relax.op.nn.conv1d`` the same in one dimension (NCW data, OIW kernel; generic lowering);
``relax.op.nn.conv2d_transpose`` (IOHW kernel; lowered through TOPI for NCHW without dilation).

    lv = R.nn.conv2d(x, w, strides=1, padding=1)             # NCHW data, OIHW kernel
    lv = R.nn.conv2d(x, w, padding=(1, 2), groups=4, out_dtype="float32")

Output size: ``(size + pad_before + pad_after - dilation * (k - 1) - 1) // stride + 1``.
``padding`` takes 1 value (all sides), 2 (top/bottom, left/right) or 4 (top, left, bottom,
right).

Implementations (``mlckit.relax.strategy``):

- ``conv2d.generic`` (level 10): TVM's ``topi.nn.conv`` for any layouts whose output layout
  is the data layout (``pad_temp`` then ``conv2d_<layout>``);
- ``conv2d.tiled`` (level 15, ``llvm``): for NCHW/OIHW, one group and static shapes, the same
  PrimFunc scheduled: padding inlined, output channels tiled by 4 (unrolled), output columns
  by 4–16 (vectorized), each tile accumulated in a ``local`` buffer.
"""

from __future__ import annotations

from mlckit import topi
from mlckit.arith import Analyzer
from mlckit.ir.node import node
from mlckit.tir import dtype as dt
from mlckit.tir import expr as tx

from ...expr import Call
from ...struct_info import TensorStructInfo
from ..axis_common import dim_text, int_tuple
from ..op_attrs import Attrs
from ..op_common import (
    OpTypeError,
    as_expr,
    dtype_or_void,
    fail,
    shape_text,
    sinfo_dtype,
    tensor_args,
)
from ..op_def import def_op
from .layout import complete_padding_2d, from_canonical, layout_permutation, pair, to_canonical


@node
class Conv2DAttrs(Attrs):
    """``conv2d``'s attributes, in TVM's order."""

    strides: tuple = (1, 1)
    padding: tuple = (0, 0, 0, 0)
    dilation: tuple = (1, 1)
    groups: int = 1
    data_layout: str = "NCHW"
    kernel_layout: str = "OIHW"
    out_layout: str = "NCHW"
    out_dtype: str = "void"


@def_op("relax.nn.conv2d", arguments=("data", "weight"))
def conv2d(data, weight, strides=(1, 1), padding=(0, 0), dilation=(1, 1), groups: int = 1,
           data_layout: str = "NCHW", kernel_layout: str = "OIHW", out_layout=None,
           out_dtype=None) -> Call:
    """2-d convolution of ``data`` with ``weight`` (``(out_channels, in_channels // groups,
    kh, kw)`` in OIHW).

    Example::

        lv = R.nn.conv2d(x, w, strides=(2, 2), padding=(1, 1))
    """
    op = "relax.nn.conv2d"
    if int(groups) <= 0:
        raise OpTypeError(f"{op}: groups={groups} must be positive")
    attrs = Conv2DAttrs(pair(strides, op, "strides"), complete_padding_2d(padding, op),
                        pair(dilation, op, "dilation"), int(groups), data_layout,
                        kernel_layout, data_layout if out_layout is None else out_layout,
                        dtype_or_void(out_dtype, op))
    return Call(conv2d.op, [as_expr(data, op, "data"), as_expr(weight, op, "weight")], attrs)


def _known_unequal(a, b) -> bool:
    diff = Analyzer().simplify(a - b)
    return isinstance(diff, tx.IntImm) and diff.value != 0


def _infer_conv(call: Call, data_default: str, kernel_default: str) -> TensorStructInfo:
    """The result of a convolution over ``len(data_default) - 2`` spatial axes (conv1d:
    ``NCW``/``OIW``, conv2d: ``NCHW``/``OIHW``); padding is all the starts, then all the
    ends."""
    data, weight = tensor_args(call)
    a = call.attrs
    rank = len(data_default)
    data_perm = layout_permutation(call, a.data_layout, data_default, "data_layout")
    kernel_perm = layout_permutation(call, a.kernel_layout, kernel_default, "kernel_layout")
    out_perm = layout_permutation(call, a.out_layout, data_default, "out_layout")
    for name, s in (("data", data), ("weight", weight)):
        if s.ndim not in (-1, rank):
            fail(call, f"requires {name} to be {rank}-d, but its shape is "
                       f"{shape_text(s.dims) if s.dims is not None else f'of rank {s.ndim}'}")
    out_dtype = sinfo_dtype(a.out_dtype)
    if not out_dtype:
        if data.dtype and weight.dtype and data.dtype != weight.dtype:
            fail(call, f"the dtypes of data ({data.dtype}) and weight ({weight.dtype}) must be "
                       "equal (or give out_dtype)", OpTypeError)
        out_dtype = data.dtype if data.dtype and weight.dtype else ""
    if data.dims is None or weight.dims is None:
        return TensorStructInfo(None, out_dtype, rank)
    n, c, *spatial = to_canonical(data.dims, data_perm)
    o, i, *kernel = to_canonical(weight.dims, kernel_perm)
    if _known_unequal(c, i * a.groups):
        fail(call, f"data {shape_text(data.dims)} has {dim_text(c)} input channels, but "
                   f"weight {shape_text(weight.dims)} expects {dim_text(i)} x "
                   f"groups={a.groups}")
    if _known_unequal(tx.floormod(o, a.groups), 0):
        fail(call, f"the output channels of weight {shape_text(weight.dims)} "
                   f"({dim_text(o)}) are not divisible by groups={a.groups}")
    ana, axes = Analyzer(), len(spatial)
    begin, end = a.padding[:axes], a.padding[axes:]
    out = [ana.simplify(tx.floordiv(x + (begin[d] + end[d]) - a.dilation[d] * (k - 1) - 1,
                                    a.strides[d]) + 1)
           for d, (x, k) in enumerate(zip(spatial, kernel))]
    for what, d in zip(("height", "width")[-axes:], out):
        if isinstance(d, tx.IntImm) and d.value <= 0:
            fail(call, f"the output {what} would be {d.value}: data {shape_text(data.dims)}, "
                       f"weight {shape_text(weight.dims)}, strides {list(a.strides)}, padding "
                       f"{list(a.padding)}, dilation {list(a.dilation)}")
    return TensorStructInfo(from_canonical([n, o, *out], out_perm), out_dtype)


@conv2d.infer
def _infer_conv2d(call: Call) -> TensorStructInfo:
    return _infer_conv(call, "NCHW", "OIHW")


def _same_layout(call: Call) -> bool:
    return call.attrs.out_layout == call.attrs.data_layout


@conv2d.legalize(condition=_same_layout)
def _lower_conv2d(bb, call: Call):
    a = call.attrs
    return bb.call_te(topi.nn.conv, call.args[0], call.args[1], list(a.strides),
                      list(a.padding), list(a.dilation), a.groups, a.data_layout,
                      a.kernel_layout, None if a.out_dtype == "void" else a.out_dtype,
                      primfunc_name_hint="conv2d")


# -- the scheduled implementation for llvm ----------------------------------------------------
def _tiles(out_channels: int, out_width: int) -> tuple[int, int] | None:
    tf = next((t for t in (4, 2) if out_channels % t == 0), None)
    tx_ = next((t for t in (16, 8, 4) if out_width % t == 0), None)
    return None if tf is None or tx_ is None else (tf, tx_)


def _tileable(call: Call) -> bool:
    a = call.attrs
    out = call.struct_info
    if (a.data_layout, a.kernel_layout, a.out_layout, a.groups) != ("NCHW", "OIHW", "NCHW", 1):
        return False
    dims = [*(out.dims or [None])] + [d for arg in call.args
                                       for d in (arg.struct_info.dims or [None])]
    if not all(isinstance(d, tx.IntImm) for d in dims) or not dt.is_float(out.dtype):
        return False
    return _tiles(out.dims[1].value, out.dims[3].value) is not None


def schedule_tiled(sch) -> None:
    """Inline the padding, tile output channels (unrolled) and columns (vectorized), and
    accumulate each tile over the input channels and the window in a ``local`` buffer."""
    conv = sch.get_block("conv2d_nchw")
    sch.compute_inline(sch.get_block("pad_temp"))
    n, f, y, x, rc, ry, rx = sch.get_loops(conv)
    tf, tx_ = _tiles(int(sch.get(f).extent.value), int(sch.get(x).extent.value))
    f0, f1 = sch.split(f, factors=[None, tf])
    x0, x1 = sch.split(x, factors=[None, tx_])
    sch.reorder(n, f0, y, x0, rc, ry, rx, f1, x1)
    local = sch.cache_write(conv, 0, "local")
    sch.reverse_compute_at(local, x0)
    sch.vectorize(x1)
    sch.unroll(f1)
    sch.decompose_reduction(conv, rc)  # last, as TVM requires (see matmul's schedule_tiled)


@conv2d.implement("conv2d.tiled", level=15, targets="llvm", condition=_tileable,
                  schedule=schedule_tiled)
def _conv2d_tiled(bb, call: Call):
    return _lower_conv2d(bb, call)


# -- conv1d ----------------------------------------------------------------------------------------
@node
class Conv1DAttrs(Attrs):
    """``conv1d``'s attributes, in TVM's order."""

    strides: tuple = (1,)
    padding: tuple = (0, 0)
    dilation: tuple = (1,)
    groups: int = 1
    data_layout: str = "NCW"
    kernel_layout: str = "OIW"
    out_layout: str = "NCW"
    out_dtype: str = "void"


def _one(value, op: str, what: str) -> tuple:
    values = int_tuple(value, op, what)
    if len(values) != 1:
        raise OpTypeError(f"{op}: {what} {list(values)} must have 1 value")
    return values


def _padding_1d(value, op: str) -> tuple:
    pads = int_tuple(value, op, "padding")
    if len(pads) not in (1, 2):
        raise OpTypeError(f"{op}: padding {list(pads)} must have 1 value or 2 (left, right)")
    return pads * 2 if len(pads) == 1 else pads


@def_op("relax.nn.conv1d", arguments=("data", "weight"))
def conv1d(data, weight, strides=1, padding=0, dilation=1, groups: int = 1,
           data_layout: str = "NCW", kernel_layout: str = "OIW", out_layout=None,
           out_dtype=None) -> Call:
    """1-d convolution of ``data`` (NCW) with ``weight`` (``(out_channels,
    in_channels // groups, kw)`` in OIW).

    Example::

        lv = R.nn.conv1d(x, w, strides=1, padding=1)   # x: (1, 4, 8), w: (6, 4, 3)
    """
    op = "relax.nn.conv1d"
    if int(groups) <= 0:
        raise OpTypeError(f"{op}: groups={groups} must be positive")
    attrs = Conv1DAttrs(_one(strides, op, "strides"), _padding_1d(padding, op),
                        _one(dilation, op, "dilation"), int(groups), data_layout, kernel_layout,
                        data_layout if out_layout is None else out_layout,
                        dtype_or_void(out_dtype, op))
    return Call(conv1d.op, [as_expr(data, op, "data"), as_expr(weight, op, "weight")], attrs)


@conv1d.infer
def _infer_conv1d(call: Call) -> TensorStructInfo:
    return _infer_conv(call, "NCW", "OIW")


@conv1d.legalize(condition=_same_layout)
def _lower_conv1d(bb, call: Call):
    a = call.attrs
    return bb.call_te(topi.nn.conv, call.args[0], call.args[1], list(a.strides),
                      list(a.padding), list(a.dilation), a.groups, a.data_layout,
                      a.kernel_layout, None if a.out_dtype == "void" else a.out_dtype,
                      primfunc_name_hint="conv1d")


# -- conv2d_transpose ------------------------------------------------------------------------------
@node
class Conv2DTransposeAttrs(Attrs):
    """``conv2d_transpose``'s attributes, in TVM's order."""

    strides: tuple = (1, 1)
    padding: tuple = (0, 0, 0, 0)
    output_padding: tuple = (0, 0)
    dilation: tuple = (1, 1)
    groups: int = 1
    data_layout: str = "NCHW"
    kernel_layout: str = "IOHW"
    out_layout: str = "NCHW"
    out_dtype: str = "void"


@def_op("relax.nn.conv2d_transpose", arguments=("data", "weight"))
def conv2d_transpose(data, weight, strides=(1, 1), padding=(0, 0), output_padding=(0, 0),
                     dilation=(1, 1), groups: int = 1, data_layout: str = "NCHW",
                     kernel_layout: str = "IOHW", out_layout=None, out_dtype=None) -> Call:
    """The transposed 2-d convolution (the gradient of ``conv2d`` with respect to its data):
    ``weight`` is ``(in_channels, out_channels // groups, kh, kw)`` in IOHW; the output is
    ``(size - 1) * stride - pad_before - pad_after + dilation * (k - 1) + output_padding + 1``
    along each spatial axis.

    Example::

        lv = R.nn.conv2d_transpose(x, w, strides=2, padding=1, output_padding=1)
    """
    op = "relax.nn.conv2d_transpose"
    if int(groups) <= 0:
        raise OpTypeError(f"{op}: groups={groups} must be positive")
    attrs = Conv2DTransposeAttrs(
        pair(strides, op, "strides"), complete_padding_2d(padding, op),
        pair(output_padding, op, "output_padding"), pair(dilation, op, "dilation"),
        int(groups), data_layout, kernel_layout,
        data_layout if out_layout is None else out_layout, dtype_or_void(out_dtype, op))
    return Call(conv2d_transpose.op, [as_expr(data, op, "data"), as_expr(weight, op, "weight")],
                attrs)


@conv2d_transpose.infer
def _infer_conv2d_transpose(call: Call) -> TensorStructInfo:
    data, weight = tensor_args(call)
    a = call.attrs
    data_perm = layout_permutation(call, a.data_layout, "NCHW", "data_layout")
    kernel_perm = layout_permutation(call, a.kernel_layout, "IOHW", "kernel_layout")
    out_perm = layout_permutation(call, a.out_layout, "NCHW", "out_layout")
    for name, s in (("data", data), ("weight", weight)):
        if s.ndim not in (-1, 4):
            fail(call, f"requires {name} to be 4-d, but its shape is "
                       f"{shape_text(s.dims) if s.dims is not None else f'of rank {s.ndim}'}")
    out_dtype = sinfo_dtype(a.out_dtype)
    if not out_dtype:
        if data.dtype and weight.dtype and data.dtype != weight.dtype:
            fail(call, f"the dtypes of data ({data.dtype}) and weight ({weight.dtype}) must be "
                       "equal (or give out_dtype)", OpTypeError)
        out_dtype = data.dtype if data.dtype and weight.dtype else ""
    if any(p >= s for p, s in zip(a.output_padding, a.strides)):
        fail(call, f"output_padding {list(a.output_padding)} must be less than the strides "
                   f"{list(a.strides)}")
    if data.dims is None or weight.dims is None:
        return TensorStructInfo(None, out_dtype, 4)
    n, c, *spatial = to_canonical(data.dims, data_perm)
    i, o, *kernel = to_canonical(weight.dims, kernel_perm)
    if _known_unequal(c, i):
        fail(call, f"data {shape_text(data.dims)} has {dim_text(c)} input channels, but "
                   f"weight {shape_text(weight.dims)} (IOHW) expects {dim_text(i)}")
    if _known_unequal(tx.floormod(i, a.groups), 0):
        fail(call, f"the input channels of weight {shape_text(weight.dims)} ({dim_text(i)}) "
                   f"are not divisible by groups={a.groups}")
    ana = Analyzer()
    out = [ana.simplify((x - 1) * a.strides[d] - (a.padding[d] + a.padding[d + 2])
                        + a.dilation[d] * (k - 1) + a.output_padding[d] + 1)
           for d, (x, k) in enumerate(zip(spatial, kernel))]
    for what, d in zip(("height", "width"), out):
        if isinstance(d, tx.IntImm) and d.value <= 0:
            fail(call, f"the output {what} would be {d.value}: data {shape_text(data.dims)}, "
                       f"weight {shape_text(weight.dims)}, strides {list(a.strides)}, padding "
                       f"{list(a.padding)}")
    return TensorStructInfo(from_canonical([n, ana.simplify(o * a.groups), *out], out_perm),
                            out_dtype)


def _topi_transposable(call: Call) -> bool:
    """TOPI's transposed convolution: NCHW data and output, an IOHW kernel, no dilation."""
    a = call.attrs
    return ((a.data_layout, a.kernel_layout, a.out_layout) == ("NCHW", "IOHW", "NCHW")
            and tuple(a.dilation) == (1, 1))


@conv2d_transpose.legalize(condition=_topi_transposable)
def _lower_conv2d_transpose(bb, call: Call):
    a = call.attrs
    return bb.call_te(topi.nn.group_conv2d_transpose_nchw, call.args[0], call.args[1],
                      stride=list(a.strides), padding=list(a.padding),
                      out_dtype=call.struct_info.dtype, output_padding=list(a.output_padding),
                      groups=a.groups, primfunc_name_hint="conv2d_transpose")


__all__ = ["Conv1DAttrs", "Conv2DAttrs", "Conv2DTransposeAttrs", "conv1d", "conv2d",
           "conv2d_transpose", "schedule_tiled"]
