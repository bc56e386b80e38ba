"""Pooling (TVM's ``topi.nn.pool2d``, ``topi.nn.adaptive_pool``, ``topi.nn.global_pool``).

``pool2d`` slides a ``kernel`` window with ``stride`` and ``dilation`` over the H and W
dimensions of ``layout`` (``NCHW``, ``NHWC``, ``NCHW16c`` …), after padding into
``pad_temp`` when any padding is needed.  Max pooling is one reduction ``pool_max``; average
pooling sums into ``pool_sum`` and divides in ``pool_avg`` by the window size, counting the
padded elements or not (``count_include_pad``)::

    X = te.placeholder((1, 8, 32, 32), name="X")
    Y = topi.nn.pool2d(X, (2, 2), (2, 2), (1, 1), (0, 0, 0, 0), "max")   # (1, 8, 16, 16)

``adaptive_pool`` splits H and W into ``output_size`` nearly equal windows (window ``i`` of
``out`` over ``size`` covers ``[i*size//out, ceil((i+1)*size/out))``).
"""

from __future__ import annotations

from mlckit import te
from mlckit.arith import Analyzer
from mlckit.error import TVMValueError
from mlckit.tir import op as tir_op
from mlckit.tir.expr import IntImm, PrimExpr, Select, cast, const, convert

from .. import tag as _tag
from ..utils import check_tensor, select_dim
from .pad import pad


def spatial_axes(op_name: str, layout: str, letters: str) -> list[int]:
    """The positions of the (upper-case) ``letters`` in ``layout``; a layout whose split
    dimension (``16c``) splits one of them is refused, as TVM does."""
    axes = []
    for letter in letters:
        pos = layout.find(letter)
        if pos < 0 or letter.lower() in layout:
            raise TVMValueError(f"topi.nn.{op_name}: unsupported layout {layout!r}: it needs an "
                                f"unsplit {letter} dimension")
        axes.append(_dim_index(layout, pos))
    return axes


def _dim_index(layout: str, pos: int) -> int:
    """The dimension a layout letter at ``pos`` names (``NCHW16c``: digits are not dims)."""
    return sum(1 for ch in layout[:pos] if ch.isalpha())


def _int(value) -> PrimExpr:
    return convert(value)


def pool_impl_nd(x: te.Tensor, kernel, stride, dilation, padding, pool_type: str,
                 ceil_mode: bool, axes: list[int], count_include_pad: bool) -> te.Tensor:
    """Pooling over the dimensions ``axes`` of ``x``; ``padding`` lists the pads before
    every axis, then the pads after."""
    x = check_tensor("nn.pool", x, "data")
    dims = len(kernel)
    if len(stride) != dims or len(dilation) != dims or len(padding) != 2 * dims:
        raise TVMValueError(
            f"topi.nn.pool: pool_size {tuple(kernel)} needs {dims} strides, {dims} dilations "
            f"and {2 * dims} paddings; got strides {tuple(stride)}, dilation "
            f"{tuple(dilation)}, padding {tuple(padding)}")
    kernel = [_int(k) for k in kernel]
    stride = [_int(s) for s in stride]
    dilation = [_int(d) for d in dilation]
    pad_head = [_int(p) for p in padding[:dims]]
    pad_tail = [_int(p) for p in padding[dims:]]
    out_shape, pad_before, pad_after, offset, daxis, do_pad = _pool_geometry(
        x, kernel, stride, dilation, pad_head, pad_tail, axes, ceil_mode)

    def window_index(output):
        indices = list(output)
        for i, ax in enumerate(axes):
            indices[ax] = output[ax] * stride[i] + daxis[i].var * dilation[i]
        return indices

    if pool_type == "max":
        temp = pad(x, pad_before, pad_after, tir_op.min_value(x.dtype), "pad_temp") \
            if do_pad else x
        return te.compute(out_shape, lambda *out: te.max(temp(*window_index(out)), axis=daxis),
                          name="pool_max", tag="pool_max",
                          attrs={"schedule_rule": "meta_schedule.pool_max"},
                          varargs_names=[f"ax{i}" for i in range(x.ndim)])
    if pool_type != "avg":
        raise TVMValueError(f"topi.nn.pool: pool_type must be 'max' or 'avg', got {pool_type!r}")
    temp = pad(x, pad_before, pad_after, 0.0, "pad_temp") if do_pad else x
    names = [f"ax{i}" for i in range(x.ndim)]
    pool_sum = te.compute(out_shape, lambda *out: te.sum(temp(*window_index(out)), axis=daxis),
                          name="pool_sum", tag="pool_sum", varargs_names=names)

    def average(*out):
        num_el = const(1, "int32")
        for i, ax in enumerate(axes):
            start = out[ax] * stride[i] - pad_head[i]
            end = start + (kernel[i] - 1) * dilation[i]
            if count_include_pad:
                end = tir_op.min(end, x.shape[ax] + pad_tail[i] - 1 - offset[i])
                num_el = num_el * (tir_op.div(end - start, dilation[i]) + 1)
            else:
                # steps along the dilated window from a padded start to the first real element
                jumps = tir_op.div(dilation[i] - 1 - start, dilation[i])
                jumps = tir_op.max(jumps, const(0, jumps.dtype))
                end = tir_op.min(end, x.shape[ax] - 1)
                num_el = num_el * (tir_op.div(end - (start + dilation[i] * jumps), dilation[i])
                                   + 1)
        if not count_include_pad:
            num_el = tir_op.max(num_el, const(1, "int32"))
        return tir_op.div(pool_sum(*out), cast(num_el, x.dtype))

    return te.compute(out_shape, average, name="pool_avg", tag=_tag.ELEMWISE,
                      attrs={"schedule_rule": "meta_schedule.pool_avg"}, varargs_names=names)


