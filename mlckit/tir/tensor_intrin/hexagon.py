"""Hexagon's ``vrmpy`` intrinsic by TVM's name (``tvm.tir.tensor_intrin.hexagon``).

``vrmpy`` multiplies 32 rows of 4 unsigned bytes by one vector of 4 bytes and adds each
row's sum to a 32-lane int32 accumulator: ``C[i] += sum_k A[k] * B[i, k]``.  The description
is that loop nest; the implementation (mlckit has no Hexagon) is the same loop nest, so
tensorizing with it keeps the numbers.

Example::

    from mlckit.tir.tensor_intrin.hexagon import VRMPY_u8u8i32_INTRIN
    sch.tensorize(block, VRMPY_u8u8i32_INTRIN)     # the block must compute C[i] += A[k] * B[i, k]
"""

from __future__ import annotations

from mlckit.script import tir as T
from mlckit.tir.schedule.tensor_intrin import TensorIntrin

__all__ = ["VRMPY_u8u8i32_INTRIN"]

VRMPY_u8u8i32_INTRIN = "dot_32x4_u8u8i32_vrmpy"  # TVM's registered name


@T.prim_func
def _vrmpy_u8u8i32_desc(a: T.handle, b: T.handle, c: T.handle):
    A = T.match_buffer(a, (4,), "uint8", offset_factor=1)
    B = T.match_buffer(b, (32, 4), "uint8", offset_factor=1)
    C = T.match_buffer(c, (32,), "int32", offset_factor=1)
    with T.block("root"):
        T.reads(C[0:32], A[0:4], B[0:32, 0:4])
        T.writes(C[0:32])
        for i, k in T.grid(32, 4):
            with T.block("update"):
                vi, vk = T.axis.remap("SR", [i, k])
                C[vi] = C[vi] + T.Cast("int32", A[vk]) * T.Cast("int32", B[vi, vk])


@T.prim_func
def _vrmpy_u8u8i32_impl(a: T.handle, b: T.handle, c: T.handle):
    A = T.match_buffer(a, (4,), "uint8", offset_factor=1)
    B = T.match_buffer(b, (32, 4), "uint8", offset_factor=1)
    C = T.match_buffer(c, (32,), "int32", offset_factor=1)
    with T.block("root"):
        T.reads(C[0:32], A[0:4], B[0:32, 0:4])
        T.writes(C[0:32])
        for i, k in T.grid(32, 4):
            C[i] = C[i] + T.Cast("int32", A[k]) * T.Cast("int32", B[i, k])


TensorIntrin.register(VRMPY_u8u8i32_INTRIN, _vrmpy_u8u8i32_desc, _vrmpy_u8u8i32_impl,
                      override=True)
