"""What a kernel's arguments look like, so a runner can make inputs to measure it with.

Example::

    ArgInfo.from_prim_func(mod["main"])   # [TensorInfo("float32", [128, 128]), ...]
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mlckit.error import TVMValueError
from mlckit.tir.function import PrimFunc

from .utils import int_value


@dataclass(frozen=True)
class TensorInfo:
    """A tensor argument: its dtype and shape (TVM's ``TensorInfo``)."""

    dtype: str
    shape: tuple

    def as_json(self) -> list:
        return ["TENSOR", self.dtype, list(self.shape)]

    @staticmethod
    def from_json(obj) -> TensorInfo:
        return TensorInfo(obj[1], tuple(obj[2]))

    def random(self, rng: np.random.Generator) -> np.ndarray:
        """An array of this dtype and shape with random values (what the runner measures on)."""
        if self.dtype.startswith(("float", "bfloat")):
            return rng.random(self.shape, dtype=np.float64).astype(self.dtype)
        if self.dtype == "bool":
            return rng.integers(0, 2, self.shape).astype(bool)
        return rng.integers(0, 8, self.shape).astype(self.dtype)


class ArgInfo:
    """TVM's ``ArgInfo``: ``ArgInfo.from_prim_func(func)`` lists its tensor arguments."""

    @staticmethod
    def from_prim_func(func: PrimFunc) -> list[TensorInfo]:
        out = []
        for param in func.params:
            buf = func.buffer_map.get(param)
            if buf is None:
                raise TVMValueError(
                    f"meta_schedule measures functions whose arguments are all buffers; "
                    f"parameter {param.name_hint!r} is a scalar")
            shape = [int_value(s) for s in buf.shape]
            if any(s is None for s in shape):
                raise TVMValueError(
                    f"meta_schedule measures static shapes; buffer {buf.name!r} has shape "
                    f"{list(buf.shape)}")
            out.append(TensorInfo(str(buf.dtype), tuple(shape)))
        return out

    @staticmethod
    def from_json(obj) -> TensorInfo:
        return TensorInfo.from_json(obj)