def _pool_geometry(x, kernel, stride, dilation, pad_head, pad_tail, axes, ceil_mode):
    """The output shape, the pads before and after every dimension of ``x``, the extra
    ceil-mode pad of each pooled axis, the window's reduce axes and whether to pad at all
    (``pad_tail`` grows by the ceil-mode pad, in place)."""
    dims = len(kernel)
    offset = [_int(0)] * dims
    pad_before = [_int(0)] * x.ndim
    pad_after = [_int(0)] * x.ndim
    out_shape = list(x.shape)
    ana = Analyzer()
    daxis = []
    do_pad = False
    for i, ax in enumerate(axes):
        if ceil_mode:
            # extra padding after so that the division by the stride rounds up
            offset[i] = stride[i] - 1
            pad_tail[i] = pad_tail[i] + offset[i]
        do_pad = do_pad or not _is_zero(pad_head[i]) or not _is_zero(pad_tail[i])
        daxis.append(te.reduce_axis((0, kernel[i]), name=f"rv{i}"))
        pad_before[ax] = pad_head[i]
        pad_after[ax] = pad_tail[i]
        numerator = x.shape[ax] - (kernel[i] - 1) * dilation[i] - 1 + pad_head[i] + pad_tail[i]
        raw = tir_op.indexdiv(numerator, stride[i]) + 1
        if ceil_mode:
            # a last window starting inside the bottom padding is dropped
            invalid_last = (raw - 1) * stride[i] >= x.shape[ax] + pad_head[i]
            out_shape[ax] = ana.simplify(select_dim(invalid_last, raw - 1, raw))
        else:
            out_shape[ax] = ana.simplify(raw)
    return out_shape, pad_before, pad_after, offset, daxis, do_pad


def _is_zero(value) -> bool:
    return isinstance(value, IntImm) and value.value == 0


def pool2d(data: te.Tensor, kernel, stride, dilation, padding, pool_type: str,
           ceil_mode: bool = False, layout: str = "NCHW",
           count_include_pad: bool = True) -> te.Tensor:
    """2-d max or average pooling over the H and W of ``layout``; ``padding`` is
    ``(top, left, bottom, right)``.

    Example::

        Y = topi.nn.pool2d(X, (3, 3), (2, 2), (1, 1), (1, 1, 1, 1), "avg", layout="NHWC")
    """
    axes = spatial_axes("pool2d", layout, "HW")
    return pool_impl_nd(data, list(kernel), list(stride), list(dilation), list(padding),
                        pool_type, ceil_mode, axes, count_include_pad)


