"""Operators on ``nn.Tensor`` (TVM's ``relax.frontend.nn.op``).

Each emits one Relax binding into the function being traced, named after the operator
(``name=`` changes it), and returns an ``nn.Tensor`` (a tuple of them for ``split``)::

    y = nn.op.matmul(x, w)              # matmul: R.Tensor((n, 10)) = R.matmul(x, w, ...)
    p = nn.op.softmax(y, axis=-1)
    a, b = nn.op.split(y, 2, axis=1)    # split, then split_0 = split[0], split_1 = split[1]

``tensor_expr_op`` (a te function), ``tensor_ir_op`` (a PrimFunc) and ``extern`` (a
registered packed function) call code of one's own.

They record IR only while a model is exported:

>>> from mlckit.relax.frontend import nn
>>> class Head(nn.Module):
...     def forward(self, x):
...         h = nn.op.astype(nn.op.permute(x, [1, 0]), "float16")     # (4, 2)
...         q, k = nn.op.chunk(h, 2, dim=0)                           # (2, 2) each
...         s = nn.op.sum(nn.op.concat([q, k], dim=1), axis=-1, keepdims=True)
...         return nn.op.softmax(nn.op.broadcast_to(s, [2, 3]), axis=-1)
>>> mod, params = Head().export_tvm({"forward": {"x": nn.spec.Tensor([2, 4], "float32")}})
>>> mod["forward"].ret_struct_info
R.Tensor((2, 3), dtype="float16")
"""

from __future__ import annotations

import builtins

import numpy as np

from mlckit import tir
from mlckit.error import TVMNotImplementedError, TVMTypeError, TVMValueError

from ... import expr as rx
from ... import op as _op
from .core import Tensor, _require_builder, wrap_nested


def _expr(x, op: str, arg: str) -> rx.Expr:
    """The Relax expression of an ``nn.Tensor`` argument (a clear error for anything else)."""
    if isinstance(x, Tensor):
        return x._expr
    raise TVMTypeError(f"nn.op.{op}: argument {arg} must be an nn.Tensor, got "
                       f"{type(x).__name__} {x!r}")


def _binary(relax_op, op: str, default_name: str):
    def construct(a: Tensor, b: Tensor, name: str = default_name) -> Tensor:
        return wrap_nested(relax_op(_expr(a, op, "a"), _expr(b, op, "b")), name)

    construct.__name__ = construct.__qualname__ = op
    construct.__doc__ = (f"Element-wise ``{op}`` with broadcasting (``R.{relax_op.short_name}``)."
                         f"\n\nExample::\n\n    c = nn.op.{op}(a, b)\n")
    return construct


def _unary(relax_op, op: str, default_name: str):
    def construct(x: Tensor, name: str = default_name) -> Tensor:
        return wrap_nested(relax_op(_expr(x, op, "x")), name)

    construct.__name__ = construct.__qualname__ = op
    construct.__doc__ = (f"``{relax_op.name}`` of each element.\n\nExample::\n\n"
                         f"    y = nn.op.{op}(x)\n")
    return construct


# -- element-wise -------------------------------------------------------------------------------
add = _binary(_op.add, "add", "add")
subtract = _binary(_op.subtract, "subtract", "subtract")
multiply = _binary(_op.multiply, "multiply", "mul")
divide = _binary(_op.divide, "divide", "divide")
maximum = _binary(_op.maximum, "maximum", "maximum")
minimum = _binary(_op.minimum, "minimum", "minimum")
less = _binary(_op.less, "less", "less")
less_equal = _binary(_op.less_equal, "less_equal", "less_equal")
greater = _binary(_op.greater, "greater", "greater")
greater_equal = _binary(_op.greater_equal, "greater_equal", "greater_equal")
equal = _binary(_op.equal, "equal", "equal")
not_equal = _binary(_op.not_equal, "not_equal", "not_equal")

