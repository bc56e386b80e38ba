"""Built-in layers (TVM's ``relax.frontend.nn`` modules): activations, ``Linear``,
convolutions, normalizations, ``Embedding``, and ``IOEffect`` (debug printing).

Parameter shapes follow PyTorch's, as TVM's: ``Linear(in, out).weight`` is ``(out, in)``.

Example::

    self.fc1 = nn.Linear(784, 256)      # fc1.weight (256, 784), fc1.bias (256,)
    self.norm = nn.LayerNorm(256)       # norm.weight, norm.bias (256,)
"""

from __future__ import annotations

from mlckit import tir

from ... import expr as rx
from ...op import null_value
from ...struct_info import ObjectStructInfo
from . import op
from .core import Effect, Module, Parameter, Tensor


class IOEffect(Effect):
    """The effect of printing while the model runs: an opaque ``_io`` object threaded
    through the exported functions (``export_tvm(..., debug=True)``).

    >>> from mlckit.relax.frontend import nn
    >>> effect = nn.IOEffect()
    >>> isinstance(effect, nn.Effect)
    True
    """

    def __init__(self):
        self.effect = None

    def emit_init(self, name_hint: str, builder) -> list:
        return [builder.emit(null_value(), f"{name_hint}.io")]

    def create(self, name_hint: str) -> list:
        return [rx.Var(f"{name_hint}.io", ObjectStructInfo())]

    def set_state(self, state_vars: list) -> None:
        (self.effect,) = state_vars

    def finalize(self) -> list:
        result, self.effect = self.effect, None
        return [result]


# -- activations --------------------------------------------------------------------------------
class ReLU(Module):
    """``max(x, 0)``: ``R.nn.relu``.

    >>> from mlckit.relax.frontend import nn
    >>> class Net(nn.Module):
    ...     def __init__(self):
    ...         self.act = nn.ReLU()
    ...     def forward(self, x):
    ...         return self.act(x)
    >>> mod, _ = Net().export_tvm({"forward": {"x": nn.spec.Tensor([2, 3], "float32")}})
    >>> "R.nn.relu" in mod["forward"].script()
    True
    """

    def forward(self, x: Tensor) -> Tensor:
        return op.relu(x)


class SiLU(Module):
    """``x * sigmoid(x)``: ``R.nn.silu``.

    >>> from mlckit.relax.frontend import nn
    >>> class Net(nn.Module):
    ...     def __init__(self):
    ...         self.act = nn.SiLU()
    ...     def forward(self, x):
    ...         return self.act(x)
    >>> mod, _ = Net().export_tvm({"forward": {"x": nn.spec.Tensor([2, 3], "float32")}})
    >>> "R.nn.silu" in mod["forward"].script()
    True
    """

    def forward(self, x: Tensor) -> Tensor:
        return op.silu(x)


class GELU(Module):
    """The exact GELU: ``R.nn.gelu``.

    >>> from mlckit.relax.frontend import nn
    >>> class Net(nn.Module):
    ...     def __init__(self):
    ...         self.act = nn.GELU()
    ...     def forward(self, x):
    ...         return self.act(x)
    >>> mod, _ = Net().export_tvm({"forward": {"x": nn.spec.Tensor([2, 3], "float32")}})
    >>> "R.nn.gelu" in mod["forward"].script()
    True
    """

    def forward(self, x: Tensor) -> Tensor:
        return op.gelu(x)


class Identity(Module):
    """Returns its input (useful to keep a layer's name).

    >>> from mlckit.relax.frontend import nn
    >>> list(nn.Identity().named_parameters())
    []
    """

    def forward(self, x: Tensor) -> Tensor:
        return x


# -- linear and convolutions ----------------------------------------------------------------------
class Linear(Module):
    """``x @ weight.T + bias``, ``weight`` of shape ``(out_features, in_features)``.

    Example::

        fc = nn.Linear(784, 256)            # R.permute_dims, R.matmul, R.add
    """

    def __init__(self, in_features, out_features, bias: bool = True, dtype: str | None = None,
                 out_dtype: str | None = None):
        self.in_features = in_features
        self.out_features = out_features
        self.out_dtype = out_dtype
        self.weight = Parameter((out_features, in_features), dtype)
        self.bias = (Parameter((out_features,), dtype if out_dtype is None else out_dtype)
                     if bias else None)

    def forward(self, x: Tensor) -> Tensor:
        y = op.matmul(x, op.permute_dims(self.weight), out_dtype=self.out_dtype)
        return y + self.bias if self.bias is not None else y

    def to(self, dtype: str | None = None) -> None:
        # with out_dtype the bias keeps it, so that ``matmul + bias`` agree
        self.weight.to(dtype=dtype)
        if self.bias is not None and self.out_dtype is None:
            self.bias.to(dtype=dtype)


