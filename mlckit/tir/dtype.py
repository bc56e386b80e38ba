"""TIR data types, named as in TVM ("int32", "float16", "bool", "handle")."""

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
    if dtype not in DTYPES:
        known = ", ".join(sorted(DTYPES - {"void"}))
        raise TVMValueError(f"unknown dtype {dtype!r} (known dtypes: {known})")
    return dtype


def is_int(dtype: str) -> bool:
    return dtype in INT_TYPES or dtype in UINT_TYPES


def is_uint(dtype: str) -> bool:
    return dtype in UINT_TYPES


def is_float(dtype: str) -> bool:
    return dtype in FLOAT_TYPES


def is_bool(dtype: str) -> bool:
    return dtype == "bool"


def bits(dtype: str) -> int:
    if dtype == "bool":
        return 1
    return int("".join(ch for ch in dtype if ch.isdigit()) or 64)


def to_numpy(dtype: str) -> np.dtype:
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
