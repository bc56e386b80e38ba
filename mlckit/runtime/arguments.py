"""How an argument's array is described and copied, in the one wording that built kernels
(``mlckit.backend.signature``) and the VM (``runtime.vm``) share: the runtime sits below the
backends, so the words live here.

>>> print(mismatch("main(): argument 1 (A)", 'its buffer T.Buffer((4,), "float32")',
...                dim_detail(0, 3, 4, (3,))))
main(): argument 1 (A) does not match its buffer T.Buffer((4,), "float32"): dimension 0 is 3, expected 4 (its shape is (3,))
"""

from __future__ import annotations

import weakref

import numpy as np

__all__ = ["mismatch", "ndim_detail", "dtype_detail", "dim_detail", "compact_copy",
           "view_copy_layout", "layout_text"]


# -- the one wording of an argument check (built kernels and the VM) --------------------------
def mismatch(who: str, expected: str, detail: str) -> str:
    """``<who> does not match <expected>: <detail>``, as both a built kernel and the VM say it.

    Example::

        mismatch("main(): argument 1 (A)", 'its buffer T.Buffer((4,), "float32")',
                 dtype_detail("float32", "float64"))
    """
    return f"{who} does not match {expected}: {detail}"


def ndim_detail(expected: int, shape) -> str:
    """``expected 2 dimensions, got 1 (its shape is (4,))``."""
    return (f"expected {expected} dimension{'s' if expected != 1 else ''}, got {len(shape)} "
            f"(its shape is {tuple(int(d) for d in shape)})")


def dtype_detail(expected, got) -> str:
    """``expected dtype float32, got float64``."""
    return f"expected dtype {expected}, got {got}"


def dim_detail(axis: int, got: int, expected, shape=None) -> str:
    """``dimension 1 is 785, expected 784 (its shape is (3, 785))``."""
    note = f" (its shape is {tuple(int(d) for d in shape)})" if shape is not None else ""
    return f"dimension {axis} is {got}, expected {expected}{note}"


# Copies the VM made of views it was given (id -> (weak reference, what the view was)):
# read-only, so that a kernel writing one is refused instead of writing a copy silently.
_VIEW_COPIES: dict = {}


def compact_copy(view: np.ndarray) -> np.ndarray:
    """A read-only C-contiguous copy of ``view`` for a VM argument (TVM's kernels refuse
    non-compact arrays; the VM copies an input once).  A kernel that would write it — an
    in-place call — is refused with a message naming the view, not run on the copy.

    Example::

        x = compact_copy(a[:, ::2])        # x.flags.writeable is False
    """
    copy = np.ascontiguousarray(view)
    copy.flags.writeable = False
    key = id(copy)
    _VIEW_COPIES[key] = (weakref.ref(copy, lambda _r: _VIEW_COPIES.pop(key, None)),
                         layout_text(view))
    return copy


def view_copy_layout(arr) -> str | None:
    """What kind of view ``arr`` was copied from by ``compact_copy``, or None."""
    found = _VIEW_COPIES.get(id(arr))
    return found[1] if found is not None and found[0]() is arr else None


def layout_text(arr: np.ndarray) -> str:
    """What kind of view a non-contiguous ``arr`` is, in words."""
    strides = tuple(int(s) for s in arr.strides)
    if any(s == 0 for s, n in zip(strides, arr.shape) if n > 1):
        kind = "a broadcast view (a stride of 0)"
    elif any(s < 0 for s in strides):
        kind = "a reversed view (a negative stride)"
    elif arr.flags.f_contiguous:
        kind = "a Fortran-order (column-major) array, a transpose for example"
    elif arr.ndim >= 2 and abs(strides[-1]) > abs(strides[0]):
        kind = "a transposed view"
    else:
        kind = "a strided view (a slice with a step)"
    return f"{kind} with strides {strides}"
