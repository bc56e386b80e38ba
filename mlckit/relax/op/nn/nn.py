"""Neural-network operators without windows: activations, softmax, normalizations, dropout
(TVM's ``tvm.relax.op.nn``: ``relu, gelu, gelu_tanh, silu, softmax, log_softmax,
layer_norm, rms_norm, group_norm, batch_norm, dropout``).

    lv = R.nn.relu(x)
    lv = R.nn.softmax(x, axis=-1)
    lv = R.nn.layer_norm(x, gamma, beta, axes=[-1])
    bn = R.nn.batch_norm(x, gamma, beta, mean, var, axis=1, training=False)   # a tuple

Each lowers through the te computes of ``mlckit.topi`` with TVM's PrimFunc names.
"""

from __future__ import annotations

import math

from mlckit import te, topi
from mlckit.ir.node import node
from mlckit.tir import dtype as dt
from mlckit.tir.expr import const, floormod

from ...expr import Call
from ...struct_info import TensorStructInfo, TupleStructInfo
from ..axis_common import dim_text, int_tuple, normalize_axes, normalize_axis
from ..op_attrs import Attrs
from ..op_common import (
    OpTypeError,
    arg_name,
    as_expr,
    can_prove_equal,
    check_num_args,
    fail,
    infer_unary,
    shape_text,
    tensor_arg,
    tensor_args,
)
from ..op_def import def_op


def _unary(name: str, require_float: bool, doc: str):
    full = f"relax.nn.{name}"

    def construct(data) -> Call:
        return Call(operator.op, [as_expr(data, full, "data")])

    construct.__name__ = construct.__qualname__ = name
    construct.__doc__ = f"{doc}\n\nExample::\n\n    lv = R.nn.{name}(x)\n"
    operator = def_op(full, arguments=("data",))(construct)
    operator.infer(lambda call: infer_unary(call, require_float=require_float))
    return operator


# -- activations --------------------------------------------------------------------------------
relu = _unary("relu", False, "``max(data, 0)`` element-wise.")
gelu = _unary("gelu", True, "``data * Φ(data)`` (the exact GELU, with ``erf``).")
gelu_tanh = _unary("gelu_tanh", True, "GELU's tanh approximation.")
silu = _unary("silu", True, "``data * sigmoid(data)`` (SiLU, also called swish).")


@relu.legalize
def _lower_relu(bb, call: Call):
    return bb.call_te(topi.nn.relu, call.args[0], primfunc_name_hint="relu")


@gelu.legalize
def _lower_gelu(bb, call: Call):
    def gelu(x):  # noqa: F811 - names the PrimFunc
        dtype = x.dtype
        erf_input = topi.multiply(x, const(0.5**0.5, dtype))
        if dtype == "float16":  # erf in float32, as TVM
            erf = topi.cast(topi.erf(topi.cast(erf_input, "float32")), "float16")
        else:
            erf = topi.erf(erf_input)
        half = const(0.5, dtype)
        return topi.multiply(x, topi.add(half, topi.multiply(erf, half)))

    return bb.call_te(gelu, call.args[0], primfunc_name_hint="gelu")


@gelu_tanh.legalize
def _lower_gelu_tanh(bb, call: Call):
    def gelu_tanh(x):  # noqa: F811 - names the PrimFunc
        dtype = x.dtype
        inner = topi.multiply(topi.multiply(const(math.sqrt(2.0 / math.pi), dtype), x),
                              topi.add(const(1, dtype),
                                       topi.multiply(topi.multiply(const(0.044715, dtype), x),
                                                     x)))
        return topi.multiply(topi.multiply(const(0.5, dtype), x),
                             topi.add(const(1.0, dtype), topi.tanh(inner)))

    return bb.call_te(gelu_tanh, call.args[0], primfunc_name_hint="gelu_tanh")


@silu.legalize
def _lower_silu(bb, call: Call):
    def silu(x):  # noqa: F811 - names the PrimFunc
        return topi.multiply(x, topi.sigmoid(x))

    return bb.call_te(silu, call.args[0], primfunc_name_hint="silu")


# -- softmax --------------------------------------------------------------------------------------
@node
class SoftmaxAttrs(Attrs):
    """``softmax``/``log_softmax``: the axis normalized over."""

    axis: int = -1


