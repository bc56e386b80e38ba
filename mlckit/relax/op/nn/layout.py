"""Layouts of the windowed operators (conv2d, pooling): a layout string is a permutation of
the canonical letters (``NCHW`` for data, ``OIHW`` for kernels); split layouts such as
``NCHW16c`` are refused with a message naming the operator.

    perm = layout_permutation(call, "NHWC", "NCHW", "data_layout")   # [0, 3, 1, 2]
"""

from __future__ import annotations

from ..op_common import fail


def layout_permutation(call, layout: str, canonical: str, what: str) -> list[int]:
    """For each canonical letter, its position in ``layout``."""
    if not isinstance(layout, str) or sorted(layout) != sorted(canonical):
        fail(call, f"{what}={layout!r} is not supported: it must order the letters "
                   f"{canonical!r} (split layouts such as {canonical}16c are not)")
    return [layout.index(letter) for letter in canonical]


def to_canonical(dims: list, perm: list[int]) -> list:
    """Dims in a layout, reordered to the canonical order."""
    return [dims[p] for p in perm]


def from_canonical(dims: list, perm: list[int]) -> list:
    """Dims in canonical order, placed back into the layout's order."""
    out = [None] * len(dims)
    for canonical_pos, p in enumerate(perm):
        out[p] = dims[canonical_pos]
    return out


def complete_padding_2d(padding, op: str) -> tuple:
    """``(top, left, bottom, right)`` from 1, 2 or 4 values (TVM's
    ``GetCompletePadding2D``)."""
    from mlckit.error import TVMValueError

    from ..axis_common import int_tuple

    pads = int_tuple(padding, op, "padding")
    if len(pads) == 1:
        return pads * 4
    if len(pads) == 2:
        return pads * 2
    if len(pads) == 4:
        return pads
    raise TVMValueError(f"{op}: padding {pads} must have 1, 2 or 4 values (top/bottom and "
                        "left/right, or top, left, bottom, right)")


def pair(value, op: str, what: str) -> tuple:
    """A 2-d attribute (strides, dilation, pool_size) from 1 or 2 values."""
    from mlckit.error import TVMValueError

    from ..axis_common import int_tuple

    values = int_tuple(value, op, what)
    if len(values) == 1:
        return values * 2
    if len(values) != 2:
        raise TVMValueError(f"{op}: {what} {values} must have 1 or 2 values")
    return values


__all__ = ["complete_padding_2d", "from_canonical", "layout_permutation", "pair",
           "to_canonical"]
