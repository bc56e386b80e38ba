"""Chapter "Schedule transformations": split, reorder, compute_at, decompose_reduction,
parallel and vectorize, and the ScheduleExplorer's trace replayed."""

from __future__ import annotations

import numpy as np

from ..checks import loop_kind, same_function, same_loops
from ..exercise import Exercise, Speed
from ..registry import register

F32 = "float32"

MM_RELU = '''
@T.prim_func
def before(A: T.Buffer(({n}, {n}), "float32"), B: T.Buffer(({n}, {n}), "float32"),
           C: T.Buffer(({n}, {n}), "float32")):
    T.func_attr({"global_symbol": "mm_relu", "tir.noalias": True})
    Y = T.alloc_buffer(({n}, {n}), "float32")
    for i, j, k in T.grid({n}, {n}, {n}):
        with T.block("Y"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                Y[vi, vj] = T.float32(0)
            Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]
    for i, j in T.grid({n}, {n}):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = T.max(Y[vi, vj], T.float32(0))
'''

MM = '''
@T.prim_func
def before(A: T.Buffer(({n}, {n}), "float32"), B: T.Buffer(({n}, {n}), "float32"),
           C: T.Buffer(({n}, {n}), "float32")):
    T.func_attr({"global_symbol": "mm", "tir.noalias": True})
    for i, j, k in T.grid({n}, {n}, {n}):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
'''

ADD = '''
@T.prim_func
def before(A: T.Buffer(({n}, {n}), "float32"), B: T.Buffer(({n}, {n}), "float32"),
           C: T.Buffer(({n}, {n}), "float32")):
    T.func_attr({"global_symbol": "add", "tir.noalias": True})
    for i, j in T.grid({n}, {n}):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = A[vi, vj] + B[vi, vj]
'''

MM_INPUTS = [("A", ("n", "n"), F32), ("B", ("n", "n"), F32)]
MM_OUTPUTS = [("C", ("n", "n"), F32)]


def mm_relu(a, b):
    return np.maximum(a @ b, 0)


register(Exercise(
    name="schedule.split_reorder",
    title="Split and reorder",
    statement="Schedule mm_relu (`start_program()`): split the loop j of block `Y` into "
              "an outer loop and an inner loop of 4, then reorder the loops of `Y` to "
              "i, j_0, k, j_1.",
    kind="schedule",
    answer_name="schedule",
    program=MM_RELU,
    start='''
def schedule(sch):
    block_Y = sch.get_block("Y")
    i, j, k = sch.get_loops(block_Y)
    ...
''',
    solution='''
def schedule(sch):
    block_Y = sch.get_block("Y")
    i, j, k = sch.get_loops(block_Y)
    j0, j1 = sch.split(j, factors=[None, 4])
    sch.reorder(j0, k, j1)
''',
    spec=mm_relu,
    inputs=MM_INPUTS,
    outputs=MM_OUTPUTS,
    sizes=[{"n": 16}, {"n": 8}],
    structure=[same_loops("Y")],
    hints=["`sch.split(j, factors=[None, 4])` returns the two new loops.",
           "`sch.reorder(j0, k, j1)` lists the loops in their new order."],
))

register(Exercise(
    name="schedule.compute_at",
    title="Move the ReLU under the matmul's loop",
    statement="After splitting j of `Y` by 4 and reordering to i, j_0, k, j_1 (as in "
              "schedule.split_reorder), move block `C` under the loop j_0 of `Y` with "
              "reverse_compute_at, so that each tile of Y is used right after it is computed.",
    kind="schedule",
    answer_name="schedule",
    program=MM_RELU,
    start='''
def schedule(sch):
    block_Y = sch.get_block("Y")
    i, j, k = sch.get_loops(block_Y)
    j0, j1 = sch.split(j, factors=[None, 4])
    sch.reorder(j0, k, j1)
    ...
''',
    solution='''
def schedule(sch):
    block_Y = sch.get_block("Y")
    i, j, k = sch.get_loops(block_Y)
    j0, j1 = sch.split(j, factors=[None, 4])
    sch.reorder(j0, k, j1)
    sch.reverse_compute_at(sch.get_block("C"), j0)
''',
    spec=mm_relu,
    inputs=MM_INPUTS,
    outputs=MM_OUTPUTS,
    sizes=[{"n": 16}, {"n": 8}],
    structure=[same_loops("Y"), same_loops("C")],
    hints=["`C` comes after `Y`: use reverse_compute_at, not compute_at.",
           "`sch.reverse_compute_at(sch.get_block(\"C\"), j0)`."],
))