def _start_index(out_index, odim, idim):
    return tir_op.indexdiv(out_index * idim, odim)


def _end_index(out_index, odim, idim):
    tmp = tir_op.indexdiv((out_index + 1) * idim, odim)
    exact = Analyzer().simplify(convert(tir_op.indexmod((out_index + 1) * idim, odim) == 0))
    if isinstance(exact, IntImm):  # a window end known statically (TVM's simplifier folds it)
        return tmp if exact.value else tmp + 1
    return Select(exact, tmp, tmp + 1)


def adaptive_pool_impl(x: te.Tensor, output_size, pool_type: str, axes: list[int]) -> te.Tensor:
    """Adaptive pooling of the dimensions ``axes`` of ``x`` to ``output_size``."""
    x = check_tensor("nn.adaptive_pool", x, "data")
    if len(output_size) != len(axes):
        raise TVMValueError(f"topi.nn.adaptive_pool: output_size {tuple(output_size)} needs "
                            f"{len(axes)} values")
    in_size = [x.shape[ax] for ax in axes]
    # a plain int takes the dtype of the dimension it replaces
    out_size = [convert(s, d.dtype) if isinstance(s, int) else convert(s)
                for s, d in zip(output_size, in_size)]
    out_shape = list(x.shape)
    for ax, size in zip(axes, out_size):
        out_shape[ax] = size
    names = [f"ax{i}" for i in range(x.ndim)]

    def windows(output, reduce_indices: bool):
        indices = list(output)
        raxes = []
        for i, ax in enumerate(axes):
            start = _start_index(output[ax], out_size[i], in_size[i])
            end = _end_index(output[ax], out_size[i], in_size[i])
            rv = te.reduce_axis((0, Analyzer().simplify(end - start)), name=f"rv{i}")
            raxes.append(rv)
            if reduce_indices:
                indices[ax] = start + rv.var
        return indices, raxes

    if pool_type == "max":
        def max_rule(*out):
            indices, raxes = windows(out, True)
            return te.max(x(*indices), axis=raxes)

        return te.compute(out_shape, max_rule, name="adaptive_pool_max", tag="adaptive_pool_max",
                          attrs={"schedule_rule": "meta_schedule.adaptive_pool_max"},
                          varargs_names=names)
    if pool_type != "avg":
        raise TVMValueError(f"topi.nn.adaptive_pool: pool_type must be 'max' or 'avg', got "
                            f"{pool_type!r}")

    def sum_rule(*out):
        indices, raxes = windows(out, True)
        return te.sum(x(*indices), axis=raxes)

    pool_sum = te.compute(out_shape, sum_rule, name="adaptive_pool_sum",
                          tag="adaptive_pool_sum", varargs_names=names)

    def avg_rule(*out):
        _, raxes = windows(out, False)
        factor = const(1, x.dtype)
        for rv in raxes:
            factor = factor * cast(rv.dom.extent, "int32")
        return tir_op.div(pool_sum(*out), factor)

    return te.compute(out_shape, avg_rule, name="adaptive_pool_avg", tag=_tag.ELEMWISE,
                      attrs={"schedule_rule": "meta_schedule.adaptive_pool_avg"},
                      varargs_names=names)


def adaptive_pool(data: te.Tensor, output_size, pool_type: str,
                  layout: str = "NCHW") -> te.Tensor:
    """2-d adaptive max or average pooling to ``output_size`` over H and W.

    Example::

        Y = topi.nn.adaptive_pool(X, (1, 1), "avg")       # global average pooling
    """
    return adaptive_pool_impl(data, list(output_size), pool_type,
                              spatial_axes("adaptive_pool", layout, "HW"))


def global_pool(data: te.Tensor, pool_type: str, layout: str = "NCHW") -> te.Tensor:
    """Pooling of all of H and W to 1 x 1. ``Y = topi.nn.global_pool(X, "avg")``.

    >>> from mlckit import te, topi
    >>> X = te.placeholder((1, 3, 8, 8), "float32", name="X")
    >>> topi.nn.global_pool(X, "avg").shape
    [1, 3, 1, 1]
    """
    return adaptive_pool(data, (1, 1), pool_type, layout)