exp = _unary(_op.exp, "exp", "exp")
log = _unary(_op.log, "log", "log")
floor = _unary(_op.floor, "floor", "floor")
sqrt = _unary(_op.sqrt, "sqrt", "sqrt")
square = _unary(_op.square, "square", "square")
tanh = _unary(_op.tanh, "tanh", "tanh")
sigmoid = _unary(_op.sigmoid, "sigmoid", "sigmoid")
negative = _unary(_op.negative, "negative", "neg")
relu = _unary(_op.nn.relu, "relu", "relu")
silu = _unary(_op.nn.silu, "silu", "silu")


def gelu(x: Tensor, approximate: str | None = None, name: str = "gelu") -> Tensor:
    """GELU: exact (``R.nn.gelu``), or its tanh approximation with ``approximate="tanh"``.

    Inside a ``forward`` being exported::

        h = nn.op.gelu(x, approximate="tanh")     # R.nn.gelu_tanh
    """
    relax_op = _op.nn.gelu_tanh if approximate == "tanh" else _op.nn.gelu
    return wrap_nested(relax_op(_expr(x, "gelu", "x")), name)


def softmax(x: Tensor, axis: int = -1, name: str = "softmax") -> Tensor:
    """``exp(x) / sum(exp(x))`` along ``axis``: ``nn.op.softmax(scores, axis=-1)``.

    Inside a ``forward`` being exported::

        p = nn.op.softmax(scores, axis=-1)
    """
    return wrap_nested(_op.nn.softmax(_expr(x, "softmax", "x"), axis), name)


def astype(x: Tensor, dtype: str, name: str = "astype") -> Tensor:
    """``x`` converted to ``dtype``: ``nn.op.astype(x, "float16")``.

    Inside a ``forward`` being exported::

        h = nn.op.astype(x, "float16")
    """
    return wrap_nested(_op.astype(_expr(x, "astype", "x"), dtype), name)


def where(condition: Tensor, x1: Tensor, x2: Tensor, name: str = "where") -> Tensor:
    """``x1`` where ``condition`` is true, else ``x2`` (broadcasting): ``R.where``.

    Inside a ``forward`` being exported::

        y = nn.op.where(mask, x, nn.op.zeros(x.shape))
    """
    return wrap_nested(_op.where(_expr(condition, "where", "condition"),
                                 _expr(x1, "where", "x1"), _expr(x2, "where", "x2")), name)


# -- linear algebra -------------------------------------------------------------------------------
def matmul(a: Tensor, b: Tensor, out_dtype: str | None = None, name: str = "matmul") -> Tensor:
    """Matrix product with batch broadcasting (``R.matmul``): ``nn.op.matmul(x, w)``.

    Inside a ``forward`` being exported::

        y = nn.op.matmul(x, w)                    # (n, 784) @ (784, 10) -> (n, 10)
    """
    return wrap_nested(_op.matmul(_expr(a, "matmul", "a"), _expr(b, "matmul", "b"),
                                  out_dtype=out_dtype), name)


# -- shapes ---------------------------------------------------------------------------------------
def permute_dims(x: Tensor, axes=None, name: str | None = None) -> Tensor:
    """The dims of ``x`` reordered by ``axes`` (reversed when None): ``R.permute_dims``.

    Inside a ``forward`` being exported::

        wt = nn.op.permute_dims(w)                # (784, 10) -> (10, 784)
    """
    if name is None:
        # TVM's naming: the transpose of a ``linear...`` value is ``matmul...``
        x_name = getattr(getattr(x, "_expr", None), "name_hint", None)
        name = x_name.replace("linear", "matmul") if x_name and "linear" in x_name \
            else "permute_dims"
    return wrap_nested(_op.permute_dims(_expr(x, "permute_dims", "x"), axes=axes), name)


def permute(x: Tensor, axes, name: str = "permute") -> Tensor:
    """``permute_dims`` with the axes required.

    Inside a ``forward`` being exported::

        y = nn.op.permute(x, [0, 2, 1])           # (b, n, d) -> (b, d, n)
    """
    return wrap_nested(_op.permute_dims(_expr(x, "permute", "x"), axes=axes), name)


