"""Kernels shared by several test packages, as factories over their sizes."""

from mlckit.script import tir as T


def make_softmax(n: int, m: int):
    """Row-wise softmax of an (n, m) float32 matrix: max and sum reductions into
    ``T.alloc_buffer`` stages (``maxelem``, ``exp``, ``expsum``, ``norm`` blocks)."""

    @T.prim_func
    def softmax(A: T.Buffer((n, m), "float32"), B: T.Buffer((n, m), "float32")):
        maxelem = T.alloc_buffer((n,), "float32")
        expo = T.alloc_buffer((n, m), "float32")
        expsum = T.alloc_buffer((n,), "float32")
        for i, k in T.grid(n, m):
            with T.block("maxelem"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    maxelem[vi] = T.min_value("float32")
                maxelem[vi] = T.max(maxelem[vi], A[vi, vk])
        for i, j in T.grid(n, m):
            with T.block("exp"):
                vi, vj = T.axis.remap("SS", [i, j])
                expo[vi, vj] = T.exp(A[vi, vj] - maxelem[vi])
        for i, k in T.grid(n, m):
            with T.block("expsum"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    expsum[vi] = T.float32(0)
                expsum[vi] = expsum[vi] + expo[vi, vk]
        for i, j in T.grid(n, m):
            with T.block("norm"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = expo[vi, vj] / expsum[vi]

    return softmax
