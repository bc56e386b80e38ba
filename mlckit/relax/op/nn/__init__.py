"""Neural-network operators (``tvm.relax.op.nn``): activations, softmax, normalizations,
dropout, convolution and pooling.

    lv = relax.op.nn.relu(x)            # R.nn.relu(x) in TVMScript
"""

from . import convolution, layout, loss, nn, pooling
from .convolution import (
    Conv1DAttrs,
    Conv2DAttrs,
    Conv2DTransposeAttrs,
    conv1d,
    conv2d,
    conv2d_transpose,
)
from .loss import NLLLossAttrs, cross_entropy_with_logits, nll_loss
from .nn import (
    BatchNormAttrs,
    DropoutAttrs,
    GroupNormAttrs,
    LayerNormAttrs,
    RMSNormAttrs,
    SoftmaxAttrs,
    batch_norm,
    dropout,
    gelu,
    gelu_tanh,
    group_norm,
    layer_norm,
    log_softmax,
    relu,
    rms_norm,
    silu,
    softmax,
)
from .pooling import AdaptivePool2DAttrs, Pool2DAttrs, adaptive_avg_pool2d, avg_pool2d, max_pool2d

__all__ = ["AdaptivePool2DAttrs", "BatchNormAttrs", "Conv1DAttrs", "Conv2DAttrs", "DropoutAttrs",
           "GroupNormAttrs", "LayerNormAttrs", "Pool2DAttrs", "RMSNormAttrs", "SoftmaxAttrs",
           "adaptive_avg_pool2d", "avg_pool2d", "batch_norm", "conv1d", "conv2d", "convolution",
           "dropout", "gelu", "gelu_tanh", "group_norm", "layer_norm", "layout", "log_softmax",
           "Conv2DTransposeAttrs", "conv2d_transpose", "NLLLossAttrs", "cross_entropy_with_logits", "loss", "nll_loss",
           "max_pool2d", "nn", "pooling", "relu", "rms_norm", "silu", "softmax"]