def reshape(x: Tensor, shape, name: str = "reshape") -> Tensor:
    """``x`` with a new shape (one dim may be -1): ``nn.op.reshape(x, [n, -1])``.

    Inside a ``forward`` being exported::

        heads = nn.op.reshape(q, [b, n, 4, -1])
    """
    return wrap_nested(_op.reshape(_expr(x, "reshape", "x"), shape), name)


def broadcast_to(x: Tensor, shape, name: str = "broadcast_to") -> Tensor:
    """``x`` broadcast to ``shape``: ``R.broadcast_to``.

    Inside a ``forward`` being exported::

        y = nn.op.broadcast_to(bias, [n, 10])     # (1, 10) -> (n, 10)
    """
    return wrap_nested(_op.broadcast_to(_expr(x, "broadcast_to", "x"), shape), name)


def unsqueeze(x: Tensor, dim: int, name: str = "unsqueeze") -> Tensor:
    """``x`` with a new dim of length 1 at ``dim`` (``R.expand_dims``).

    Inside a ``forward`` being exported::

        y = nn.op.unsqueeze(x, 0)                 # (n, d) -> (1, n, d)
    """
    return wrap_nested(_op.expand_dims(_expr(x, "unsqueeze", "x"), dim), name)


def squeeze(x: Tensor, axis: int = -1, name: str = "squeeze") -> Tensor:
    """``x`` without its length-1 dim ``axis`` (``R.squeeze``).

    Inside a ``forward`` being exported::

        y = nn.op.squeeze(x, 0)                   # (1, n, d) -> (n, d)
    """
    return wrap_nested(_op.squeeze(_expr(x, "squeeze", "x"), axis), name)


def concat(x: list, dim: int, name: str = "concat") -> Tensor:
    """The tensors of ``x`` joined along ``dim``: ``nn.op.concat([a, b], dim=1)``.

    Inside a ``forward`` being exported::

        y = nn.op.concat([a, b], dim=1)           # (n, 3), (n, 5) -> (n, 8)
    """
    exprs = [_expr(t, "concat", f"x[{i}]") for i, t in enumerate(x)]
    return wrap_nested(_op.concat(exprs, dim), name)


def split(ary: Tensor, indices_or_sections, axis: int = 0, name: str = "split") -> tuple:
    """``ary`` cut along ``axis`` into equal sections (an int) or at indices (a list).

    Inside a ``forward`` being exported::

        q, k, v = nn.op.split(qkv, 3, axis=-1)
    """
    return wrap_nested(_op.split(_expr(ary, "split", "ary"), indices_or_sections, axis), name)


def chunk(x: Tensor, chunks: int, dim: int = 0, name: str = "chunk") -> tuple:
    """``x`` cut into ``chunks`` equal sections along ``dim``.

    Inside a ``forward`` being exported::

        q, k, v = nn.op.chunk(qkv, 3, dim=-1)
    """
    return wrap_nested(_op.split(_expr(x, "chunk", "x"), chunks, dim), name)


def take(x: Tensor, indices: Tensor, axis: int | None = None, name: str = "take") -> Tensor:
    """The entries of ``x`` at ``indices`` along ``axis`` (``R.take``): an embedding lookup.

    Inside a ``forward`` being exported::

        h = nn.op.take(table, ids, axis=0)        # an embedding lookup
    """
    return wrap_nested(_op.take(_expr(x, "take", "x"), _expr(indices, "take", "indices"), axis),
                       name)


# -- reductions -----------------------------------------------------------------------------------
def sum(x: Tensor, axis=None, keepdims: bool = False, name: str = "sum") -> Tensor:  # noqa: A001
    """The sum over ``axis`` (all dims when None): ``R.sum``.

    Inside a ``forward`` being exported::

        s = nn.op.sum(x, axis=-1, keepdims=True)
    """
    return wrap_nested(_op.sum(_expr(x, "sum", "x"), axis, keepdims), name)


def max(x: Tensor, axis=None, keepdims: bool = False, name: str = "max") -> Tensor:  # noqa: A001
    """The maximum over ``axis`` (all dims when None): ``R.max``.

    Inside a ``forward`` being exported::

        m = nn.op.max(scores, axis=-1, keepdims=True)
    """
    return wrap_nested(_op.max(_expr(x, "max", "x"), axis, keepdims), name)


