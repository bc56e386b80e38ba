"""Small TensorIR workloads shared by the schedule tests (TVMScript, as in the course)."""

from mlckit.script import ir as I
from mlckit.script import tir as T

from ...kernels import make_softmax


@T.prim_func
def elementwise(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    B = T.alloc_buffer((16, 16), "float32")
    for i, j in T.grid(16, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(16, 16):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] + T.float32(1)


@T.prim_func
def matmul(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32"),
           C: T.Buffer((16, 16), "float32")):
    for i, j, k in T.grid(16, 16, 16):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


@I.ir_module
class MMRelu:
    @T.prim_func
    def mm_relu(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32"),
                C: T.Buffer((128, 128), "float32")):
        T.func_attr({"global_symbol": "mm_relu", "tir.noalias": True})
        Y = T.alloc_buffer((128, 128), dtype="float32")
        for i, j, k in T.grid(128, 128, 128):
            with T.block("Y"):
                vi = T.axis.spatial(128, i)
                vj = T.axis.spatial(128, j)
                vk = T.axis.reduce(128, k)
                with T.init():
                    Y[vi, vj] = T.float32(0)
                Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]
        for i, j in T.grid(128, 128):
            with T.block("C"):
                vi = T.axis.spatial(128, i)
                vj = T.axis.spatial(128, j)
                C[vi, vj] = T.max(Y[vi, vj], T.float32(0))


@T.prim_func
def mm_relu_small(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32"),
                  C: T.Buffer((16, 16), "float32")):
    Y = T.alloc_buffer((16, 16), dtype="float32")
    for i, j, k in T.grid(16, 16, 16):
        with T.block("Y"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                Y[vi, vj] = T.float32(0)
            Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]
    for i, j in T.grid(16, 16):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = T.max(Y[vi, vj], T.float32(0))


@T.prim_func
def conv2d_nchw(A: T.Buffer((1, 2, 4, 4), "float32"), W: T.Buffer((3, 2, 3, 3), "float32"),
                Out: T.Buffer((1, 3, 4, 4), "float32")):
    """A 3x3 convolution (stride 1, zero padding 1) in NCHW, with its padding stage."""
    pad = T.alloc_buffer((1, 2, 6, 6), "float32")
    for n, c, h, w in T.grid(1, 2, 6, 6):
        with T.block("pad"):
            vn, vc, vh, vw = T.axis.remap("SSSS", [n, c, h, w])
            pad[vn, vc, vh, vw] = T.if_then_else(
                1 <= vh and vh < 5 and 1 <= vw and vw < 5, A[vn, vc, vh - 1, vw - 1],
                T.float32(0))
    for n, f, y, x, rc, ry, rx in T.grid(1, 3, 4, 4, 2, 3, 3):
        with T.block("conv"):
            vn, vf, vy, vx, vrc, vry, vrx = T.axis.remap("SSSSRRR", [n, f, y, x, rc, ry, rx])
            with T.init():
                Out[vn, vf, vy, vx] = T.float32(0)
            Out[vn, vf, vy, vx] = Out[vn, vf, vy, vx] + pad[vn, vrc, vy + vry, vx + vrx] * W[
                vf, vrc, vry, vrx]


softmax = make_softmax(4, 8)
