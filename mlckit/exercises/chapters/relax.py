"""Chapter "End-to-end models with Relax and call_tir": a Relax main calling TIR kernels,
tensor expressions (``te``), and models built with the BlockBuilder."""

from __future__ import annotations

import numpy as np

from ..checks import calls_op
from ..exercise import Exercise
from ..registry import register

F32 = "float32"

KERNELS = '''
    @T.prim_func
    def linear(X: T.Buffer((1, 4), "float32"), W: T.Buffer((3, 4), "float32"),
               B: T.Buffer((3,), "float32"), Z: T.Buffer((1, 3), "float32")):
        T.func_attr({"global_symbol": "linear", "tir.noalias": True})
        Y = T.alloc_buffer((1, 3), "float32")
        for i, j, k in T.grid(1, 3, 4):
            with T.block("Y"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    Y[vi, vj] = T.float32(0)
                Y[vi, vj] = Y[vi, vj] + X[vi, vk] * W[vj, vk]
        for i, j in T.grid(1, 3):
            with T.block("Z"):
                vi, vj = T.axis.remap("SS", [i, j])
                Z[vi, vj] = Y[vi, vj] + B[vj]

    @T.prim_func
    def relu(X: T.Buffer((1, 3), "float32"), Y: T.Buffer((1, 3), "float32")):
        T.func_attr({"global_symbol": "relu", "tir.noalias": True})
        for i, j in T.grid(1, 3):
            with T.block("Y"):
                vi, vj = T.axis.remap("SS", [i, j])
                Y[vi, vj] = T.max(X[vi, vj], T.float32(0))
'''


def linear_relu(x, w, b):
    return np.maximum(x @ w.T + b, 0)


register(Exercise(
    name="relax.call_tir",
    title="A Relax main that calls TIR kernels",
    statement="The module holds two TIR kernels, `linear` (Z = X Wᵀ + B) and `relu`. Write "
              "its Relax function `main(x, w, b)` that returns relu(linear(x, w, b)), calling "
              "both kernels with R.call_tir inside a dataflow block.",
    kind="relax",
    answer_name="LinearReLU",
    start='''
@I.ir_module
class LinearReLU:
''' + KERNELS + '''
    @R.function
    def main(x: R.Tensor((1, 4), "float32"), w: R.Tensor((3, 4), "float32"),
             b: R.Tensor((3,), "float32")):
        # replace this line: two R.call_tir calls in a dataflow block
        return x
''',
    solution='''
@I.ir_module
class LinearReLU:
''' + KERNELS + '''
    @R.function
    def main(x: R.Tensor((1, 4), "float32"), w: R.Tensor((3, 4), "float32"),
             b: R.Tensor((3,), "float32")):
        cls = LinearReLU
        with R.dataflow():
            lv0 = R.call_tir(cls.linear, (x, w, b), out_sinfo=R.Tensor((1, 3), "float32"))
            out = R.call_tir(cls.relu, (lv0,), out_sinfo=R.Tensor((1, 3), "float32"))
            R.output(out)
        return out
''',
    spec=linear_relu,
    inputs=[("x", (1, 4), F32), ("w", (3, 4), F32), ("b", (3,), F32)],
    outputs=[("out", (1, 3), F32)],
    structure=[calls_op("relax.call_tir", count=2)],
    hints=["`cls = LinearReLU` at the top of main lets you name the kernels: cls.linear.",
           "R.call_tir(cls.linear, (x, w, b), out_sinfo=R.Tensor((1, 3), \"float32\")).",
           "Bind both calls inside `with R.dataflow():` and end with R.output(out)."],
))

register(Exercise(
    name="relax.te_relu",
    title="ReLU as a tensor expression",
    statement="Write relu(A) with te.compute: an output of A's shape whose element (i, j) is "
              "max(A[i, j], 0). Checked on several shapes.",
    kind="te",
    answer_name="relu",
    start='''
def relu(A):
    return ...  # te.compute(...)
''',
    solution='''
def relu(A):
    return te.compute(A.shape, lambda i, j: te.max(A[i, j], tir.const(0, A.dtype)), name="B")
''',
    spec=lambda a: np.maximum(a, 0),
    inputs=[("A", ("m", "n"), F32)],
    outputs=[("B", ("m", "n"), F32)],
    sizes=[{"m": 4, "n": 8}, {"m": 3, "n": 5}],
    hints=["te.compute(shape, lambda i, j: ...) builds the output element by element.",
           "te.max(A[i, j], tir.const(0, A.dtype)) compares with a zero of A's dtype."],
))

register(Exercise(
    name="relax.te_matmul",
    title="Matrix multiplication as a tensor expression",
    statement="Write matmul(A, B) = A @ B with te.compute and a te.reduce_axis over k. "
              "Checked on several shapes.",
    kind="te",
    answer_name="matmul",
    start='''
def matmul(A, B):
    k = te.reduce_axis((0, A.shape[1]), name="k")
    return ...
''',
    solution='''
def matmul(A, B):
    k = te.reduce_axis((0, A.shape[1]), name="k")
    return te.compute((A.shape[0], B.shape[1]),
                      lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
''',
    spec=lambda a, b: a @ b,
    inputs=[("A", ("m", "k"), F32), ("B", ("k", "n"), F32)],
    outputs=[("C", ("m", "n"), F32)],
    sizes=[{"m": 4, "k": 6, "n": 5}, {"m": 8, "k": 3, "n": 2}],
    hints=["The output has shape (A.shape[0], B.shape[1]).",
           "te.sum(A[i, k] * B[k, j], axis=k) sums over the reduce axis."],
))

register(Exercise(
    name="relax.blockbuilder",
    title="A model built with the BlockBuilder",
    statement="Write build() returning an IRModule whose `main(x, w)` computes "
              "relu(x @ wᵀ) for x of shape (2, 4) and w of shape (3, 4), built with "
              "relax.BlockBuilder and bb.emit_te (topi.nn.dense, then topi.nn.relu).",
    kind="relax",
    answer_name="build",
    start='''
def build():
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorStructInfo((2, 4), "float32"))
    w = relax.Var("w", relax.TensorStructInfo((3, 4), "float32"))
    ...
    return bb.get()
''',
    solution='''
def build():
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorStructInfo((2, 4), "float32"))
    w = relax.Var("w", relax.TensorStructInfo((3, 4), "float32"))
    with bb.function("main", [x, w]):
        with bb.dataflow():
            lv0 = bb.emit_te(topi.nn.dense, x, w)
            gv = bb.emit_output(bb.emit_te(topi.nn.relu, lv0))
        bb.emit_func_output(gv)
    return bb.get()
''',
    spec=lambda x, w: np.maximum(x @ w.T, 0),
    inputs=[("x", (2, 4), F32), ("w", (3, 4), F32)],
    outputs=[("out", (2, 3), F32)],
    structure=[calls_op("relax.call_tir", count=2)],
    hints=["`with bb.function(\"main\", [x, w]):` and inside it `with bb.dataflow():`.",
           "bb.emit_te(topi.nn.dense, x, w) emits a TIR kernel and its call_tir.",
           "End the dataflow block with bb.emit_output(...), the function with "
           "bb.emit_func_output(gv)."],
))