def min(x: Tensor, axis=None, keepdims: bool = False, name: str = "min") -> Tensor:  # noqa: A001
    """The minimum over ``axis`` (all dims when None): ``R.min``.

    Inside a ``forward`` being exported::

        m = nn.op.min(x, axis=0)
    """
    return wrap_nested(_op.min(_expr(x, "min", "x"), axis, keepdims), name)


# -- creation ------------------------------------------------------------------------------------
def full(shape, fill_value, dtype: str = "float32", name: str = "full") -> Tensor:
    """A tensor of ``shape`` filled with ``fill_value`` (a number or a scalar nn.Tensor).

    Inside a ``forward`` being exported::

        mask = nn.op.full([n, n], -1e9)
    """
    if isinstance(fill_value, (tir.IntImm, tir.FloatImm)):
        fill_value = fill_value.value
    if isinstance(fill_value, (int, float)):
        value = rx.const(fill_value, dtype=dtype)
    else:
        value = _expr(fill_value, "full", "fill_value")
    return wrap_nested(_op.full(shape, value, dtype), name)


def zeros(shape, dtype: str = "float32", name: str = "zeros") -> Tensor:
    """A tensor of zeros: ``nn.op.zeros([n, 16])``.

    Inside a ``forward`` being exported::

        h0 = nn.op.zeros([n, 16])
    """
    return wrap_nested(_op.zeros(shape, dtype), name)


def ones(shape, dtype: str = "float32", name: str = "ones") -> Tensor:
    """A tensor of ones: ``nn.op.ones([n, 16])``.

    Inside a ``forward`` being exported::

        w = nn.op.ones([16])
    """
    return wrap_nested(_op.ones(shape, dtype), name)


# -- neural-network layers ---------------------------------------------------------------------------
def layer_norm(x: Tensor, normalized_shape, weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-5, name: str = "layer_norm") -> Tensor:
    """Layer normalization over the last ``len(normalized_shape)`` dims (``R.nn.layer_norm``);
    without ``weight``/``bias`` they are constants 1 and 0.

    Inside a ``forward`` being exported::

        y = nn.op.layer_norm(x, [d], gamma, beta)
    """
    if isinstance(normalized_shape, int):
        normalized_shape = [normalized_shape]
    axes = list(range(-len(normalized_shape), 0))
    data = _expr(x, "layer_norm", "x")
    gamma = (_expr(weight, "layer_norm", "weight") if weight is not None
             else rx.const(np.ones(normalized_shape), dtype=x.dtype))
    beta = (_expr(bias, "layer_norm", "bias") if bias is not None
            else rx.const(np.zeros(normalized_shape), dtype=x.dtype))
    return wrap_nested(_op.nn.layer_norm(data, gamma, beta, axes=axes, epsilon=eps), name)


def rms_norm(x: Tensor, weight: Tensor, axes, epsilon: float = 1e-5,
             name: str = "rms_norm") -> Tensor:
    """``x / sqrt(mean(x ** 2 over axes) + epsilon) * weight`` (``R.nn.rms_norm``).

    Inside a ``forward`` being exported::

        y = nn.op.rms_norm(x, weight, axes=[-1])
    """
    return wrap_nested(_op.nn.rms_norm(_expr(x, "rms_norm", "x"),
                                       _expr(weight, "rms_norm", "weight"), axes, epsilon), name)


def group_norm(x: Tensor, num_groups: int, weight: Tensor | None, bias: Tensor | None,
               eps: float = 1e-5, channel_axis: int = 1, axes=None,
               name: str = "group_norm") -> Tensor:
    """Group normalization (``R.nn.group_norm``) over the channels of each group and
    ``axes`` (all dims after the first two when None).

    Inside a ``forward`` being exported::

        y = nn.op.group_norm(x, num_groups=4, weight=gamma, bias=beta)
    """
    if weight is None or bias is None:
        raise TVMNotImplementedError(
            "nn.op.group_norm without weight and bias (nn.GroupNorm(affine=False)) is not "
            "supported: TVM's R.nn.group_norm needs both; pass tensors of ones and zeros")
    axes = list(range(2, x.ndim)) if axes is None else axes
    return wrap_nested(_op.nn.group_norm(_expr(x, "group_norm", "x"),
                                         _expr(weight, "group_norm", "weight"),
                                         _expr(bias, "group_norm", "bias"), num_groups,
                                         channel_axis=channel_axis, axes=axes, epsilon=eps), name)


