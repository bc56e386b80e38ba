"""Hexagon's ``vrmpy`` intrinsic by TVM's name (``tvm.tir.tensor_intrin.hexagon``).

``vrmpy`` multiplies 32 rows of 4 unsigned bytes by one vector of 4 bytes and adds each
row's sum to a 32-lane int32 accumulator: ``C[i] += sum_k A[k] * B[i, k]``.  The description
is that loop nest; the implementation (mlckit has no Hexagon) is the same loop nest, so
tensorizing with it keeps the numbers.  Both are built from TIR nodes (the TVMScript parser
sits above ``tir``); in TVMScript the description reads::

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

Example::

    from mlckit.tir.tensor_intrin.hexagon import VRMPY_u8u8i32_INTRIN
    sch.tensorize(block, VRMPY_u8u8i32_INTRIN)     # the block must compute C[i] += A[k] * B[i, k]
"""

from __future__ import annotations

from mlckit.tir import stmt as S
from mlckit.tir.buffer import BufferRegion, decl_buffer
from mlckit.tir.expr import BufferLoad, Cast, IntImm, IterVar, IterVarType, Range, Var
from mlckit.tir.function import PrimFunc
from mlckit.tir.schedule.tensor_intrin import TensorIntrin

__all__ = ["VRMPY_u8u8i32_INTRIN"]

VRMPY_u8u8i32_INTRIN = "dot_32x4_u8u8i32_vrmpy"  # TVM's registered name


def _region(buf, *extents):
    return BufferRegion(buf, [Range(IntImm("int32", 0), IntImm("int32", e)) for e in extents])


def _vrmpy(as_blocks: bool) -> PrimFunc:
    """The loop nest, its update in a block ``"update"`` (the description) or bare."""
    a, b, c = Var("a", "handle"), Var("b", "handle"), Var("c", "handle")
    A = decl_buffer((4,), "uint8", "A", offset_factor=1)
    B = decl_buffer((32, 4), "uint8", "B", offset_factor=1)
    C = decl_buffer((32,), "int32", "C", offset_factor=1)
    i, k = Var("i"), Var("k")
    if as_blocks:
        vi, vk = Var("vi"), Var("vk")
        ii, kk = vi, vk
    else:
        ii, kk = i, k
    update = S.BufferStore(C, BufferLoad(C, [ii]) + Cast("int32", BufferLoad(A, [kk]))
                           * Cast("int32", BufferLoad(B, [ii, kk])), [ii])
    if as_blocks:
        iters = [IterVar(Range(IntImm("int32", 0), IntImm("int32", 32)), vi,
                         IterVarType.DataPar),
                 IterVar(Range(IntImm("int32", 0), IntImm("int32", 4)), vk,
                         IterVarType.CommReduce)]
        block = S.Block(iters, [BufferRegion(C, [Range(vi, IntImm("int32", 1))]),
                                BufferRegion(A, [Range(vk, IntImm("int32", 1))]),
                                BufferRegion(B, [Range(vi, IntImm("int32", 1)),
                                                 Range(vk, IntImm("int32", 1))])],
                        [BufferRegion(C, [Range(vi, IntImm("int32", 1))])], "update", update)
        update = S.BlockRealize([i, k], IntImm("bool", 1), block)
    loops = S.For(i, 0, 32, S.ForKind.SERIAL, S.For(k, 0, 4, S.ForKind.SERIAL, update))
    root = S.Block([], [_region(C, 32), _region(A, 4), _region(B, 32, 4)], [_region(C, 32)],
                   "root", loops)
    return PrimFunc([a, b, c], S.BlockRealize([], IntImm("bool", 1), root),
                    buffer_map={a: A, b: B, c: C})


TensorIntrin.register(VRMPY_u8u8i32_INTRIN, _vrmpy(True), _vrmpy(False), override=True)
