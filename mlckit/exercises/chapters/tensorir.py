"""Chapter "TensorIR by hand": write TIR functions in TVMScript."""

from __future__ import annotations

import numpy as np

from ..checks import same_block
from ..exercise import Exercise
from ..registry import register

F32 = "float32"

register(Exercise(
    name="tensorir.add",
    title="Element-wise addition",
    statement="Write a TIR function that adds two 4×4 matrices: C[i, j] = A[i, j] + B[i, j]. "
              "One block called `C` inside two spatial loops.",
    kind="tvmscript",
    answer_name="add",
    start='''
def add(A: T.Buffer((4, 4), "float32"), B: T.Buffer((4, 4), "float32"),
        C: T.Buffer((4, 4), "float32")):
    T.func_attr({"global_symbol": "add", "tir.noalias": True})
    ...  # the loops and the block "C"
''',
    solution='''
@T.prim_func
def add(A: T.Buffer((4, 4), "float32"), B: T.Buffer((4, 4), "float32"),
        C: T.Buffer((4, 4), "float32")):
    T.func_attr({"global_symbol": "add", "tir.noalias": True})
    for i, j in T.grid(4, 4):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = A[vi, vj] + B[vi, vj]
''',
    spec=lambda a, b: a + b,
    inputs=[("A", (4, 4), F32), ("B", (4, 4), F32)],
    outputs=[("C", (4, 4), F32)],
    structure=[same_block("C")],
    hints=["`for i, j in T.grid(4, 4):` gives both loops at once.",
           "Inside, `with T.block(\"C\"):` then `vi, vj = T.axis.remap(\"SS\", [i, j])`.",
           "The block's body is one store: `C[vi, vj] = A[vi, vj] + B[vi, vj]`."],
))

register(Exercise(
    name="tensorir.broadcast_add",
    title="Broadcast addition",
    statement="Add a vector to every row of a matrix: C[i, j] = A[i, j] + B[j], with A of "
              "shape (4, 4) and B of shape (4,). One block called `C`.",
    kind="tvmscript",
    answer_name="broadcast_add",
    start='''
def broadcast_add(A: T.Buffer((4, 4), "float32"), B: T.Buffer((4,), "float32"),
                  C: T.Buffer((4, 4), "float32")):
    T.func_attr({"global_symbol": "broadcast_add", "tir.noalias": True})
    ...
''',
    solution='''
@T.prim_func
def broadcast_add(A: T.Buffer((4, 4), "float32"), B: T.Buffer((4,), "float32"),
                  C: T.Buffer((4, 4), "float32")):
    T.func_attr({"global_symbol": "broadcast_add", "tir.noalias": True})
    for i, j in T.grid(4, 4):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = A[vi, vj] + B[vj]
''',
    spec=lambda a, b: a + b[None, :],
    inputs=[("A", (4, 4), F32), ("B", (4,), F32)],
    outputs=[("C", (4, 4), F32)],
    structure=[same_block("C")],
    hints=["B has one axis: index it with the column axis only.",
           "Which of vi, vj walks along a row? The same one indexes B."],
))

register(Exercise(
    name="tensorir.transpose",
    title="Transpose",
    statement="Write B = Aᵀ for a 4×8 matrix A (B has shape (8, 4)), as one block `B` "
              "whose loops follow B's axes.",
    kind="tvmscript",
    answer_name="transpose",
    start='''
def transpose(A: T.Buffer((4, 8), "float32"), B: T.Buffer((8, 4), "float32")):
    T.func_attr({"global_symbol": "transpose", "tir.noalias": True})
    ...
''',
    solution='''
@T.prim_func
def transpose(A: T.Buffer((4, 8), "float32"), B: T.Buffer((8, 4), "float32")):
    T.func_attr({"global_symbol": "transpose", "tir.noalias": True})
    for i, j in T.grid(8, 4):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vj, vi]
''',
    spec=lambda a: a.T,
    inputs=[("A", (4, 8), F32)],
    outputs=[("B", (8, 4), F32)],
    structure=[same_block("B")],
    hints=["The loops run over B: T.grid(8, 4).", "B[vi, vj] takes A's element with the "
           "indices swapped."],
))

register(Exercise(
    name="tensorir.mm_relu",
    title="Matrix multiplication and ReLU",
    statement="Write mm_relu for 8×8 matrices: Y = A @ B in a block `Y` (a reduction with "
              "an init), then C = max(Y, 0) in a block `C`. Y is an intermediate buffer "
              "(T.alloc_buffer).",
    kind="tvmscript",
    answer_name="mm_relu",
    start='''
def mm_relu(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32"),
            C: T.Buffer((8, 8), "float32")):
    T.func_attr({"global_symbol": "mm_relu", "tir.noalias": True})
    Y = T.alloc_buffer((8, 8), "float32")
    ...
''',
    solution='''
@T.prim_func
def mm_relu(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32"),
            C: T.Buffer((8, 8), "float32")):
    T.func_attr({"global_symbol": "mm_relu", "tir.noalias": True})
    Y = T.alloc_buffer((8, 8), "float32")
    for i, j, k in T.grid(8, 8, 8):
        with T.block("Y"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                Y[vi, vj] = T.float32(0)
            Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]
    for i, j in T.grid(8, 8):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = T.max(Y[vi, vj], T.float32(0))
''',
    spec=lambda a, b: np.maximum(a @ b, 0),
    inputs=[("A", (8, 8), F32), ("B", (8, 8), F32)],
    outputs=[("C", (8, 8), F32)],
    structure=[same_block("Y", "C")],
    hints=["The reduction axis k is declared with \"R\" in T.axis.remap(\"SSR\", ...).",
           "`with T.init():` sets Y[vi, vj] to 0 before the first k.",
           "Y[vi, vj] accumulates A[vi, vk] * B[vk, vj]."],
))