def _softmax_op(name: str, te_func, doc: str):
    full = f"relax.nn.{name}"

    def construct(data, axis: int = -1) -> Call:
        return Call(operator.op, [as_expr(data, full, "data")],
                    SoftmaxAttrs(int_tuple(axis, full, "axis")[0]))

    construct.__name__ = construct.__qualname__ = name
    construct.__doc__ = f"{doc}\n\nExample::\n\n    lv = R.nn.{name}(x, axis=-1)\n"
    operator = def_op(full, arguments=("data",))(construct)

    @operator.infer
    def _infer(call: Call) -> TensorStructInfo:
        data = infer_unary(call)
        if data.ndim == -1:
            return data
        if data.dtype and not (dt.is_float(data.dtype) or data.dtype.startswith("bfloat")):
            fail(call, f"requires data to have a float dtype, but its dtype is {data.dtype}; "
                       "convert it with R.astype first", OpTypeError)
        normalize_axis(call, data.ndim, call.attrs.axis)
        return data

    @operator.legalize
    def _lower(bb, call: Call):
        return bb.call_te(te_func, call.args[0], call.attrs.axis)

    return operator


softmax = _softmax_op("softmax", topi.nn.softmax,
                      "``exp(data) / sum(exp(data))`` along ``axis`` (computed stably).")
log_softmax = _softmax_op("log_softmax", topi.nn.log_softmax,
                          "``log(softmax(data))`` along ``axis`` (computed stably).")


# -- normalizations ---------------------------------------------------------------------------
def _check_norm(call: Call, axes) -> bool:
    """TVM's ``NormCheckDtypeAndShape``: float data, every other input of data's dtype and of
    rank ``len(axes)``, their dims equal to data's on ``axes``; True when some of those
    equalities are only known at run time."""
    sinfos = tensor_args(call)
    data = sinfos[0]
    norm_axes = normalize_axes(call, data.ndim, axes, "axes") if data.ndim != -1 else None
    if data.dtype and not (dt.is_float(data.dtype) or data.dtype.startswith("bfloat")):
        fail(call, f"requires data to have a float dtype, but its dtype is {data.dtype}",
             OpTypeError)
    for i, s in enumerate(sinfos[1:], start=1):
        if s.dtype != data.dtype:
            fail(call, f"requires {arg_name(call, i)} to have data's dtype {data.dtype or '?'}, "
                       f"but it is {s.dtype or 'unknown'}", OpTypeError)
        if s.ndim != len(axes):
            fail(call, f"requires {arg_name(call, i)} to have {len(axes)} dim(s) (one per "
                       f"normalized axis), but its shape is "
                       f"{shape_text(s.dims) if s.dims is not None else f'rank {s.ndim}'}")
    if norm_axes is None or data.dims is None:
        return True
    lengths = [data.dims[a] for a in norm_axes]
    unknown = False
    for i, s in enumerate(sinfos[1:], start=1):
        if s.dims is None:
            unknown = True
            continue
        for a, want, got in zip(norm_axes, lengths, s.dims):
            if not can_prove_equal(want, got):
                if _known_unequal(want, got):
                    fail(call, f"{arg_name(call, i)} {shape_text(s.dims)} does not match data "
                               f"{shape_text(data.dims)} on the axes {list(axes)}: dim {a} of "
                               f"data is {dim_text(want)}")
                unknown = True
    return unknown


def _known_unequal(a, b) -> bool:
    from mlckit.arith import Analyzer
    from mlckit.tir.expr import IntImm

    diff = Analyzer().simplify(a - b)
    return isinstance(diff, IntImm) and diff.value != 0


@node
class LayerNormAttrs(Attrs):
    """``layer_norm``: the normalized axes, epsilon, whether beta (``center``) and gamma
    (``scale``) apply."""

    axes: tuple = (-1,)
    epsilon: float = 1e-5
    center: bool = True
    scale: bool = True


@def_op("relax.nn.layer_norm", arguments=("data", "gamma", "beta"))
def layer_norm(data, gamma, beta, axes, epsilon: float = 1e-5, center: bool = True,
               scale: bool = True) -> Call:
    """``(data - mean) / sqrt(var + epsilon) * gamma + beta`` with the statistics over
    ``axes``; ``gamma`` and ``beta`` have the shape of those axes.

    Example::

        lv = R.nn.layer_norm(x, gamma, beta, axes=[-1])   # x: (n, 768), gamma: (768,)
    """
    op = "relax.nn.layer_norm"
    return Call(layer_norm.op, [as_expr(data, op, "data"), as_expr(gamma, op, "gamma"),
                                as_expr(beta, op, "beta")],
                LayerNormAttrs(int_tuple(axes, op, "axes"), float(epsilon), bool(center),
                               bool(scale)))


