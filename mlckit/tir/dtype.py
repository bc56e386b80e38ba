"""TIR data types, named as in TVM ("int32", "float16", "bool", "handle"), and vectors of
them: ``"float32x4"`` is four float32 lanes (``lanes("float32x4") == 4``), the dtype of
``T.Ramp`` / ``T.Broadcast`` and of loads through a ramp index.

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
DTYPES = frozenset(INT_TYPES + UINT_TYPES + FLOAT_TYPES + ("bool", "handle", "void"))


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
    if "xvscale" in dtype:
        raise TVMValueError(f"dtype {dtype!r}: scalable vectors (vscale, Arm SVE) are not "
                            "supported by mlckit; use a fixed number of lanes such as float32x4")
    if dtype not in DTYPES and not _is_vector_name(dtype):
        known = ", ".join(sorted(DTYPES - {"void"}))
        raise TVMValueError(f"unknown dtype {dtype!r} (known dtypes: {known}, and vectors of "
                            "them such as float32x4)")
    return dtype


def _is_vector_name(dtype: str) -> bool:
    """``"float32x4"``: a known scalar dtype, ``x``, a lane count of at least 2."""
    base, sep, n = dtype.rpartition("x")
    if not sep or base not in DTYPES or base in ("handle", "void") or not n.isdigit():
        return False
    return int(n) >= 2


def lanes(dtype: str) -> int:
    """The number of lanes of ``dtype``: 1 for a scalar, 4 for ``"float32x4"``."""
    if dtype in DTYPES:
        return 1
    base, _, n = dtype.rpartition("x")
    return int(n) if base in DTYPES and n.isdigit() else 1


def element_of(dtype: str) -> str:
    """The scalar dtype of one lane: ``"float32"`` for ``"float32x4"``."""
    return dtype if lanes(dtype) == 1 else dtype.rpartition("x")[0]


def with_lanes(dtype: str, n: int) -> str:
    """``dtype``'s element type with ``n`` lanes (``with_lanes("float32", 4) == "float32x4"``)."""
    base = element_of(dtype)
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
    return np.dtype("bool" if dtype == "bool" else dtype)


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