def conv1d(x: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0,
           dilation=1, groups: int = 1, name: str = "conv1d") -> Tensor:
    """1-D convolution (``R.nn.conv1d``, NCW data), ``bias`` (per output channel) added
    after it.

    Inside a ``forward`` being exported::

        y = nn.op.conv1d(x, w, bias, padding=1)   # NCW
    """
    out = _op.nn.conv1d(_expr(x, "conv1d", "x"), _expr(weight, "conv1d", "weight"),
                        strides=stride, padding=padding, dilation=dilation, groups=groups)
    if bias is not None:
        out = _op.add(out, _op.reshape(_expr(bias, "conv1d", "bias"), [1, -1, 1]))
    return wrap_nested(out, name)


def conv2d(x: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0,
           dilation=1, groups: int = 1, data_layout: str = "NCHW", name: str = "conv2d") -> Tensor:
    """2-D convolution (``R.nn.conv2d``), ``bias`` (per output channel) added after it.

    Inside a ``forward`` being exported::

        y = nn.op.conv2d(x, w, bias, stride=1, padding=1)   # NCHW
    """
    out = _op.nn.conv2d(_expr(x, "conv2d", "x"), _expr(weight, "conv2d", "weight"),
                        strides=stride, padding=padding, dilation=dilation, groups=groups,
                        data_layout=data_layout)
    if bias is not None:
        if data_layout not in ("NCHW", "NHWC"):
            raise TVMValueError(f"nn.op.conv2d: a bias with data_layout={data_layout!r}: only "
                                "NCHW and NHWC are known (as in TVM)")
        bias_shape = [1, -1, 1, 1] if data_layout == "NCHW" else [1, 1, 1, -1]
        out = _op.add(out, _op.reshape(_expr(bias, "conv2d", "bias"), bias_shape))
    return wrap_nested(out, name)


# -- calling code of one's own ---------------------------------------------------------------------
def tensor_expr_op(tensor_expr_func, name_hint: str, args: list, *, attrs: dict | None = None):
    """Call the PrimFunc made from the te function ``tensor_expr_func`` (``bb.emit_te``);
    tensors in ``args`` become te placeholders, other values are passed as they are::

        x = nn.tensor_expr_op(topi.nn.relu, "relu", [x])
    """
    bb = _require_builder(f"nn.tensor_expr_op({name_hint!r})")
    converted = [a._expr if isinstance(a, Tensor) else a for a in args]
    if attrs:
        raise TVMNotImplementedError(f"nn.tensor_expr_op({name_hint!r}): attrs= is not supported by "
                            "mlckit yet")
    return wrap_nested(bb.emit_te(tensor_expr_func, *converted, primfunc_name_hint=name_hint),
                       name_hint)


def tensor_ir_op(func, name_hint: str, args, out):
    """Call the PrimFunc ``func`` (added to the module as ``name_hint``) with ``R.call_tir``;
    ``args`` are tensors, then shape/PrimExpr values for its extra scalar parameters;
    ``out`` describes the outputs (``nn.Tensor.placeholder``)::

        y = nn.tensor_ir_op(tir_linear, "tir_linear", [x, w, b],
                            out=nn.Tensor.placeholder((n, 10), "float32"))
    """
    bb = _require_builder(f"nn.tensor_ir_op({name_hint!r})")
    tensors, tir_vars = [], []
    for i, arg in enumerate(args if isinstance(args, (list, tuple)) else [args]):
        if isinstance(arg, Tensor):
            tensors.append(arg._expr)
        elif isinstance(arg, (rx.ShapeExpr, tir.PrimExpr)):
            tir_vars.append(arg)
        else:
            raise TVMTypeError(f"nn.tensor_ir_op({name_hint!r}): args[{i}] is "
                               f"{type(arg).__name__}; expected an nn.Tensor, a ShapeExpr or a "
                               "PrimExpr")
    out_sinfo = _out_struct_infos(out, "nn.tensor_ir_op", name_hint)
    gvar = bb.add_func(func, name_hint)
    call = _op.call_tir(gvar, tensors, out_sinfo, tir_vars=tir_vars or None)
    return wrap_nested(bb.emit(call), name_hint)


