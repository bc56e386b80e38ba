"""Kernels from the MLC course, in TVMScript, with their NumPy twins (sizes kept small so the
lnumpy reference runs fast)."""

import numpy as np

from mlckit.script import tir as T

from ..kernels import make_mm_relu, make_softmax, mm_relu  # noqa: F401 - mm_relu: K.mm_relu

mm_relu_small = make_mm_relu(32, 40, 48, "mm_relu_small")


@T.prim_func
def linear(X: T.Buffer((4, 64), "float32"),
           W: T.Buffer((32, 64), "float32"),
           bias: T.Buffer((32,), "float32"),
           Z: T.Buffer((4, 32), "float32")):
    T.func_attr({"global_symbol": "linear", "tir.noalias": True})
    Y = T.alloc_buffer((4, 32), "float32")
    for i, j, k in T.grid(4, 32, 64):
        with T.block("Y"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                Y[vi, vj] = T.float32(0)
            Y[vi, vj] = Y[vi, vj] + X[vi, vk] * W[vj, vk]
    for i, j in T.grid(4, 32):
        with T.block("Z"):
            vi, vj = T.axis.remap("SS", [i, j])
            Z[vi, vj] = Y[vi, vj] + bias[vj]


@T.prim_func
def relu(A: T.Buffer((1024,), "float32"), B: T.Buffer((1024,), "float32")):
    T.func_attr({"global_symbol": "relu", "tir.noalias": True})
    for i in range(1024):
        with T.block("B"):
            vi = T.axis.spatial(1024, i)
            B[vi] = T.max(A[vi], T.float32(0))


softmax = make_softmax(8, 64)


@T.prim_func
def conv2d_nchw(X: T.Buffer((1, 3, 8, 8), "float32"),
                K: T.Buffer((4, 3, 3, 3), "float32"),
                Y: T.Buffer((1, 4, 6, 6), "float32")):
    T.func_attr({"global_symbol": "conv2d_nchw", "tir.noalias": True})
    for b, k, i, j, di, dj, q in T.grid(1, 4, 6, 6, 3, 3, 3):
        with T.block("Y"):
            vb, vk, vi, vj, vdi, vdj, vq = T.axis.remap("SSSSRRR", [b, k, i, j, di, dj, q])
            with T.init():
                Y[vb, vk, vi, vj] = T.float32(0)
            Y[vb, vk, vi, vj] = Y[vb, vk, vi, vj] + X[vb, vq, vi + vdi, vj + vdj] * K[vk, vq, vdi, vdj]


@T.prim_func
def mm_symbolic(a: T.handle, b: T.handle, c: T.handle):
    T.func_attr({"global_symbol": "mm_symbolic", "tir.noalias": True})
    n = T.int64()
    m = T.int64()
    A = T.match_buffer(a, (n, 16), "float32")
    B = T.match_buffer(b, (16, m), "float32")
    C = T.match_buffer(c, (n, m), "float32")
    for i, j, k in T.grid(n, m, 16):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


@T.prim_func
def mm_relu_tiled(A: T.Buffer((32, 32), "float32"),
                  B: T.Buffer((32, 32), "float32"),
                  C: T.Buffer((32, 32), "float32")):
    """mm_relu after split(j, 4), reorder, parallel/unroll/vectorize, by hand."""
    T.func_attr({"global_symbol": "mm_relu_tiled", "tir.noalias": True})
    Y = T.alloc_buffer((32, 32), dtype="float32")
    for i in T.parallel(32):
        for j0 in range(8):
            for k in range(32):
                for j1 in T.unroll(4):
                    with T.block("Y"):
                        vi = T.axis.spatial(32, i)
                        vj = T.axis.spatial(32, j0 * 4 + j1)
                        vk = T.axis.reduce(32, k)
                        with T.init():
                            Y[vi, vj] = T.float32(0)
                        Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]
    for i in T.parallel(32):
        for j in T.vectorized(32):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = T.max(Y[vi, vj], T.float32(0))


@T.prim_func
def row_sum_local(A: T.Buffer((6, 10), "float32"), B: T.Buffer((6,), "float32")):
    """A block-local T.alloc_buffer inside a loop (hoisted by numba_cpu) and a T.where."""
    T.func_attr({"global_symbol": "row_sum_local", "tir.noalias": True})
    for i in range(6):
        with T.block("row"):
            vi = T.axis.spatial(6, i)
            acc = T.alloc_buffer((1,), "float32")
            acc[0] = T.float32(0)
            for k0, k1 in T.grid(3, 4):
                with T.block("acc"):
                    vk = T.axis.reduce(10, k0 * 4 + k1)
                    T.where(k0 * 4 + k1 < 10)
                    acc[0] = acc[0] + A[vi, vk]
            B[vi] = acc[0]


def conv2d_numpy(x, k):
    n, c, h, w = x.shape
    o, _, kh, kw = k.shape
    out = np.zeros((n, o, h - kh + 1, w - kw + 1), dtype="float64")
    for di in range(kh):
        for dj in range(kw):
            patch = x[:, :, di:di + h - kh + 1, dj:dj + w - kw + 1].astype("float64")
            out += np.einsum("nchw,oc->nohw", patch, k[:, :, di, dj].astype("float64"))
    return out.astype("float32")


def softmax_numpy(a):
    e = np.exp(a - a.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)