register(Exercise(
    name="schedule.decompose_reduction",
    title="Decompose the reduction",
    statement="In mm (`start_program()`), split j by 4, reorder to i, j_0, k, j_1, and "
              "lift the initialization of `C` out of the reduction with "
              "decompose_reduction at the loop k: a block `C_init` appears before k.",
    kind="schedule",
    answer_name="schedule",
    program=MM,
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
    j0, j1 = sch.split(j, factors=[None, 4])
    sch.reorder(j0, k, j1)
    sch.decompose_reduction(block_C, k)
''',
    spec=lambda a, b: a @ b,
    inputs=MM_INPUTS,
    outputs=MM_OUTPUTS,
    sizes=[{"n": 16}, {"n": 8}],
    structure=[same_loops("C_update"), same_loops("C_init"), same_function()],
    hints=["decompose_reduction takes the block and the loop above which the init goes.",
           "The init goes above k: `sch.decompose_reduction(block_C, k)`."],
))

register(Exercise(
    name="schedule.parallel_vectorize",
    title="Parallel rows, vectorized columns",
    statement="Make the element-wise add (`start_program()`) fast: run the rows (i) in "
              "parallel, split j into an outer loop and an inner loop of 8, and vectorize "
              "the inner loop.",
    kind="schedule",
    answer_name="schedule",
    program=ADD,
    start='''
def schedule(sch):
    block_C = sch.get_block("C")
    i, j = sch.get_loops(block_C)
    ...
''',
    solution='''
def schedule(sch):
    block_C = sch.get_block("C")
    i, j = sch.get_loops(block_C)
    j0, j1 = sch.split(j, factors=[None, 8])
    sch.parallel(i)
    sch.vectorize(j1)
''',
    spec=lambda a, b: a + b,
    inputs=MM_INPUTS,
    outputs=MM_OUTPUTS,
    sizes=[{"n": 16}, {"n": 32}],
    structure=[loop_kind("parallel"), loop_kind("vectorized"), same_loops("C")],
    hints=["`sch.parallel(loop)` and `sch.vectorize(loop)` mark a loop.",
           "Vectorize the innermost loop, the one of extent 8."],
))

register(Exercise(
    name="schedule.fuse_split",
    title="Fuse, then split",
    statement="Fuse the two loops of the element-wise add (`start_program()`) into one, "
              "split it into an outer loop and an inner loop of 16, and unroll the inner loop.",
    kind="schedule",
    answer_name="schedule",
    program=ADD,
    start='''
def schedule(sch):
    block_C = sch.get_block("C")
    ...
''',
    solution='''
def schedule(sch):
    block_C = sch.get_block("C")
    i, j = sch.get_loops(block_C)
    fused = sch.fuse(i, j)
    outer, inner = sch.split(fused, factors=[None, 16])
    sch.unroll(inner)
''',
    spec=lambda a, b: a + b,
    inputs=MM_INPUTS,
    outputs=MM_OUTPUTS,
    sizes=[{"n": 16}, {"n": 8}],
    structure=[loop_kind("unrolled"), same_loops("C")],
    hints=["`sch.fuse(i, j)` gives one loop of extent n·n.",
           "Then split that loop with factors [None, 16] and `sch.unroll` the inner one."],
))

register(Exercise(
    name="schedule.explorer_trace",
    title="Explore a faster matmul, then paste the trace",
    statement="Open a ScheduleExplorer (mlckit.notebook) on `start_program()`, the 64×64 "
              "matmul and apply primitives until it runs at least 1.5× as fast as the naive "
              "kernel (the explorer times every step). Then paste its trace "
              "(`str(explorer.current.trace)`) as a string: check replays it on the "
              "original function, tests it and times it.",
    kind="trace",
    answer_name="trace",
    program=MM,
    start='''
trace = None  # paste the explorer's trace here, as a string
''',
    solution='''
trace = """
b0 = sch.get_block(name="C", func_name="main")
l1, l2, l3 = sch.get_loops(block=b0)
sch.reorder(l1, l3, l2)
b4 = sch.decompose_reduction(block=b0, loop=l3)
"""
''',
    spec=lambda a, b: a @ b,
    inputs=MM_INPUTS,
    outputs=MM_OUTPUTS,
    sizes=[{"n": 16}, {"n": 8}],
    speed=Speed(goal=2, against="start", size={"n": 64}),
    hints=["In the naive kernel the innermost loop k walks down a column of B: strided.",
           "Reordering to i, k, j makes the innermost loop walk along rows.",
           "The reduction's init must leave the loop k first: decompose_reduction."],
))
