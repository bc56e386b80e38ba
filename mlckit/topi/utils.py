"""Helpers shared by the topi operators.

``compute_ax`` builds a compute the way TVM's C++ topi does: index variables named
``ax0, ax1, ...`` passed to ``fcompute`` as one list, so the printed TIR matches TVM's
(``for ax0, ax1 in T.grid(...)`` / ``v_ax0, v_ax1 = T.axis.remap(...)``).
"""

from __future__ import annotations

from collections.abc import Callable

from mlckit import te
from mlckit.arith import Analyzer
from mlckit.error import TVMTypeError
from mlckit.ir import structural_equal
from mlckit.tir.expr import IntImm, PrimExpr, cast


def compute_ax(shape, fcompute: Callable[[list], PrimExpr], name: str, tag: str) -> te.Tensor:
    """``te.compute`` over ``shape`` with indices ``ax0, ax1, ...`` given to ``fcompute`` as a
    list (TVM's C++ ``te::compute``)."""
    names = [f"ax{i}" for i in range(len(shape))]
    return te.compute(shape, lambda *idx: fcompute(list(idx)), name=name, tag=tag,
                      varargs_names=names)


def equal_check(a: PrimExpr, b: PrimExpr) -> bool:
    """True when the dimensions ``a`` and ``b`` are provably equal (TVM's EqualCheck)."""
    if structural_equal(a, b):
        return True
    if a.dtype != b.dtype:
        a, b = cast(a, "int64"), cast(b, "int64")
    diff = Analyzer().simplify(a - b)
    return isinstance(diff, IntImm) and diff.value == 0


def is_const_int(e, value: int | None = None) -> bool:
    return isinstance(e, IntImm) and (value is None or e.value == value)


def get_const_tuple(shape) -> tuple:
    """The dimensions as Python ints where they are constants (symbolic ones stay)."""
    return tuple(int(s.value) if isinstance(s, IntImm) else s for s in shape)


def select_dim(cond, if_true, if_false) -> PrimExpr:
    """``if_then_else(cond, if_true, if_false)`` for a shape or an index, folded when the
    condition simplifies to a constant (the simplifier keeps an ``if_then_else`` as is)."""
    from mlckit.tir import op as tir_op
    from mlckit.tir.expr import convert

    cond = Analyzer().simplify(convert(cond))
    if isinstance(cond, IntImm):
        return Analyzer().simplify(convert(if_true if cond.value else if_false))
    return tir_op.if_then_else(cond, if_true, if_false)


def check_tensor(op_name: str, value, what: str = "input") -> te.Tensor:
    if not isinstance(value, te.Tensor):
        raise TVMTypeError(f"topi.{op_name}: the {what} must be a te.Tensor, got "
                           f"{type(value).__name__}")
    return value


def shape_text(shape) -> str:
    return "(" + ", ".join(str(d) for d in get_const_tuple(shape)) + (",)" if len(shape) == 1
                                                                   else ")")