class Conv1D(Module):
    """1-D convolution over ``(batch, in_channels, width)``; weight
    ``(out_channels, in_channels // groups, kernel_size)``.

    >>> from mlckit.relax.frontend import nn
    >>> [(n, p.shape, p.dtype) for n, p in nn.Conv1D(3, 8, kernel_size=3).named_parameters()]
    [('weight', [8, 3, 3], 'float32'), ('bias', [8], 'float32')]
    """

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, stride: int = 1,
                 padding: int = 0, dilation: int = 1, groups: int = 1, bias: bool = True,
                 dtype: str | None = None):
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size, self.stride, self.padding = kernel_size, stride, padding
        self.dilation, self.groups = dilation, groups
        self.weight = Parameter((out_channels, in_channels // groups, kernel_size), dtype)
        self.bias = Parameter((out_channels,), dtype) if bias else None

    def forward(self, x: Tensor) -> Tensor:
        return op.conv1d(x, self.weight, self.bias, self.stride, self.padding, self.dilation,
                         self.groups)


class Conv2D(Module):
    """2-D convolution over ``(batch, in_channels, height, width)`` (``data_layout="NCHW"``);
    weight ``(out_channels, in_channels // groups, kh, kw)``.

    Example::

        conv = nn.Conv2D(3, 16, kernel_size=3, padding=1)
    """

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0,
                 dilation=1, groups: int = 1, bias: bool = True, dtype: str | None = None,
                 data_layout: str = "NCHW"):
        self.in_channels, self.out_channels = in_channels, out_channels
        self.stride, self.padding, self.dilation = stride, padding, dilation
        self.groups, self.data_layout = groups, data_layout
        self.kernel_size = [kernel_size] * 2 if isinstance(kernel_size, int) else list(kernel_size)
        per_group = (in_channels // groups if isinstance(in_channels, int)
                     else tir.floordiv(in_channels, groups))
        self.weight = Parameter([out_channels, per_group, *self.kernel_size], dtype)
        self.bias = Parameter((out_channels,), dtype) if bias else None

    def forward(self, x: Tensor) -> Tensor:
        return op.conv2d(x, self.weight, self.bias, self.stride, self.padding, self.dilation,
                         self.groups, self.data_layout)


# -- normalizations -------------------------------------------------------------------------------
class LayerNorm(Module):
    """Normalize over the last dims (``normalized_shape``), then ``* weight + bias``.

    >>> from mlckit.relax.frontend import nn
    >>> [(n, p.shape, p.dtype) for n, p in nn.LayerNorm(8).named_parameters()]
    [('weight', [8], 'float32'), ('bias', [8], 'float32')]
    """

    def __init__(self, normalized_shape: int, eps: float = 1e-5, elementwise_affine: bool = True,
                 dtype: str | None = None):
        self.normalized_shape = normalized_shape
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter((normalized_shape,), dtype)
            self.bias = Parameter((normalized_shape,), dtype)
        else:
            self.weight = self.bias = None

    def forward(self, x: Tensor) -> Tensor:
        return op.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)


class RMSNorm(Module):
    """``x / sqrt(mean(x**2 over axes) + epsilon) * weight`` (``+ bias`` if ``bias``).

    >>> from mlckit.relax.frontend import nn
    >>> [(n, p.shape, p.dtype) for n, p in nn.RMSNorm(8, axes=-1, bias=False).named_parameters()]
    [('weight', [8], 'float32')]
    """

    def __init__(self, hidden_size: int, axes, epsilon: float = 1e-5, bias: bool = True,
                 dtype: str | None = None):
        self.epsilon = epsilon
        self.axes = axes
        self.weight = Parameter((hidden_size,), dtype)
        self.bias = Parameter((hidden_size,), dtype) if bias else None

    def forward(self, x: Tensor) -> Tensor:
        out = op.rms_norm(x, self.weight, self.axes, self.epsilon)
        return op.add(out, self.bias) if self.bias is not None else out


class GroupNorm(Module):
    """Normalize each of ``num_groups`` channel groups, then ``* weight + bias`` per
    channel.

    >>> from mlckit.relax.frontend import nn
    >>> [(n, p.shape, p.dtype) for n, p in nn.GroupNorm(2, 8).named_parameters()]
    [('weight', [8], 'float32'), ('bias', [8], 'float32')]
    """

    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5, affine: bool = True,
                 dtype: str | None = None):
        self.num_groups, self.num_channels, self.eps = num_groups, num_channels, eps
        if affine:
            self.weight = Parameter((num_channels,), dtype)
            self.bias = Parameter((num_channels,), dtype)
        else:
            self.weight = self.bias = None

    def forward(self, x: Tensor, channel_axis: int = 1, axes=None) -> Tensor:
        return op.group_norm(x, self.num_groups, self.weight, self.bias, self.eps, channel_axis,
                             axes)


# -- embeddings -------------------------------------------------------------------------------------
class Embedding(Module):
    """Rows of ``weight`` ``(num, dim)`` looked up by integer ids of any shape.

    >>> from mlckit.relax.frontend import nn
    >>> [(n, p.shape, p.dtype) for n, p in nn.Embedding(10, 4).named_parameters()]
    [('weight', [10, 4], 'float32')]
    """

    def __init__(self, num, dim, dtype: str | None = None):
        self.num, self.dim = num, dim
        self.weight = Parameter((num, dim), dtype)

    def forward(self, x: Tensor) -> Tensor:
        if x.ndim == 1:
            return op.take(self.weight, x, axis=0)
        flat = op.take(self.weight, op.reshape(x, [-1]), axis=0)
        return op.reshape(flat, [*x.shape, self.weight.shape[1]])


__all__ = ["GELU", "Conv1D", "Conv2D", "Embedding", "GroupNorm", "IOEffect", "Identity",
           "LayerNorm", "Linear", "RMSNorm", "ReLU", "SiLU"]