register(Exercise(
    name="tensorir.bmm_relu",
    title="Batched matrix multiplication and ReLU",
    statement="Write bmm_relu: for each of 2 batches, Y[n] = A[n] @ B[n] (4×4 matrices) in "
              "a block `Y`, then C = max(Y, 0) in a block `C`.",
    kind="tvmscript",
    answer_name="bmm_relu",
    start='''
def bmm_relu(A: T.Buffer((2, 4, 4), "float32"), B: T.Buffer((2, 4, 4), "float32"),
             C: T.Buffer((2, 4, 4), "float32")):
    T.func_attr({"global_symbol": "bmm_relu", "tir.noalias": True})
    Y = T.alloc_buffer((2, 4, 4), "float32")
    ...
''',
    solution='''
@T.prim_func
def bmm_relu(A: T.Buffer((2, 4, 4), "float32"), B: T.Buffer((2, 4, 4), "float32"),
             C: T.Buffer((2, 4, 4), "float32")):
    T.func_attr({"global_symbol": "bmm_relu", "tir.noalias": True})
    Y = T.alloc_buffer((2, 4, 4), "float32")
    for n, i, j, k in T.grid(2, 4, 4, 4):
        with T.block("Y"):
            vn, vi, vj, vk = T.axis.remap("SSSR", [n, i, j, k])
            with T.init():
                Y[vn, vi, vj] = T.float32(0)
            Y[vn, vi, vj] = Y[vn, vi, vj] + A[vn, vi, vk] * B[vn, vk, vj]
    for n, i, j in T.grid(2, 4, 4):
        with T.block("C"):
            vn, vi, vj = T.axis.remap("SSS", [n, i, j])
            C[vn, vi, vj] = T.max(Y[vn, vi, vj], T.float32(0))
''',
    spec=lambda a, b: np.maximum(a @ b, 0),
    inputs=[("A", (2, 4, 4), F32), ("B", (2, 4, 4), F32)],
    outputs=[("C", (2, 4, 4), F32)],
    structure=[same_block("Y", "C")],
    hints=["The batch axis n is spatial: \"SSSR\" for n, i, j, k.",
           "Every access carries the batch index first: A[vn, vi, vk]."],
))

register(Exercise(
    name="tensorir.conv2d",
    title="A small 2-D convolution",
    statement="Write conv2d: one image of 6×6 pixels and 1 channel, 2 output channels, 3×3 "
              "kernels, no padding, stride 1: Out[co, h, w] = Σ_{kh, kw} "
              "X[h + kh, w + kw] · W[co, kh, kw]. One block `Out`.",
    kind="tvmscript",
    answer_name="conv2d",
    start='''
def conv2d(X: T.Buffer((6, 6), "int64"), W: T.Buffer((2, 3, 3), "int64"),
           Out: T.Buffer((2, 4, 4), "int64")):
    T.func_attr({"global_symbol": "conv2d", "tir.noalias": True})
    ...
''',
    solution='''
@T.prim_func
def conv2d(X: T.Buffer((6, 6), "int64"), W: T.Buffer((2, 3, 3), "int64"),
           Out: T.Buffer((2, 4, 4), "int64")):
    T.func_attr({"global_symbol": "conv2d", "tir.noalias": True})
    for co, h, w, kh, kw in T.grid(2, 4, 4, 3, 3):
        with T.block("Out"):
            vco, vh, vw, vkh, vkw = T.axis.remap("SSSRR", [co, h, w, kh, kw])
            with T.init():
                Out[vco, vh, vw] = T.int64(0)
            Out[vco, vh, vw] = Out[vco, vh, vw] + X[vh + vkh, vw + vkw] * W[vco, vkh, vkw]
''',
    spec=lambda x, w: np.einsum(
        "hwij,cij->chw", np.lib.stride_tricks.sliding_window_view(x, (3, 3)), w),
    inputs=[("X", (6, 6), "int64"), ("W", (2, 3, 3), "int64")],
    outputs=[("Out", (2, 4, 4), "int64")],
    structure=[same_block("Out")],
    hints=["Two reduction axes: \"SSSRR\" for co, h, w, kh, kw.",
           "The output is 4×4 because a 3×3 window fits 4 times along 6 pixels.",
           "X is read at [vh + vkh, vw + vkw]."],
))