def extern(name: str, args, out):
    """Call the packed function registered as ``name`` (``R.call_dps_packed``): it receives
    the arguments and the output tensors to fill::

        x = nn.extern("env.linear", [x, w, b], out=nn.Tensor.placeholder((n, 128), "float32"))
    """
    def convert(arg):
        if isinstance(arg, Tensor):
            return arg._expr
        if isinstance(arg, bool) or not isinstance(arg, (int, float, str, tir.PrimExpr,
                                                         list, tuple)):
            raise TVMTypeError(f"nn.extern({name!r}): unsupported argument "
                               f"{type(arg).__name__} {arg!r}")
        if isinstance(arg, int):
            return rx.PrimValue(tir.IntImm("int64", arg))
        if isinstance(arg, float):
            return rx.PrimValue(tir.FloatImm("float64", arg))
        if isinstance(arg, str):
            return rx.StringImm(arg)
        if isinstance(arg, tir.PrimExpr):
            return rx.PrimValue(arg)
        return rx.Tuple([convert(a) for a in arg])

    _require_builder(f"nn.extern({name!r})")
    out_sinfo = _out_struct_infos(out, "nn.extern", name)
    out_sinfo = out_sinfo[0] if isinstance(out, Tensor) else out_sinfo
    return wrap_nested(_op.call_dps_packed(name, convert(list(args)), out_sinfo), name)


def debug_func(name: str, *args, _line_info: str | None = None):
    """TVM calls the registered debug function ``name`` at run time through the VM builtin
    ``vm.builtin.invoke_debug_func``, which mlckit's VM does not have: refused clearly.

    Inside a ``forward`` being exported::

        nn.op.debug_func("my_debug_hook", x)
    """
    raise TVMNotImplementedError(
        f"nn.op.debug_func({name!r}) needs the VM builtin vm.builtin.invoke_debug_func, which "
        "mlckit's VM does not have yet; return the tensor from forward to look at it")


def print_(tensor: Tensor):
    """TVM prints ``tensor`` at run time (in ``debug=True`` exports) through
    ``debug_func``, which mlckit does not have: refused clearly.

    Inside a ``forward`` being exported::

        nn.op.print_(h)
    """
    raise TVMNotImplementedError(
        "nn.print_ prints through the VM builtin vm.builtin.invoke_debug_func, which mlckit's "
        "VM does not have yet; return the tensor from forward to look at it")


def _out_struct_infos(out, what: str, name: str) -> list:
    outs = [out] if isinstance(out, Tensor) else out
    if not isinstance(outs, (list, tuple)) or not builtins.all(isinstance(o, Tensor)
                                                               for o in outs):
        raise TVMTypeError(f"{what}({name!r}): out must be an nn.Tensor or a list of them "
                           "(nn.Tensor.placeholder(shape, dtype))")
    return [o._expr.struct_info for o in outs]


__all__ = ["add", "astype", "broadcast_to", "chunk", "concat", "conv1d", "conv2d", "debug_func",
           "divide", "equal", "exp", "extern", "floor", "full", "gelu", "greater",
           "greater_equal", "group_norm", "layer_norm", "less", "less_equal", "log", "matmul",
           "max", "maximum", "min", "minimum", "multiply", "negative", "not_equal", "ones",
           "permute", "permute_dims", "print_", "relu", "reshape", "rms_norm", "sigmoid", "silu",
           "softmax", "split", "sqrt", "square", "squeeze", "subtract", "sum", "take", "tanh",
           "tensor_expr_op", "tensor_ir_op", "unsqueeze", "where", "zeros"]