@layer_norm.infer
def _infer_layer_norm(call: Call) -> TensorStructInfo:
    unknown = _check_norm(call, call.attrs.axes)
    data = tensor_arg(call, 0)
    return TensorStructInfo(None, data.dtype, data.ndim) if unknown else data


@layer_norm.legalize
def _lower_layer_norm(bb, call: Call):
    attrs = call.attrs
    return bb.call_te(topi.nn.layer_norm, call.args[0], call.args[1],
                      call.args[2] if attrs.center else None, axis=list(attrs.axes),
                      epsilon=attrs.epsilon)


@node
class RMSNormAttrs(Attrs):
    """``rms_norm``: the normalized axes and epsilon."""

    axes: tuple = (-1,)
    epsilon: float = 1e-5


@def_op("relax.nn.rms_norm", arguments=("data", "weight"))
def rms_norm(data, weight, axes=(-1,), epsilon: float = 1e-5) -> Call:
    """``data / sqrt(mean(data ** 2 over axes) + epsilon) * weight`` (root mean square
    normalization); ``weight`` has the shape of the normalized axes.

    Example::

        lv = R.nn.rms_norm(x, w, axes=[-1], epsilon=1e-5)   # x: (n, 4096), w: (4096,)
    """
    op = "relax.nn.rms_norm"
    return Call(rms_norm.op, [as_expr(data, op, "data"), as_expr(weight, op, "weight")],
                RMSNormAttrs(int_tuple(axes, op, "axes"), float(epsilon)))


@rms_norm.infer
def _infer_rms_norm(call: Call) -> TensorStructInfo:
    unknown = _check_norm(call, call.attrs.axes)
    data = tensor_arg(call, 0)
    return TensorStructInfo(None, data.dtype, data.ndim) if unknown else data


@rms_norm.legalize
def _lower_rms_norm(bb, call: Call):
    def rms_norm(data, weight, axes, epsilon):  # noqa: F811 - names the PrimFunc, as TVM
        ndim = len(data.shape)
        axes = sorted(a % ndim for a in axes)
        acc = "float32" if data.dtype == "float16" else data.dtype  # float16 sums in float32
        x = (te.compute(data.shape, lambda *i: data(*i).astype(acc), name="T_cast")
             if acc != data.dtype else data)
        squares = topi.sum(topi.multiply(x, x), axis=axes, keepdims=False)
        count = const(1, acc)
        for a in axes:
            count = count * data.shape[a].astype(acc)

        def normalize(*i):
            kept = [v for d, v in enumerate(i) if d not in axes]
            normed = [v for d, v in enumerate(i) if d in axes]
            scale = te.rsqrt(squares(*kept) / count + const(epsilon, acc))
            out = x(*i) * scale * weight(*normed).astype(acc)
            return out.astype(data.dtype) if acc != data.dtype else out

        return te.compute(data.shape, normalize, name="T_rms_norm")

    return bb.call_te(rms_norm, call.args[0], call.args[1], list(call.attrs.axes),
                      call.attrs.epsilon, primfunc_name_hint="rms_norm")


@node
class GroupNormAttrs(Attrs):
    """``group_norm``: the number of groups, the channel axis, the other normalized axes,
    epsilon, and whether beta (``center``) and gamma (``scale``) apply."""

    num_groups: int = 1
    channel_axis: int = 1
    axes: tuple = ()
    epsilon: float = 1e-5
    center: bool = True
    scale: bool = True


