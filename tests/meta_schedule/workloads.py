"""Small workloads for the tuner's tests: a matmul and a linear layer with bias (the
course's shapes, shrunk so a candidate compiles and runs quickly)."""

import numpy as np

from mlckit.ir import IRModule

from ..kernels import make_linear0, make_matmul

Matmul = IRModule({"main": make_matmul(32)})
linear0 = make_linear0(64, 32)
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
