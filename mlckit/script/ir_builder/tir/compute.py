"""``T.compute``: one-line sugar for the most common TensorIR loop nest.

    T.compute("C", C, lambda i, j: A[i, j] + B[i, j])

is the same IR as writing out::

    for i, j in T.grid(*C.shape):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = A[vi, vj] + B[vi, vj]

With ``reduce=[128]`` the lambda takes one more argument per reduction extent and the block
sums over it, starting from ``init`` (0 by default)::

    T.compute("Y", Y, lambda i, j, k: A[i, k] * B[k, j], reduce=[128])
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence

from mlckit.error import TVMTypeError, TVMValueError
from mlckit.script.ir_builder.base import IRBuilder
from mlckit.tir.buffer import Buffer
from mlckit.tir.expr import convert

from .ir import axis, block, buffer_store, grid, init


def compute(name: str, out: Buffer, fcompute: Callable, reduce: Sequence = (), init_value=0) -> None:
    """Write ``fcompute(*indices)`` to every element of ``out`` (summed over ``reduce``)."""
    if not isinstance(out, Buffer):
        raise TVMTypeError(f"T.compute writes into a buffer, got {type(out).__name__}")
    spatial, reduction = list(out.shape), list(reduce)
    names = list(inspect.signature(fcompute).parameters)
    if len(names) != len(spatial) + len(reduction):
        raise TVMValueError(
            f"T.compute({name!r}): the function takes {len(names)} argument(s) but {out.name!r} "
            f"has {len(spatial)} dimension(s) and there are {len(reduction)} reduction extent(s)"
        )
    with grid(*spatial, *reduction) as loops:
        loops = list(loops) if isinstance(loops, (list, tuple)) else [loops]
        IRBuilder.name_many(names, loops)
        with block(name):
            kinds = "S" * len(spatial) + "R" * len(reduction)
            ivars = axis.remap(kinds, loops)
            ivars = list(ivars) if isinstance(ivars, (list, tuple)) else [ivars]
            IRBuilder.name_many([f"v{n}" for n in names], ivars)
            value = fcompute(*ivars)
            out_index = ivars[: len(spatial)]
            if not reduction:
                buffer_store(out, value, out_index)
                return
            with init():
                buffer_store(out, convert(init_value, out.dtype), out_index)
            buffer_store(out, out[out_index] + value, out_index)
