"""Small TensorIR workloads shared by the schedule tests (TVMScript, as in the course)."""

from mlckit.ir import IRModule
from mlckit.script import tir as T

from ...kernels import make_mm_relu, make_softmax, mm_relu


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


MMRelu = IRModule({"mm_relu": mm_relu})


mm_relu_small = make_mm_relu(16, 16, 16, "mm_relu_small")


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


@T.prim_func
def scale_add_8x6(A: T.Buffer((8, 6), "float32"), C: T.Buffer((8, 6), "float32")):
    B = T.alloc_buffer((8, 6), "float32")
    for i, j in T.grid(8, 6):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(8, 6):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] + T.float32(1)
