"""Chapter "Stochastic schedules and tuning": schedules that sample their tile sizes
(checked with several seeds), and meta_schedule's tune_tir over such a space."""

from __future__ import annotations

from ..checks import innermost_loop, loop_kind, trace_uses
from ..exercise import Exercise
from ..registry import register
from .schedule import MM, MM_INPUTS, MM_OUTPUTS

register(Exercise(
    name="tuning.sample_tile",
    title="A stochastic tiling",
    statement="Write a stochastic schedule for the matmul (`start_program()`): sample "
              "the split of j with sch.sample_perfect_tile(j, n=2), split j with the sampled "
              "factors and reorder to i, j_0, k, j_1. The check runs it with several seeds.",
    kind="stochastic",
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
    j_factors = sch.sample_perfect_tile(j, n=2)
    j0, j1 = sch.split(j, factors=j_factors)
    sch.reorder(j0, k, j1)
''',
    spec=lambda a, b: a @ b,
    inputs=MM_INPUTS,
    outputs=MM_OUTPUTS,
    sizes=[{"n": 16}, {"n": 12}],
    seeds=(0, 1, 2),
    structure=[trace_uses("SamplePerfectTile", "Split", "Reorder")],
    hints=["sample_perfect_tile returns random variables: pass them to split as factors.",
           "`j0, j1 = sch.split(j, factors=sch.sample_perfect_tile(j, n=2))`."],
))

register(Exercise(
    name="tuning.sample_vectorize",
    title="Sample the vector width",
    statement="Write a stochastic schedule for the element-wise add: sample the split of j "
              "with at most 8 in the inner loop (max_innermost_factor=8), split, and "
              "vectorize the inner loop.",
    kind="stochastic",
    answer_name="schedule",
    program='''
@T.prim_func
def before(A: T.Buffer(({n}, {n}), "float32"), B: T.Buffer(({n}, {n}), "float32"),
           C: T.Buffer(({n}, {n}), "float32")):
    T.func_attr({"global_symbol": "add", "tir.noalias": True})
    for i, j in T.grid({n}, {n}):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = A[vi, vj] + B[vi, vj]
''',
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
    j0, j1 = sch.split(j, factors=sch.sample_perfect_tile(j, n=2, max_innermost_factor=8))
    sch.vectorize(j1)
''',
    spec=lambda a, b: a + b,
    inputs=MM_INPUTS,
    outputs=MM_OUTPUTS,
    sizes=[{"n": 16}, {"n": 24}],
    seeds=(0, 1, 2),
    structure=[trace_uses("SamplePerfectTile"), loop_kind("vectorized"),
               innermost_loop("C", "vectorized")],
    hints=["sample_perfect_tile(j, n=2, max_innermost_factor=8).",
           "Vectorize the second loop split returns."],
))

register(Exercise(
    name="tuning.tune_tir",
    title="Tune over your stochastic schedule",
    statement="Write tune(mod): run ms.tune_tir on `mod` for the target "
              "{\"kind\": \"llvm\", \"num-cores\": 1} with your stochastic tiling of the "
              "matmul as the space (space=ms.space_generator.ScheduleFn(...)), 4 trials, an "
              "in-memory database, and return the best schedule "
              "(ms.tir_integration.compile_tir). A runner of one forked worker "
              "(ms.runner.LocalRunner(max_workers=1, start_method=\"fork\")) keeps it quick.",
    kind="tune",
    answer_name="tune",
    program=MM,
    sizes=[{"n": 16}],
    seeds=(0,),
    start='''
def tune(mod):
    target = {"kind": "llvm", "num-cores": 1}

    def space(sch):
        ...

    ...
''',
    solution='''
def tune(mod):
    target = {"kind": "llvm", "num-cores": 1}

    def space(sch):
        block_C = sch.get_block("C")
        i, j, k = sch.get_loops(block_C)
        j0, j1 = sch.split(j, factors=sch.sample_perfect_tile(j, n=2))
        sch.reorder(i, j0, k, j1)

    import tempfile
    db = ms.tune_tir(mod, target, work_dir=tempfile.mkdtemp(), max_trials_global=4,
                     num_trials_per_iter=4, space=ms.space_generator.ScheduleFn(space),
                     database="memory", strategy="replay-trace", seed=0, progress=False,
                     runner=ms.runner.LocalRunner(max_workers=1, start_method="fork",
                                                  min_repeat_ms=1))
    return ms.tir_integration.compile_tir(db, mod, target)
''',
    spec=lambda a, b: a @ b,
    inputs=MM_INPUTS,
    outputs=MM_OUTPUTS,
    structure=[trace_uses("SamplePerfectTile")],
    structure_uses_reference=False,
    hints=["The space is a function of a tir.Schedule, wrapped in "
           "ms.space_generator.ScheduleFn.",
           "tune_tir(..., max_trials_global=4, database=\"memory\") keeps it short.",
           "compile_tir(db, mod, target) returns the best schedule found."],
))