@def_op("relax.nn.group_norm", arguments=("data", "gamma", "beta"))
def group_norm(data, gamma, beta, num_groups: int, channel_axis: int, axes,
               epsilon: float = 1e-5, center: bool = True, scale: bool = True) -> Call:
    """Group normalization: the channels (``channel_axis``) split into ``num_groups``
    groups, each normalized over its channels and ``axes``; ``gamma`` and ``beta`` have one
    value per channel.

    Example::

        lv = R.nn.group_norm(x, g, b, num_groups=2, channel_axis=1, axes=[2, 3])
    """
    op = "relax.nn.group_norm"
    if int(num_groups) <= 0:
        raise OpTypeError(f"{op}: num_groups={num_groups} must be positive")
    return Call(group_norm.op, [as_expr(data, op, "data"), as_expr(gamma, op, "gamma"),
                                as_expr(beta, op, "beta")],
                GroupNormAttrs(int(num_groups), int_tuple(channel_axis, op, "channel_axis")[0],
                               int_tuple(axes, op, "axes"), float(epsilon), bool(center),
                               bool(scale)))


@group_norm.infer
def _infer_group_norm(call: Call) -> TensorStructInfo:
    check_num_args(call)
    data, gamma, beta = tensor_args(call)
    a = call.attrs
    if data.dtype and not (dt.is_float(data.dtype) or data.dtype.startswith("bfloat")):
        fail(call, f"requires data to have a float dtype, but its dtype is {data.dtype}",
             OpTypeError)
    for i, s in ((1, gamma), (2, beta)):
        if s.dtype != data.dtype:
            fail(call, f"requires {arg_name(call, i)} to have data's dtype {data.dtype or '?'}, "
                       f"but it is {s.dtype or 'unknown'}", OpTypeError)
        if s.ndim not in (-1, 1):
            fail(call, f"requires {arg_name(call, i)} to have 1 dim (one value per channel), "
                       f"but its shape is {shape_text(s.dims)}")
    if data.ndim == -1:
        return data
    channel = normalize_axis(call, data.ndim, a.channel_axis)
    axes = normalize_axes(call, data.ndim, a.axes, "axes")
    if channel in axes:
        fail(call, f"channel_axis {a.channel_axis} is also in axes {list(a.axes)}")
    if data.dims is None:
        return data
    channels = data.dims[channel]
    if _known_unequal(floormod(channels, a.num_groups), 0):
        fail(call, f"data {shape_text(data.dims)} has {dim_text(channels)} channels (axis "
                   f"{channel}), not divisible by num_groups={a.num_groups}")
    for i, s in ((1, gamma), (2, beta)):
        if s.dims is not None and _known_unequal(s.dims[0], channels):
            fail(call, f"{arg_name(call, i)} {shape_text(s.dims)} must have one value per "
                       f"channel: data {shape_text(data.dims)} has {dim_text(channels)} "
                       f"channels on axis {channel}")
    return data


