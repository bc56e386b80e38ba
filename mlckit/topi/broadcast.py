"""Broadcasting binary operators (TVM's ``topi.add``, ``topi.maximum``, ``topi.greater``...).

Each takes two tensors, or a tensor and a scalar (a Python number or a PrimExpr), in either
order, and broadcasts shapes as NumPy does: dimensions are matched from the right, a
dimension of 1 stretches, a missing one counts as 1.  Two scalars give a scalar expression.

    C = topi.add(A, B)        # A: (4, 3), B: (3,)  ->  C: (4, 3), compute "T_add"
    D = topi.multiply(A, 2.0) # tensor and scalar   ->  tag "elemwise"

Symbolic dimensions broadcast too: ``n`` against ``1`` is ``n``; ``n`` against ``m`` is
``max(n, m)`` (both read at the same index); ``n`` against ``4`` is ``4``.
"""

from __future__ import annotations

from collections.abc import Callable

from mlckit import te
from mlckit.error import TVMTypeError, TVMValueError
from mlckit.tir import dtype as dt
from mlckit.tir import op as tir_op
from mlckit.tir.expr import IntImm, PrimExpr, cast, convert, max_expr

from . import tag as _tag
from .utils import compute_ax, equal_check, is_const_int, shape_text


def broadcast_shape(shape_a, shape_b, op_name: str = "broadcast"):
    """The broadcast shape of two shapes, and for each output dimension whether each input
    is indexed along it (False: that input has size 1 there or lacks the dimension)."""
    na, nb = len(shape_a), len(shape_b)
    out, uses_a, uses_b = [], [], []
    for i in range(1, min(na, nb) + 1):
        a, b = shape_a[na - i], shape_b[nb - i]
        common = f"int{max(dt.bits(a.dtype), dt.bits(b.dtype))}"
        a, b = _as(common, a), _as(common, b)
        static_a, static_b = isinstance(a, IntImm), isinstance(b, IntImm)
        if equal_check(a, b):
            dim, ua, ub = a, True, True
        elif is_const_int(a, 1):
            dim, ua, ub = b, False, True
        elif is_const_int(b, 1):
            dim, ua, ub = a, True, False
        elif not static_a and not static_b:
            dim, ua, ub = max_expr(a, b), True, True
        elif not static_a:
            dim, ua, ub = b, True, True
        elif not static_b:
            dim, ua, ub = a, True, True
        else:
            raise TVMValueError(
                f"topi.{op_name}: cannot broadcast shapes {shape_text(shape_a)} and "
                f"{shape_text(shape_b)}: dimension {a.value} and {b.value} (counted from the "
                "right) differ and neither is 1"
            )
        out.insert(0, dim)
        uses_a.insert(0, ua)
        uses_b.insert(0, ub)
    longer, n_long = (shape_a, na) if na > nb else (shape_b, nb)
    for i in range(min(na, nb) + 1, max(na, nb) + 1):
        out.insert(0, longer[n_long - i])
        uses_a.insert(0, na > nb)
        uses_b.insert(0, nb >= na)
    return out, uses_a, uses_b


def _as(dtype: str, e: PrimExpr) -> PrimExpr:
    return e if e.dtype == dtype else cast(e, dtype)


def _input_index(indices: list, tensor: te.Tensor, uses: list) -> list:
    """The index of ``tensor`` at output index ``indices``: 0 where it is broadcast."""
    offset = len(indices) - tensor.ndim
    return [idx if used else IntImm(idx.dtype, 0)
            for idx, used in zip(indices[offset:], uses[offset:])]


def _broadcast_op(rule: Callable[[PrimExpr, PrimExpr], PrimExpr], name: str, doc: str):
    op_name = name

    def op(lhs, rhs):
        lhs_tensor, rhs_tensor = isinstance(lhs, te.Tensor), isinstance(rhs, te.Tensor)
        if lhs_tensor and rhs_tensor:
            shape, uses_a, uses_b = broadcast_shape(lhs.shape, rhs.shape, op_name)
            return compute_ax(
                shape,
                lambda idx: rule(lhs(*_input_index(idx, lhs, uses_a)),
                                 rhs(*_input_index(idx, rhs, uses_b))),
                f"T_{op_name}", _tag.BROADCAST,
            )
        if lhs_tensor:
            b = _scalar(op_name, rhs)
            return compute_ax(lhs.shape, lambda idx: rule(lhs(*idx), b), f"T_{op_name}",
                              _tag.ELEMWISE)
        if rhs_tensor:
            a = _scalar(op_name, lhs)
            return compute_ax(rhs.shape, lambda idx: rule(a, rhs(*idx)), f"T_{op_name}",
                              _tag.ELEMWISE)
        return rule(_scalar(op_name, lhs), _scalar(op_name, rhs))

    op.__name__ = op_name
    dtype = "bool" if op_name.startswith("logical") else "float32"
    out = "bool" if dtype == "bool" or doc.split()[1] in ("<", ">", "<=", ">=", "==", "!=") else dtype
    op.__doc__ = (f"``{doc}`` with broadcasting (TVM's ``topi.{op_name}``); the compute is "
                  f"named ``T_{op_name}``.\n\n"
                  f">>> from mlckit import te, topi\n"
                  f">>> A = te.placeholder((4, 3), \"{dtype}\", name=\"A\")\n"
                  f">>> B = te.placeholder((3,), \"{dtype}\", name=\"B\")\n"
                  f">>> C = topi.{op_name}(A, B)\n>>> C.shape, C.dtype, C.op.name\n"
                  f"([4, 3], '{out}', 'T_{op_name}')\n")
    return op


