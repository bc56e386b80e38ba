"""Kernels shared by several test packages, as factories over their sizes, and the course's
tiling of a matmul."""

from mlckit import tir
from mlckit.script import tir as T


@T.prim_func
def mm_relu(A: T.Buffer((128, 128), "float32"),
            B: T.Buffer((128, 128), "float32"),
            C: T.Buffer((128, 128), "float32")):
    """The course's mm_relu, written as the course writes it."""
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


def make_mm_relu(n: int, m: int, k: int, name: str):
    """relu(A @ B) for A (n, k) and B (k, m), as the PrimFunc ``name``."""

    @T.prim_func
    def func(A: T.Buffer((n, k), "float32"), B: T.Buffer((k, m), "float32"),
             C: T.Buffer((n, m), "float32")):
        Y = T.alloc_buffer((n, m), dtype="float32")
        for i, j, r in T.grid(n, m, k):
            with T.block("Y"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, r])
                with T.init():
                    Y[vi, vj] = T.float32(0)
                Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]
        for i, j in T.grid(n, m):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = T.max(Y[vi, vj], T.float32(0))

    return func.with_attr("global_symbol", name)


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


def make_matmul(n: int):
    """C = A @ B for (n, n) float32 matrices, the PrimFunc ``main`` (block ``C``)."""

    @T.prim_func
    def main(A: T.Buffer((n, n), "float32"), B: T.Buffer((n, n), "float32"),
             C: T.Buffer((n, n), "float32")):
        T.func_attr({"global_symbol": "main", "tir.noalias": True})
        for i, j, k in T.grid(n, n, n):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    C[vi, vj] = T.float32(0)
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]

    return main


def tile_matmul(func, ti: int, tj: int, tk: int, vectorize: bool = False,
                unroll: bool = False) -> tir.Schedule:
    """The course's / TVM tutorial's tiling of ``func``'s block ``C``: i, j, k split by ``ti``,
    ``tj``, ``tk``, ``reorder(i0, j0, k0, i1, k1, j1)``, optionally ``vectorize(j1)`` and
    ``unroll(k1)``, then ``decompose_reduction(C, k0)``.

    Example::

        tile_matmul(make_matmul(64), 32, 32, 4).mod["main"]
    """
    sch = tir.Schedule(func)
    block = sch.get_block("C")
    i, j, k = sch.get_loops(block)
    i0, i1 = sch.split(i, [None, ti])
    j0, j1 = sch.split(j, [None, tj])
    k0, k1 = sch.split(k, [None, tk])
    sch.reorder(i0, j0, k0, i1, k1, j1)
    if vectorize:
        sch.vectorize(j1)
    if unroll:
        sch.unroll(k1)
    sch.decompose_reduction(block, k0)
    return sch


def make_linear0(k: int, n: int):
    """The course's ``linear0``: Z = X @ W.T + B for X (1, k), W (n, k), B (n,)."""

    @T.prim_func
    def linear0(X: T.Buffer((1, k), "float32"), W: T.Buffer((n, k), "float32"),
                B: T.Buffer((n,), "float32"), Z: T.Buffer((1, n), "float32")):
        T.func_attr({"global_symbol": "linear0", "tir.noalias": True})
        Y = T.alloc_buffer((1, n), "float32")
        for i, j, r in T.grid(1, n, k):
            with T.block("Y"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, r])
                with T.init():
                    Y[vi, vj] = T.float32(0)
                Y[vi, vj] = Y[vi, vj] + X[vi, vk] * W[vj, vk]
        for i, j in T.grid(1, n):
            with T.block("Z"):
                vi, vj = T.axis.remap("SS", [i, j])
                Z[vi, vj] = Y[vi, vj] + B[vj]

    return linear0
