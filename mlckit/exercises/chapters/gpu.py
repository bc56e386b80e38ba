"""Chapter "GPU thread binding and shared memory": bind loops to blockIdx/threadIdx and
stage data in shared memory.  The answers are built for ``"cuda"`` and run on the no-GPU
path where there is no GPU (``mlckit.backend.numba_cuda``)."""

from __future__ import annotations

from ..checks import buffer_scope, same_loops, thread_bound
from ..exercise import Exercise
from ..registry import register

F32 = "float32"

VECTOR_ADD = '''
@T.prim_func
def before(A: T.Buffer(({n},), "float32"), B: T.Buffer(({n},), "float32"),
           C: T.Buffer(({n},), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": True})
    for i in range({n}):
        with T.block("C"):
            vi = T.axis.remap("S", [i])
            C[vi] = A[vi] + B[vi]
'''

WINDOW_SUM = '''
@T.prim_func
def before(A: T.Buffer(({n} + 2,), "float32"), B: T.Buffer(({n},), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": True})
    for i in range({n}):
        with T.block("C"):
            vi = T.axis.remap("S", [i])
            B[vi] = A[vi] + A[vi + 1] + A[vi + 2]
'''

MATMUL = '''
@T.prim_func
def before(A: T.Buffer(({n}, {n}), "float32"), B: T.Buffer(({n}, {n}), "float32"),
           C: T.Buffer(({n}, {n}), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": True})
    for i, j, k in T.grid({n}, {n}, {n}):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
'''

TRANSPOSE = '''
@T.prim_func
def before(A: T.Buffer(({n}, {n}), "float32"), B: T.Buffer(({n}, {n}), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": True})
    for i, j in T.grid({n}, {n}):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vj, vi]
'''


def window_sum(a):
    return a[:-2] + a[1:-1] + a[2:]


register(Exercise(
    name="gpu.vector_add",
    title="Bind a vector add to GPU threads",
    statement="Split the loop of the vector add (`start_program()`) into blocks of 32 "
              "threads: bind the outer loop to blockIdx.x and the inner one to threadIdx.x.",
    kind="gpu",
    answer_name="schedule",
    program=VECTOR_ADD,
    start='''
def schedule(sch):
    block_C = sch.get_block("C")
    i, = sch.get_loops(block_C)
    ...
''',
    solution='''
def schedule(sch):
    block_C = sch.get_block("C")
    i, = sch.get_loops(block_C)
    i0, i1 = sch.split(i, factors=[None, 32])
    sch.bind(i0, "blockIdx.x")
    sch.bind(i1, "threadIdx.x")
''',
    spec=lambda a, b: a + b,
    inputs=[("A", ("n",), F32), ("B", ("n",), F32)],
    outputs=[("C", ("n",), F32)],
    sizes=[{"n": 128}, {"n": 64}],
    structure=[thread_bound("blockIdx.x", "threadIdx.x"), same_loops("C")],
    hints=["split gives the two loops; `sch.bind(loop, \"blockIdx.x\")` binds one.",
           "The inner loop (extent 32) goes to threadIdx.x."],
))

register(Exercise(
    name="gpu.window_sum_shared",
    title="Window sum through shared memory",
    statement="B[i] = A[i] + A[i+1] + A[i+2]. Bind i to 4 thread blocks of 32 threads "
              "(split i by 32: blockIdx.x, threadIdx.x). Then stage A in shared memory: "
              "cache_read A into \"shared\", compute_at it under the blockIdx.x loop, and let "
              "the threads of a block load it together (split the copy's loop by 32 and bind "
              "the inner part to threadIdx.x).",
    kind="gpu",
    answer_name="schedule",
    program=WINDOW_SUM,
    start='''
def schedule(sch):
    block_C = sch.get_block("C")
    i, = sch.get_loops(block_C)
    i0, i1 = sch.split(i, factors=[None, 32])
    sch.bind(i0, "blockIdx.x")
    sch.bind(i1, "threadIdx.x")
    ...
''',
    solution='''
def schedule(sch):
    block_C = sch.get_block("C")
    i, = sch.get_loops(block_C)
    i0, i1 = sch.split(i, factors=[None, 32])
    sch.bind(i0, "blockIdx.x")
    sch.bind(i1, "threadIdx.x")
    A_shared = sch.cache_read(block_C, 0, "shared")
    sch.compute_at(A_shared, i0)
    ax = sch.get_loops(A_shared)[-1]
    ax0, ax1 = sch.split(ax, factors=[None, 32])
    sch.bind(ax1, "threadIdx.x")
''',
    spec=window_sum,
    inputs=[("A", ("m",), F32)],
    outputs=[("B", ("n",), F32)],
    sizes=[{"n": 128, "m": 130}, {"n": 64, "m": 66}],
    structure=[thread_bound("blockIdx.x", "threadIdx.x"), buffer_scope("shared"),
               same_loops("A_shared")],
    hints=["`sch.cache_read(block_C, 0, \"shared\")` makes a copy block of A.",
           "compute_at the copy under the blockIdx.x loop: each block loads its own window.",
           "The copy's loop has 34 iterations: split it by 32 and bind the inner loop to "
           "threadIdx.x."],
))

