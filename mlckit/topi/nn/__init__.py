"""Neural-network operators (TVM's ``topi.nn``)."""

from .batch_norm import batch_norm
from .conv2d import conv, conv2d, conv2d_nchw, get_pad_tuple_generic, group_conv2d_nchw
from .conv2d_transpose import conv2d_transpose_nchw, dilate, group_conv2d_transpose_nchw
from .dense import dense, matmul
from .elemwise import leaky_relu, relu
from .layer_norm import layer_norm
from .loss import nll_loss
from .pad import pad
from .pooling import adaptive_pool, global_pool, pool2d
from .softmax import log_softmax, softmax

__all__ = ["batch_norm", "layer_norm", "conv", "conv2d", "conv2d_nchw", "conv2d_transpose_nchw", "dense", "dilate", "get_pad_tuple_generic",
           "group_conv2d_nchw", "group_conv2d_transpose_nchw", "adaptive_pool", "global_pool", "pool2d", "leaky_relu", "log_softmax", "matmul", "nll_loss", "pad", "relu", "softmax"]
