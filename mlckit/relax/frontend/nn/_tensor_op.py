"""Python operators on ``nn.Tensor``: TVM's set (``+ - * /`` and comparisons, scalars
turned into constants of the tensor's dtype), and clear errors for those TVM lacks.

    y = (x + 1.0) * x       # add = R.add(x, R.const(1.0, "float32")); mul = R.multiply(add, x)
"""

from __future__ import annotations

from mlckit import tir
from mlckit.error import TVMTypeError


class _TensorOperators:
    """Python operators on ``nn.Tensor`` (TVM's set: + - * / and comparisons)."""

    def _binary(self, name: str, other, reverse: bool = False):
        from . import op

        other = _as_tensor_operand(other, self)
        lhs, rhs = (other, self) if reverse else (self, other)
        return getattr(op, name)(lhs, rhs)

    def __add__(self, other):
        return self._binary("add", other)

    def __radd__(self, other):
        return self._binary("add", other)

    def __sub__(self, other):
        return self._binary("subtract", other)

    def __rsub__(self, other):
        return self._binary("subtract", other, reverse=True)

    def __mul__(self, other):
        return self._binary("multiply", other)

    def __rmul__(self, other):
        return self._binary("multiply", other)

    def __truediv__(self, other):
        return self._binary("divide", other)

    def __lt__(self, other):
        return self._binary("less", other)

    def __le__(self, other):
        return self._binary("less_equal", other)

    def __gt__(self, other):
        return self._binary("greater", other)

    def __ge__(self, other):
        return self._binary("greater_equal", other)

    def maximum(self, other):
        return self._binary("maximum", other)

    def minimum(self, other):
        return self._binary("minimum", other)

    def astype(self, dtype: str):
        from . import op

        return op.astype(self, dtype)

    def reshape(self, *shape):
        from . import op

        return op.reshape(self, shape)

    def permute_dims(self, *axes):
        from . import op

        return op.permute_dims(self, axes)

    # TVM's nn.Tensor has none of these; say what to write instead of Python's bare TypeError.
    def __matmul__(self, other):
        raise TVMTypeError("nn.Tensor has no '@' operator (as in TVM): write "
                           "nn.op.matmul(a, b)")

    __rmatmul__ = __matmul__

    def __neg__(self):
        raise TVMTypeError("nn.Tensor has no unary '-' (as in TVM): write nn.op.negative(x)")

    def __getitem__(self, index):
        raise TVMTypeError("nn.Tensor cannot be indexed (as in TVM): use nn.op.take, "
                           "nn.op.split or nn.op.reshape")


def _as_tensor_operand(value, like):
    """A Python or TIR scalar beside a tensor becomes a constant of the tensor's dtype."""
    from .core import Tensor

    if isinstance(value, Tensor):
        return value
    if isinstance(value, (tir.IntImm, tir.FloatImm)):
        value = value.value
    if isinstance(value, (bool, int, float)):
        return Tensor.from_scalar(value, like.dtype)
    raise TVMTypeError(f"nn.Tensor {like!r} cannot be combined with {type(value).__name__} "
                       f"{value!r}: use an nn.Tensor or a Python number")
