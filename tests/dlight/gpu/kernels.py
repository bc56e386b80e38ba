"""Kernels the dlight rules' tests share: inputs a rule claims or leaves to the next one."""

from mlckit.script import ir as I
from mlckit.script import tir as T


@I.ir_module
class RowSum:
    @T.prim_func
    def main(A: T.Buffer((4, 64), "float32"), B: T.Buffer((4,), "float32")):
        for i, k in T.grid(4, 64):
            with T.block("B"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    B[vi] = T.float32(0)
                B[vi] = B[vi] + A[vi, vk]


@I.ir_module
class Scale:
    @T.prim_func
    def main(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4, 8), "float32")):
        for i, j in T.grid(4, 8):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] * T.float32(2)


@I.ir_module
class Matmul:
    @T.prim_func
    def main(A: T.Buffer((32, 64), "float32"), B: T.Buffer((64, 48), "float32"),
             C: T.Buffer((32, 48), "float32")):
        for i, j, k in T.grid(32, 48, 64):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    C[vi, vj] = T.float32(0)
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