def _scalar(op_name: str, value) -> PrimExpr:
    e = convert(value)
    if not isinstance(e, PrimExpr) or e.dtype in ("handle", "void"):
        raise TVMTypeError(f"topi.{op_name}: expected a te.Tensor or a scalar, got "
                           f"{type(value).__name__}")
    return e


def _floor_divide(a, b):
    if dt.is_int(a.dtype):
        return tir_op.floordiv(a, b)
    return tir_op.floor(tir_op.div(a, b))


def _floor_mod(a, b):
    if dt.is_int(a.dtype):
        return tir_op.floormod(a, b)
    return a - tir_op.floor(tir_op.div(a, b)) * b


def _power(a, b):
    return tir_op.pow(a, b)


def _logical(kind: str):
    def rule(a, b):
        return a & b if kind == "and" else a | b

    return rule


add = _broadcast_op(lambda a, b: a + b, "add", "lhs + rhs")
subtract = _broadcast_op(lambda a, b: a - b, "subtract", "lhs - rhs")
multiply = _broadcast_op(lambda a, b: a * b, "multiply", "lhs * rhs")
divide = _broadcast_op(tir_op.div, "divide", "lhs / rhs")
floor_divide = _broadcast_op(_floor_divide, "floor_divide", "floor(lhs / rhs)")
mod = _broadcast_op(tir_op.truncmod, "mod", "lhs % rhs (truncated)")
floor_mod = _broadcast_op(_floor_mod, "floor_mod", "lhs - floor(lhs / rhs) * rhs")
maximum = _broadcast_op(tir_op.max, "maximum", "max(lhs, rhs)")
minimum = _broadcast_op(tir_op.min, "minimum", "min(lhs, rhs)")
power = _broadcast_op(_power, "power", "lhs ** rhs")
greater = _broadcast_op(lambda a, b: a > b, "greater", "lhs > rhs")
less = _broadcast_op(lambda a, b: a < b, "less", "lhs < rhs")
equal = _broadcast_op(lambda a, b: convert(a == b), "equal", "lhs == rhs")
not_equal = _broadcast_op(lambda a, b: convert(a != b), "not_equal", "lhs != rhs")
greater_equal = _broadcast_op(lambda a, b: a >= b, "greater_equal", "lhs >= rhs")
less_equal = _broadcast_op(lambda a, b: a <= b, "less_equal", "lhs <= rhs")
logical_and = _broadcast_op(_logical("and"), "logical_and", "lhs and rhs")
logical_or = _broadcast_op(_logical("or"), "logical_or", "lhs or rhs")


def broadcast_to(data: te.Tensor, shape) -> te.Tensor:
    """``data`` broadcast to ``shape`` (TVM's ``topi.broadcast_to``, compute
    ``T_broadcast_to``).

    Example::

        B = topi.broadcast_to(A, (4, 3))    # A: (3,) or (1, 3) or (4, 1) ...
    """
    if not isinstance(data, te.Tensor):
        raise TVMTypeError(f"topi.broadcast_to: data must be a te.Tensor, got "
                           f"{type(data).__name__}")
    target = [convert(s) for s in shape]
    if len(target) < data.ndim:
        raise TVMValueError(
            f"topi.broadcast_to: the target shape {shape_text(target)} has fewer dimensions "
            f"than the input {data.name!r} {shape_text(data.shape)}"
        )
    common, _, uses = broadcast_shape(target, data.shape, "broadcast_to")
    out = []
    for want, got in zip(target, common):
        if isinstance(want, IntImm) and not equal_check(want, got):
            raise TVMValueError(
                f"topi.broadcast_to: cannot broadcast {data.name!r} {shape_text(data.shape)} "
                f"to {shape_text(target)}"
            )
        out.append(want if not isinstance(want, IntImm) else got)
    return compute_ax(out, lambda idx: data(*_input_index(idx, data, uses)), "T_broadcast_to",
                      _tag.BROADCAST)