@group_norm.legalize
def _lower_group_norm(bb, call: Call):
    a = call.attrs
    ndim = call.args[0].struct_info.ndim
    channel = a.channel_axis % ndim
    axes = sorted(x % ndim for x in a.axes)

    def group_norm(data, gamma, beta):  # noqa: F811 - names the PrimFunc, as TVM
        acc = "float32" if data.dtype == "float16" else data.dtype  # float16 sums in float32
        per_group = data.shape[channel] // a.num_groups
        kept = [d for d in range(ndim) if d != channel and d not in axes]
        stats_shape = [data.shape[d] for d in kept] + [a.num_groups]

        def reduced(square: bool):
            def rule(*idx):
                rc = te.reduce_axis((0, per_group), name="rc")
                raxes = [te.reduce_axis((0, data.shape[d]), name=f"k{d}") for d in axes]
                index = [None] * ndim
                for d, i in zip(kept, idx[:-1]):
                    index[d] = i
                for d, r in zip(axes, raxes):
                    index[d] = r.var
                index[channel] = idx[-1] * per_group + rc.var
                value = data(*index).astype(acc)
                return te.sum(value * value if square else value, axis=[rc, *raxes])

            return te.compute(stats_shape, rule, name="T_sum_sq" if square else "T_sum")

        sums, squares = reduced(False), reduced(True)
        count = per_group.astype(acc)
        for d in axes:
            count = count * data.shape[d].astype(acc)

        def normalize(*i):
            stat = [i[d] for d in kept] + [i[channel] // per_group]
            mean = sums(*stat) / count
            var = squares(*stat) / count - mean * mean
            out = (data(*i).astype(acc) - mean) * te.rsqrt(var + const(a.epsilon, acc))
            out = out.astype(data.dtype) if acc != data.dtype else out
            if a.scale:
                out = out * gamma(i[channel])
            if a.center:
                out = out + beta(i[channel])
            return out

        return te.compute(data.shape, normalize, name="T_group_norm")

    return bb.call_te(group_norm, *call.args, primfunc_name_hint="group_norm")


@node
class BatchNormAttrs(Attrs):
    """``batch_norm``: the channel axis, epsilon, center/scale, momentum and whether the
    batch's statistics are used (``training``)."""

    axis: int = 1
    epsilon: float = 1e-5
    center: bool = True
    scale: bool = True
    momentum: float = 0.1
    training: bool = True


@def_op("relax.nn.batch_norm",
        arguments=("data", "gamma", "beta", "moving_mean", "moving_var"))
def batch_norm(data, gamma, beta, moving_mean, moving_var, axis: int, epsilon: float = 1e-5,
               center: bool = True, scale: bool = True, momentum: float = 0.1,
               training: bool = True) -> Call:
    """Batch normalization along ``axis``; a tuple ``(output, new_mean, new_var)`` as in
    TVM.  ``training=False`` (inference) normalizes with ``moving_mean``/``moving_var`` and
    returns them unchanged; ``training=True`` (TVM's default) uses the batch's statistics and
    updates the moving ones with ``momentum``.

    Example::

        bn = R.nn.batch_norm(x, gamma, beta, mean, var, axis=1, training=False)
        y = bn[0]
    """
    op = "relax.nn.batch_norm"
    args = [as_expr(a, op, n) for a, n in zip(
        (data, gamma, beta, moving_mean, moving_var), batch_norm.arguments)]
    return Call(batch_norm.op, args,
                BatchNormAttrs(int_tuple(axis, op, "axis")[0], float(epsilon), bool(center),
                               bool(scale), float(momentum), bool(training)))


@batch_norm.infer
def _infer_batch_norm(call: Call) -> TupleStructInfo:
    unknown = _check_norm(call, (call.attrs.axis,))
    s = tensor_args(call)
    if unknown:
        return TupleStructInfo([TensorStructInfo(None, s[0].dtype, s[0].ndim),
                                TensorStructInfo(None, s[0].dtype, 1),
                                TensorStructInfo(None, s[0].dtype, 1)])
    return TupleStructInfo([s[0], s[3], s[4]])


@batch_norm.legalize
def _lower_batch_norm(bb, call: Call):
    a = call.attrs
    return bb.call_te(topi.nn.batch_norm, *call.args, axis=a.axis, epsilon=a.epsilon,
                      center=a.center, scale=a.scale, training=a.training, momentum=a.momentum)


# -- dropout ----------------------------------------------------------------------------------
@node
class DropoutAttrs(Attrs):
    """``dropout``: the probability of dropping an element (in training)."""

    rate: float = 0.5


@def_op("relax.nn.dropout", arguments=("data",))
def dropout(data, rate: float = 0.5) -> Call:
    """Dropout: a tuple ``(output, mask)`` as in TVM.  mlckit compiles models for inference,
    where dropout is the identity: the output is ``data`` and the mask all ones.

    Example::

        lv = R.nn.dropout(x, rate=0.1)
        y = lv[0]
    """
    if not 0 <= float(rate) <= 1:
        raise OpTypeError(f"relax.nn.dropout: rate={rate} must be in [0, 1]")
    return Call(dropout.op, [as_expr(data, "relax.nn.dropout", "data")],
                DropoutAttrs(float(rate)))


@dropout.infer
def _infer_dropout(call: Call) -> TupleStructInfo:
    check_num_args(call)
    data = tensor_arg(call, 0)
    return TupleStructInfo([data, data])


@dropout.legalize
def _lower_dropout(bb, call: Call):
    def dropout(x):  # noqa: F811 - names the PrimFunc
        out = te.compute(x.shape, lambda *i: x(*i), name="T_dropout")
        mask = te.compute(x.shape, lambda *i: const(1, x.dtype), name="T_dropout_mask")
        return [out, mask]

    return bb.call_te(dropout, call.args[0], primfunc_name_hint="dropout")


__all__ = ["BatchNormAttrs", "DropoutAttrs", "GroupNormAttrs", "LayerNormAttrs", "RMSNormAttrs",
           "SoftmaxAttrs", "batch_norm", "dropout", "gelu", "gelu_tanh", "group_norm",
           "layer_norm", "log_softmax", "relu", "rms_norm", "silu", "softmax"]
