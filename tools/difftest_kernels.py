"""Kernels for ``difftest_tvm.py``: course-like PrimFuncs as TVMScript text (v0.23
spelling, ``T.block``), each drawn with random shapes from a ``random.Random``."""

_DIMS = (4, 6, 8, 12, 16)


def _matmul(r):
    m, n, k = (r.choice(_DIMS) for _ in range(3))
    return f'''
@T.prim_func
def main(A: T.Buffer(({m}, {k}), "float32"), B: T.Buffer(({k}, {n}), "float32"), C: T.Buffer(({m}, {n}), "float32")):
    for i, j, k in T.grid({m}, {n}, {k}):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
'''


def _mm_relu(r):
    m, n, k = (r.choice(_DIMS) for _ in range(3))
    return f'''
@T.prim_func
def main(A: T.Buffer(({m}, {k}), "float32"), B: T.Buffer(({k}, {n}), "float32"), C: T.Buffer(({m}, {n}), "float32")):
    Y = T.alloc_buffer(({m}, {n}), "float32")
    for i, j, k in T.grid({m}, {n}, {k}):
        with T.block("Y"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                Y[vi, vj] = T.float32(0)
            Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]
    for i, j in T.grid({m}, {n}):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = T.max(Y[vi, vj], T.float32(0))
'''


def _bmm(r):
    b = r.choice((1, 2, 3))
    m, n, k = (r.choice(_DIMS[:3]) for _ in range(3))
    return f'''
@T.prim_func
def main(A: T.Buffer(({b}, {m}, {k}), "float32"), B: T.Buffer(({b}, {k}, {n}), "float32"), C: T.Buffer(({b}, {m}, {n}), "float32")):
    for b, i, j, k in T.grid({b}, {m}, {n}, {k}):
        with T.block("C"):
            vb, vi, vj, vk = T.axis.remap("SSSR", [b, i, j, k])
            with T.init():
                C[vb, vi, vj] = T.float32(0)
            C[vb, vi, vj] = C[vb, vi, vj] + A[vb, vi, vk] * B[vb, vk, vj]
'''


def _conv2d(r):
    c, f, h = r.choice((1, 2)), r.choice((2, 3)), r.choice((4, 6))
    p = h + 2
    return f'''
@T.prim_func
def main(A: T.Buffer((1, {c}, {h}, {h}), "float32"), W: T.Buffer(({f}, {c}, 3, 3), "float32"), Out: T.Buffer((1, {f}, {h}, {h}), "float32")):
    pad = T.alloc_buffer((1, {c}, {p}, {p}), "float32")
    for n, c, h, w in T.grid(1, {c}, {p}, {p}):
        with T.block("pad"):
            vn, vc, vh, vw = T.axis.remap("SSSS", [n, c, h, w])
            pad[vn, vc, vh, vw] = T.if_then_else(1 <= vh and vh < {h + 1} and 1 <= vw and vw < {h + 1}, A[vn, vc, vh - 1, vw - 1], T.float32(0))
    for n, f, y, x, rc, ry, rx in T.grid(1, {f}, {h}, {h}, {c}, 3, 3):
        with T.block("conv"):
            vn, vf, vy, vx, vrc, vry, vrx = T.axis.remap("SSSSRRR", [n, f, y, x, rc, ry, rx])
            with T.init():
                Out[vn, vf, vy, vx] = T.float32(0)
            Out[vn, vf, vy, vx] = Out[vn, vf, vy, vx] + pad[vn, vrc, vy + vry, vx + vrx] * W[vf, vrc, vry, vrx]
'''


def _softmax(r):
    m, n = r.choice(_DIMS), r.choice(_DIMS)
    return f'''
@T.prim_func
def main(A: T.Buffer(({m}, {n}), "float32"), B: T.Buffer(({m}, {n}), "float32")):
    maxelem = T.alloc_buffer(({m},), "float32")
    expo = T.alloc_buffer(({m}, {n}), "float32")
    expsum = T.alloc_buffer(({m},), "float32")
    for i, k in T.grid({m}, {n}):
        with T.block("maxelem"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                maxelem[vi] = T.min_value("float32")
            maxelem[vi] = T.max(maxelem[vi], A[vi, vk])
    for i, j in T.grid({m}, {n}):
        with T.block("exp"):
            vi, vj = T.axis.remap("SS", [i, j])
            expo[vi, vj] = T.exp(A[vi, vj] - maxelem[vi])
    for i, k in T.grid({m}, {n}):
        with T.block("expsum"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                expsum[vi] = T.float32(0)
            expsum[vi] = expsum[vi] + expo[vi, vk]
    for i, j in T.grid({m}, {n}):
        with T.block("norm"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = expo[vi, vj] / expsum[vi]
'''


def _row_sum(r):
    m, n = r.choice(_DIMS), r.choice(_DIMS)
    return f'''
@T.prim_func
def main(A: T.Buffer(({m}, {n}), "float32"), B: T.Buffer(({m},), "float32")):
    for i, k in T.grid({m}, {n}):
        with T.block("B"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                B[vi] = T.float32(0)
            B[vi] = B[vi] + A[vi, vk]
'''


def _sum_all(r):
    m, n = r.choice(_DIMS), r.choice(_DIMS)
    return f'''
@T.prim_func
def main(A: T.Buffer(({m}, {n}), "float32"), B: T.Buffer((1,), "float32")):
    for i, j in T.grid({m}, {n}):
        with T.block("B"):
            vi, vj = T.axis.remap("RR", [i, j])
            with T.init():
                B[0] = T.float32(0)
            B[0] = B[0] + A[vi, vj]
'''


def _elementwise(r):
    m, n = r.choice(_DIMS), r.choice(_DIMS)
    return f'''
@T.prim_func
def main(A: T.Buffer(({m}, {n}), "float32"), D: T.Buffer(({m}, {n}), "float32")):
    B = T.alloc_buffer(({m}, {n}), "float32")
    C = T.alloc_buffer(({m}, {n}), "float32")
    for i, j in T.grid({m}, {n}):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid({m}, {n}):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] + T.float32(1)
    for i, j in T.grid({m}, {n}):
        with T.block("D"):
            vi, vj = T.axis.remap("SS", [i, j])
            D[vi, vj] = T.max(C[vi, vj], T.float32(0))
'''


FAMILIES = {
    "matmul": _matmul, "mm_relu": _mm_relu, "bmm": _bmm, "conv2d": _conv2d,
    "softmax": _softmax, "row_sum": _row_sum, "sum_all": _sum_all, "elementwise": _elementwise,
}
