"""TIR data types, named as in TVM ("int32", "float16", "bool", "handle"), and vectors of
them: ``"float32x4"`` is four float32 lanes (``lanes("float32x4") == 4``), the dtype of
``T.Ramp`` / ``T.Broadcast`` and of loads through a ramp index.

Scalable vectors (Arm SVE) are named as in TVM: ``"float32xvscalex4"`` has
``T.vscale() * 4`` lanes, a multiple unknown until the program runs.  ``lanes`` gives them
as ``-4`` (what TVM's Python ``DataType.lanes`` gives): any vector has ``lanes != 1``, and
``with_lanes(dtype, -4)`` names the scalable one.  mlckit's passes handle them at the IR
level; its backends refuse them (they need a fixed number of lanes).  ``"uint1x4"`` is the
dtype of a lane mask (``T.get_active_lane_mask``), and ``""`` means ``"void"``.

Example::

    check_dtype("float32x4"), lanes("float32x4"), element_of("float32x4")
    # ('float32x4', 4, 'float32')
"""

from __future__ import annotations

import numpy as np

from mlckit.error import TVMValueError

INT_TYPES = ("int8", "int16", "int32", "int64")
UINT_TYPES = ("uint8", "uint16", "uint32", "uint64")
FLOAT_TYPES = ("float16", "float32", "float64")
DTYPES = frozenset(INT_TYPES + UINT_TYPES + FLOAT_TYPES + ("bool", "handle", "void", "uint1"))
_SCALABLE = "xvscalex"


def check_dtype(dtype) -> str:
    """Normalise ``dtype`` (a string, NumPy dtype or Python type) or raise ValueError."""
    if dtype is None:
        raise TVMValueError("a dtype is required")
    if isinstance(dtype, type) and dtype in (int, float, bool):
        return {int: "int32", float: "float32", bool: "bool"}[dtype]
    if not isinstance(dtype, str):
        try:
            dtype = np.dtype(dtype).name
        except TypeError:
            raise TVMValueError(f"unknown dtype {dtype!r}") from None
    if dtype == "":
        return "void"  # TVM's DataType("") is void: a call returning nothing
    if dtype not in DTYPES and not _is_vector_name(dtype):
        known = ", ".join(sorted(DTYPES - {"void", "uint1"}))
        raise TVMValueError(f"unknown dtype {dtype!r} (known dtypes: {known}, and vectors of "
                            "them such as float32x4)")
    return dtype


def _is_vector_name(dtype: str) -> bool:
    """``"float32x4"``: a known scalar dtype, ``x``, a lane count of at least 2; or
    ``"float32xvscalex4"``, a scalable vector (``x``, ``vscale``, ``x``, a factor)."""
    if _SCALABLE in dtype:
        base, _, n = dtype.partition(_SCALABLE)
        return base in DTYPES and base not in ("handle", "void") and n.isdigit() and int(n) >= 1
    base, sep, n = dtype.rpartition("x")
    if not sep or base not in DTYPES or base in ("handle", "void") or not n.isdigit():
        return False
    return int(n) >= 2


def lanes(dtype: str) -> int:
    """The number of lanes of ``dtype``: 1 for a scalar, 4 for ``"float32x4"``, and -4 for
    the scalable ``"float32xvscalex4"`` (``T.vscale() * 4`` lanes, as TVM's Python
    ``DataType.lanes``)."""
    if dtype in DTYPES:
        return 1
    if _SCALABLE in dtype:
        base, _, n = dtype.partition(_SCALABLE)
        return -int(n) if base in DTYPES and n.isdigit() else 1
    base, _, n = dtype.rpartition("x")
    return int(n) if base in DTYPES and n.isdigit() else 1


def is_scalable(dtype: str) -> bool:
    """Whether ``dtype`` is a scalable vector (``"float32xvscalex4"``)."""
    return lanes(dtype) < 0


def vscale_factor(dtype: str) -> int:
    """``k`` of a scalable vector of ``T.vscale() * k`` lanes (4 for ``"float32xvscalex4"``)."""
    n = lanes(dtype)
    if n > 0:
        raise TVMValueError(f"dtype {dtype!r} is not a scalable vector: it has no vscale factor")
    return -n


def element_of(dtype: str) -> str:
    """The scalar dtype of one lane: ``"float32"`` for ``"float32x4"``."""
    n = lanes(dtype)
    if n == 1:
        return dtype
    return dtype.partition(_SCALABLE)[0] if n < 0 else dtype.rpartition("x")[0]


def with_lanes(dtype: str, n: int) -> str:
    """``dtype``'s element type with ``n`` lanes (``with_lanes("float32", 4) == "float32x4"``;
    a negative ``n`` names a scalable vector: ``with_lanes("float32", -4)`` is
    ``"float32xvscalex4"``)."""
    base = element_of(dtype)
    if n < 0:
        return f"{base}{_SCALABLE}{-n}"
    return base if n == 1 else f"{base}x{n}"


def is_int(dtype: str) -> bool:
    dtype = element_of(dtype)
    return dtype in INT_TYPES or dtype in UINT_TYPES


def is_uint(dtype: str) -> bool:
    return element_of(dtype) in UINT_TYPES


def is_float(dtype: str) -> bool:
    return element_of(dtype) in FLOAT_TYPES


def is_bool(dtype: str) -> bool:
    return element_of(dtype) == "bool"


def bits(dtype: str) -> int:
    """Bits of one lane (``bits("float32x4") == 32``)."""
    dtype = element_of(dtype)
    if dtype == "bool":
        return 1
    return int("".join(ch for ch in dtype if ch.isdigit()) or 64)


def to_numpy(dtype: str) -> np.dtype:
    """The NumPy dtype of one lane."""
    dtype = element_of(dtype)
    return np.dtype("bool" if dtype in ("bool", "uint1") else dtype)


def max_value(dtype: str):
    if is_float(dtype):
        return float(np.finfo(to_numpy(dtype)).max)
    if dtype == "bool":
        return True
    return int(np.iinfo(to_numpy(dtype)).max)


def min_value(dtype: str):
    if is_float(dtype):
        return float(np.finfo(to_numpy(dtype)).min)
    if dtype == "bool":
        return False
    return int(np.iinfo(to_numpy(dtype)).min)