register(Exercise(
    name="gpu.matmul_tiles",
    title="A matmul in 8×8 thread tiles",
    statement="Bind the 32×32 matmul (`start_program()`): split i and j by 8, reorder to "
              "i_0, j_0, i_1, j_1, k, bind i_0 to blockIdx.x, j_0 to blockIdx.y, i_1 to "
              "threadIdx.x and j_1 to threadIdx.y.",
    kind="gpu",
    answer_name="schedule",
    program=MATMUL,
    start='''
def schedule(sch):
    block_C = sch.get_block("C")
    i, j, k = sch.get_loops(block_C)
    ...
''',
    solution='''
def schedule(sch):
    block_C = sch.get_block("C")
    i, j, k = sch.get_loops(block_C)
    i0, i1 = sch.split(i, factors=[None, 8])
    j0, j1 = sch.split(j, factors=[None, 8])
    sch.reorder(i0, j0, i1, j1, k)
    sch.bind(i0, "blockIdx.x")
    sch.bind(j0, "blockIdx.y")
    sch.bind(i1, "threadIdx.x")
    sch.bind(j1, "threadIdx.y")
''',
    spec=lambda a, b: a @ b,
    inputs=[("A", ("n", "n"), F32), ("B", ("n", "n"), F32)],
    outputs=[("C", ("n", "n"), F32)],
    sizes=[{"n": 32}, {"n": 16}],
    structure=[thread_bound("blockIdx.x", "blockIdx.y", "threadIdx.x", "threadIdx.y"),
               same_loops("C")],
    hints=["Split both spatial loops first, then reorder all five loops at once.",
           "Bind after reordering: bound loops must stay outside k."],
))

register(Exercise(
    name="gpu.transpose_shared",
    title="A transpose staged in shared memory",
    statement="Bind the 32×32 transpose B = Aᵀ in 8×8 tiles (split i and j by 8, reorder to "
              "i_0, j_0, i_1, j_1; i_0 → blockIdx.y, j_0 → blockIdx.x, i_1 → threadIdx.y, "
              "j_1 → threadIdx.x) and stage each tile of A in shared memory (cache_read, "
              "compute_at under j_0).",
    kind="gpu",
    answer_name="schedule",
    program=TRANSPOSE,
    start='''
def schedule(sch):
    block_B = sch.get_block("B")
    i, j = sch.get_loops(block_B)
    ...
''',
    solution='''
def schedule(sch):
    block_B = sch.get_block("B")
    i, j = sch.get_loops(block_B)
    i0, i1 = sch.split(i, factors=[None, 8])
    j0, j1 = sch.split(j, factors=[None, 8])
    sch.reorder(i0, j0, i1, j1)
    sch.bind(i0, "blockIdx.y")
    sch.bind(j0, "blockIdx.x")
    sch.bind(i1, "threadIdx.y")
    sch.bind(j1, "threadIdx.x")
    A_shared = sch.cache_read(block_B, 0, "shared")
    sch.compute_at(A_shared, j0)
    a0, a1 = sch.get_loops(A_shared)[-2:]
    sch.bind(a0, "threadIdx.y")
    sch.bind(a1, "threadIdx.x")
''',
    spec=lambda a: a.T,
    inputs=[("A", ("n", "n"), F32)],
    outputs=[("B", ("n", "n"), F32)],
    sizes=[{"n": 32}, {"n": 16}],
    structure=[buffer_scope("shared"), same_loops("B")],
    hints=["Bind the tile loops first, as in gpu.matmul_tiles.",
           "`sch.cache_read(block_B, 0, \"shared\")`, then compute_at it under j_0.",
           "The copy's two inner loops (8×8) go to threadIdx.y and threadIdx.x."],
))
