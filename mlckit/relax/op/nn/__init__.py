"""Neural-network operators (``tvm.relax.op.nn``): activations, softmax, normalizations,
dropout, convolution and pooling.

    lv = relax.op.nn.relu(x)            # R.nn.relu(x) in TVMScript
"""

from . import convolution, layout, nn, pooling
from .convolution import Conv2DAttrs, conv2d
from .nn import (
    BatchNormAttrs,
    DropoutAttrs,
    LayerNormAttrs,
    RMSNormAttrs,
    SoftmaxAttrs,
    batch_norm,
    dropout,
    gelu,
    gelu_tanh,
    layer_norm,
    log_softmax,
    relu,
    rms_norm,
    silu,
    softmax,
)
from .pooling import AdaptivePool2DAttrs, Pool2DAttrs, adaptive_avg_pool2d, avg_pool2d, max_pool2d

__all__ = ["AdaptivePool2DAttrs", "BatchNormAttrs", "Conv2DAttrs", "DropoutAttrs",
           "LayerNormAttrs", "Pool2DAttrs", "SoftmaxAttrs", "adaptive_avg_pool2d", "avg_pool2d",
           "batch_norm", "conv2d", "convolution", "dropout", "gelu", "gelu_tanh", "layer_norm",
           "layout", "log_softmax", "max_pool2d", "nn", "pooling", "relu", "rms_norm",
           "RMSNormAttrs", "silu", "softmax"]
