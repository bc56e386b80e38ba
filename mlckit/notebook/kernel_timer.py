"""Run time of a PrimFunc, built with Numba (``mlckit.build(..., "llvm")``), on random inputs.

The explorer times every step of a schedule with one :class:`KernelTimer`: the same random
arrays each time, so the steps are comparable and their results can be checked against
the first step's.

Example::

    timer = KernelTimer(seed=0)
    m = timer.measure(mm_relu)
    m.seconds, m.outputs          # seconds per call; every buffer after one call
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mlckit.error import TVMValueError
from mlckit.tir.expr import IntImm
from mlckit.tir.function import PrimFunc

__all__ = ["KernelTimer", "Measurement"]


@dataclass
class Measurement:
    """``seconds`` per call (the median of ``repeat`` runs) and ``outputs``: every buffer
    argument after one call on fresh copies of the inputs."""

    seconds: float
    outputs: list

    def agrees_with(self, other: Measurement, rtol: float = 1e-4, atol: float = 1e-5) -> bool:
        """Whether every buffer holds the same values as in ``other`` (up to rounding: a
        schedule may change the order of a sum)."""
        return len(self.outputs) == len(other.outputs) and all(
            a.shape == b.shape and np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=True)
            for a, b in zip(self.outputs, other.outputs))


class KernelTimer:
    """Builds a PrimFunc for ``target`` and times it on random inputs drawn once (``seed``).

    ``repeat`` timed runs of at least ``min_repeat_ms`` each (Numba compiles during the
    build, and a warm-up call precedes the timing)."""

    def __init__(self, seed: int = 0, target: str = "llvm", repeat: int = 3,
                 min_repeat_ms: float = 10.0):
        self.seed = seed
        self.target = target
        self.repeat = repeat
        self.min_repeat_ms = min_repeat_ms
        self._inputs: dict[tuple, list] = {}

    def inputs(self, func: PrimFunc) -> list:
        """The random arrays for ``func``'s buffers (the same ones for every call)."""
        key = tuple((tuple(_static_shape(func, b)), b.dtype) for b in _buffers(func))
        if key not in self._inputs:
            rng = np.random.default_rng(self.seed)
            arrays = []
            for shape, dtype in key:
                if np.issubdtype(np.dtype(dtype), np.floating):
                    arrays.append(rng.uniform(-1, 1, size=shape).astype(dtype))
                elif np.dtype(dtype) == np.bool_:
                    arrays.append(rng.integers(0, 2, size=shape).astype(dtype))
                else:
                    arrays.append(rng.integers(0, 8, size=shape).astype(dtype))
            self._inputs[key] = arrays
        return self._inputs[key]

    def measure(self, func: PrimFunc) -> Measurement:
        """Build ``func``, run it once on copies of the inputs, then time it."""
        from mlckit.driver import build
        from mlckit.runtime.module import time_evaluator

        inputs = self.inputs(func)
        kernel = build(func, target=self.target)
        outputs = [a.copy() for a in inputs]
        kernel(*outputs)
        timer = time_evaluator(kernel.get_function(kernel.entry_name), number=1,
                               repeat=self.repeat, min_repeat_ms=self.min_repeat_ms)
        result = timer(*[a.copy() for a in inputs])
        return Measurement(result.median, outputs)


def _buffers(func: PrimFunc) -> list:
    out = []
    for p in func.params:
        buf = func.buffer_map.get(p)
        if buf is None:
            raise TVMValueError(f"parameter `{p.name_hint}` is a scalar, not a buffer: the "
                                "explorer times functions of buffers only")
        out.append(buf)
    return out


def _static_shape(func: PrimFunc, buf) -> list[int]:
    shape = []
    for dim in buf.shape:
        if not isinstance(dim, IntImm):
            raise TVMValueError(f"buffer `{buf.name}` of `{func.attrs.get('global_symbol', '')}` "
                                f"has the symbolic dimension {dim}: the explorer times "
                                "functions of static shapes only")
        shape.append(dim.value)
    return shape
