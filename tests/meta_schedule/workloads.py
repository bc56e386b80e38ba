"""Small workloads for the tuner's tests: a matmul and a linear layer with bias (the
course's shapes, shrunk so a candidate compiles and runs quickly)."""

import numpy as np

from mlckit.ir import IRModule
from mlckit.script import ir as I
from mlckit.script import tir as T


@I.ir_module
class Matmul:
    @T.prim_func
    def main(A: T.Buffer((32, 32), "float32"), B: T.Buffer((32, 32), "float32"),
             C: T.Buffer((32, 32), "float32")):
        T.func_attr({"global_symbol": "main", "tir.noalias": True})
        for i, j, k in T.grid(32, 32, 32):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    C[vi, vj] = T.float32(0)
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


@T.prim_func
def linear0(X: T.Buffer((1, 64), "float32"), W: T.Buffer((32, 64), "float32"),
            B: T.Buffer((32,), "float32"), Z: T.Buffer((1, 32), "float32")):
    T.func_attr({"global_symbol": "linear0", "tir.noalias": True})
    Y = T.alloc_buffer((1, 32), "float32")
    for i, j, k in T.grid(1, 32, 64):
        with T.block("Y"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                Y[vi, vj] = T.float32(0)
            Y[vi, vj] = Y[vi, vj] + X[vi, vk] * W[vj, vk]
    for i, j in T.grid(1, 32):
        with T.block("Z"):
            vi, vj = T.axis.remap("SS", [i, j])
            Z[vi, vj] = Y[vi, vj] + B[vj]


Linear = IRModule({"main": linear0.with_attr("global_symbol", "main")})


def stochastic_schedule_mm(sch):
    """The course's hand-written design space."""
    block_C = sch.get_block("C", "main")
    i, j, k = sch.get_loops(block=block_C)
    j_factors = sch.sample_perfect_tile(loop=j, n=2)
    j_0, j_1 = sch.split(loop=j, factors=j_factors)
    sch.reorder(i, j_0, k, j_1)
    sch.decompose_reduction(block_C, k)
    return sch


def run_matmul(mod, target="llvm"):
    """Run a scheduled Matmul and return (result, NumPy's result)."""
    import mlckit

    rng = np.random.default_rng(0)
    a = rng.random((32, 32), dtype=np.float32)
    b = rng.random((32, 32), dtype=np.float32)
    c = np.zeros((32, 32), np.float32)
    mlckit.build(mod, target)["main"](a, b, c)
    return c, a @ b
