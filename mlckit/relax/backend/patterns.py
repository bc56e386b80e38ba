"""Patterns of common fused operations (TVM's ``relax.backend.patterns``).  Each function
returns ``(pattern, annotations)``: the annotations name the sub-patterns (``"lhs"``,
``"rhs"``, ``"root"``, ``"bias"``) a check or a codegen reads from a match."""

from __future__ import annotations

from ..dpl import DFPattern, is_op, wildcard


def _with_bias_activation(out: DFPattern, annotations: dict, with_bias: bool,
                          activation: str | None):
    if with_bias:
        annotations["bias"] = bias = wildcard()
        out = is_op("relax.add")(out, bias)
    if activation:
        out = is_op(activation)(out)
    return out, annotations


def make_fused_bias_activation_pattern(op_name: str, with_bias: bool = False,
                                       activation: str | None = None):
    """``activation(op(lhs, rhs) + bias)`` (bias and activation optional).

    Example::

        pat, ann = make_fused_bias_activation_pattern("relax.matmul", True, "relax.nn.relu")
    """
    lhs, rhs = wildcard(), wildcard()
    out = is_op(op_name)(lhs, rhs)
    return _with_bias_activation(out, {"lhs": lhs, "rhs": rhs, "root": out}, with_bias,
                                 activation)


def make_matmul_pattern(with_bias: bool = False, activation: str | None = None,
                        transposed_rhs: bool = False):
    """``activation(matmul(lhs, rhs) + bias)``; with ``transposed_rhs`` the right operand is
    ``permute_dims(rhs)`` (``nn.Linear`` stores its weight transposed).

    Example::

        pat, ann = make_matmul_pattern(with_bias=True, activation="relax.nn.relu",
                                       transposed_rhs=True)
    """
    lhs, rhs = wildcard(), wildcard()
    annotations = {"lhs": lhs, "rhs": rhs}
    right = is_op("relax.permute_dims")(rhs) if transposed_rhs else rhs
    out = is_op("relax.matmul")(lhs, right)
    annotations["root"] = out
    return _with_bias_activation(out, annotations, with_bias, activation)


__all__ = ["make_fused_bias_activation_pattern", "make_matmul_pattern"]
