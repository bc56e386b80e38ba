"""Batch normalization (TVM's ``topi.nn.batch_norm``).

At inference (``training=False``) the moving statistics normalize ``data`` along ``axis``;
in training the batch's own mean and variance do, and the moving statistics are updated
with ``momentum``.  Three tensors come back, as in TVM: the output and the two statistics::

    out, mean, var = topi.nn.batch_norm(X, gamma, beta, moving_mean, moving_var, axis=1,
                                        training=False)
"""

from __future__ import annotations

from mlckit import te
from mlckit.error import TVMValueError

from ..broadcast import add, divide, multiply, subtract
from ..math import sqrt
from ..reduction import sum as _sum
from ..transform import reshape
from ..utils import check_tensor


def batch_norm(data: te.Tensor, gamma: te.Tensor, beta: te.Tensor, moving_mean: te.Tensor,
               moving_var: te.Tensor, axis: int | None = None, epsilon: float | None = None,
               center: bool | None = None, scale: bool | None = None,
               training: bool | None = None, momentum: float | None = None) -> list:
    """``[(data - mean) / sqrt(var + epsilon) * gamma + beta, mean', var']`` with the
    statistics along ``axis`` (default 1); ``center``/``scale`` switch ``beta``/``gamma``.

    Example::

        out, _, _ = topi.nn.batch_norm(X, g, b, mm, mv, axis=1, training=False)
    """
    data = check_tensor("nn.batch_norm", data, "data")
    axis = 1 if axis is None else int(axis)
    epsilon = 1e-5 if epsilon is None else epsilon
    center = True if center is None else center
    scale = True if scale is None else scale
    training = False if training is None else training
    momentum = 0.1 if momentum is None else momentum
    if axis < 0:
        axis += data.ndim
    shape = [1] * data.ndim
    shape[axis] = data.shape[axis]
    if training:
        axes = [i for i in range(data.ndim) if i != axis]
        count = 1
        for i in axes:
            count = count * data.shape[i]
        mean = divide(_sum(data, axis=axes), count)
        mean_rs = reshape(mean, shape)
        var = divide(_sum(multiply(subtract(data, mean_rs), subtract(data, mean_rs)),
                          axis=axes), count)
        var_rs = reshape(var, shape)
        out = divide(subtract(data, mean_rs), sqrt(add(var_rs, epsilon)))
    else:
        out = divide(subtract(data, reshape(moving_mean, shape)),
                     sqrt(add(reshape(moving_var, shape), epsilon)))
    if scale:
        out = multiply(out, reshape(gamma, shape))
    if center:
        out = add(out, reshape(beta, shape))
    if training:
        if not 0 <= momentum <= 1:
            raise TVMValueError(f"topi.nn.batch_norm: momentum={momentum} must be in [0, 1]")
        return [out,
                add(multiply(1 - momentum, moving_mean), multiply(momentum, mean)),
                add(multiply(1 - momentum, moving_var), multiply(momentum, var))]
    # the statistics are unchanged; multiplying by 1 gives new tensors (as TVM)
    return [out, multiply(moving_mean, 1), multiply(moving_var, 1)]
