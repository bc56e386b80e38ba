"""Constant padding (TVM's ``topi.nn.pad``): the input surrounded by ``pad_value``.

    A = te.placeholder((1, 3, 28, 28), name="A")
    P = topi.nn.pad(A, [0, 0, 1, 1], [0, 0, 1, 1])      # (1, 3, 30, 30), compute "PadInput"

Each element reads the input where it lies inside and ``pad_value`` elsewhere, through one
``T.if_then_else`` over the padded dimensions only (unpadded ones read straight through).
"""

from __future__ import annotations

from mlckit import te
from mlckit.arith import Analyzer
from mlckit.error import TVMValueError
from mlckit.tir import op as tir_op
from mlckit.tir.expr import IntImm, PrimExpr, const, convert

from ..utils import check_tensor, shape_text


def _is_zero(value) -> bool:
    value = convert(value)
    return isinstance(value, IntImm) and value.value == 0


def get_padded_shape(data: te.Tensor, pad_before, pad_after=None) -> tuple:
    """The shape of ``data`` after padding (``pad_after`` defaults to ``pad_before``)."""
    pad_after = pad_after if pad_after else pad_before
    _check_lengths(data, pad_before, pad_after)
    ana = Analyzer()
    return tuple(ana.simplify(data.shape[i] + pad_before[i] + pad_after[i])
                 for i in range(data.ndim))


def _check_lengths(data: te.Tensor, pad_before, pad_after) -> None:
    for what, widths in (("pad_before", pad_before), ("pad_after", pad_after)):
        if len(widths) != data.ndim:
            raise TVMValueError(f"topi.nn.pad: {what} has {len(widths)} values but "
                                f"{data.name!r} {shape_text(data.shape)} has {data.ndim} "
                                "dimensions")


def pad(data: te.Tensor, pad_before, pad_after=None, pad_value=0.0,
        name: str = "PadInput", attrs: dict | None = None) -> te.Tensor:
    """``data`` with ``pad_before[i]`` elements of ``pad_value`` before dimension ``i`` and
    ``pad_after[i]`` after it (tag ``injective,pad``).

    Example::

        P = topi.nn.pad(A, [0, 0, 1, 1], [0, 0, 2, 2], pad_value=-1.0)
    """
    data = check_tensor("nn.pad", data, "data")
    pad_after = pad_after if pad_after else pad_before
    shape = get_padded_shape(data, pad_before, pad_after)
    value = pad_value if isinstance(pad_value, PrimExpr) else const(pad_value, data.dtype)

    def rule(*indices):
        inside = []
        index = []
        for i, idx in enumerate(indices):
            if _is_zero(pad_before[i]) and _is_zero(pad_after[i]):
                index.append(idx)
                continue
            index.append(idx - pad_before[i])
            inside.append(idx >= pad_before[i])
            inside.append(idx < data.shape[i] + pad_before[i])
        if inside:
            return tir_op.if_then_else(tir_op.all(*inside), data(*index), value)
        return data(*index)

    with te.tag_scope("injective,pad"):
        return te.compute(shape, rule, name=name, attrs=attrs)
