"""Chapter "Blockize and tensorize": carve a 4×4×4 tile out of a matmul, make it a block,
and replace it by a registered tensor intrinsic (``exercise_mma4``: a description and an
implementation in TIR, registered when this chapter is imported)."""

from __future__ import annotations

from ..checks import same_function, same_loops
from ..exercise import Exercise
from ..registry import register
from ..source import run_source
from .schedule import MM, MM_INPUTS, MM_OUTPUTS

INTRINSIC = '''
@T.prim_func
def mma4_desc(a: T.handle, b: T.handle, c: T.handle) -> None:
    A = T.match_buffer(a, (4, 4), "float32", offset_factor=1)
    B = T.match_buffer(b, (4, 4), "float32", offset_factor=1)
    C = T.match_buffer(c, (4, 4), "float32", offset_factor=1)
    with T.block("root"):
        T.reads(C[0:4, 0:4], A[0:4, 0:4], B[0:4, 0:4])
        T.writes(C[0:4, 0:4])
        for i, j, k in T.grid(4, 4, 4):
            with T.block(""):
                vii, vjj, vkk = T.axis.remap("SSR", [i, j, k])
                C[vii, vjj] = C[vii, vjj] + A[vii, vkk] * B[vkk, vjj]


@T.prim_func
def mma4_impl(a: T.handle, b: T.handle, c: T.handle) -> None:
    A = T.match_buffer(a, (4, 4), "float32", offset_factor=1)
    B = T.match_buffer(b, (4, 4), "float32", offset_factor=1)
    C = T.match_buffer(c, (4, 4), "float32", offset_factor=1)
    with T.block("root"):
        T.reads(C[0:4, 0:4], A[0:4, 0:4], B[0:4, 0:4])
        T.writes(C[0:4, 0:4])
        for i, k, j in T.grid(4, 4, 4):
            C[i, j] = C[i, j] + A[i, k] * B[k, j]
'''

_ns = run_source(INTRINSIC, "exercise intrinsic mma4")
_ns["tir"].TensorIntrin.register("exercise_mma4", _ns["mma4_desc"], _ns["mma4_impl"],
                                 override=True)


TILE = '''
    block_C = sch.get_block("C")
    i, j, k = sch.get_loops(block_C)
    i0, i1 = sch.split(i, factors=[None, 4])
    j0, j1 = sch.split(j, factors=[None, 4])
    k0, k1 = sch.split(k, factors=[None, 4])
    sch.reorder(i0, j0, k0, i1, j1, k1)
'''

register(Exercise(
    name="tensorize.tile",
    title="Tile for a 4×4×4 intrinsic",
    statement="Split i, j and k of the matmul by 4 and reorder to i_0, j_0, k_0, i_1, j_1, "
              "k_1, so that the three inner loops compute one 4×4×4 tile.",
    kind="schedule",
    answer_name="schedule",
    program=MM,
    start='''
def schedule(sch):
    block_C = sch.get_block("C")
    i, j, k = sch.get_loops(block_C)
    ...
''',
    solution="def schedule(sch):" + TILE,
    spec=lambda a, b: a @ b,
    inputs=MM_INPUTS,
    outputs=MM_OUTPUTS,
    sizes=[{"n": 16}, {"n": 8}],
    structure=[same_loops("C")],
    hints=["Three splits with factors [None, 4], then one reorder of all six loops."],
))

register(Exercise(
    name="tensorize.blockize",
    title="Blockize the tile",
    statement="After tiling (as in tensorize.tile), turn the three inner loops into a block "
              "of their own with sch.blockize(i_1): a block `C_o` whose body is the 4×4×4 "
              "tile.",
    kind="schedule",
    answer_name="schedule",
    program=MM,
    start="def schedule(sch):" + TILE + "    ...\n",
    solution="def schedule(sch):" + TILE + "    sch.blockize(i1)\n",
    spec=lambda a, b: a @ b,
    inputs=MM_INPUTS,
    outputs=MM_OUTPUTS,
    sizes=[{"n": 16}, {"n": 8}],
    structure=[same_loops("C_o"), same_function()],
    hints=["blockize takes the outermost loop of what becomes the new block.",
           "That is i_1, the first of the three inner loops."],
))

register(Exercise(
    name="tensorize.tensorize",
    title="Tensorize with a registered intrinsic",
    statement="After tiling, decompose the reduction at k_0 (its init must leave the tile), "
              "then tensorize the tile's loop i_1 with the intrinsic \"exercise_mma4\" "
              "(registered by this chapter: C[0:4, 0:4] += A[0:4, 0:4] · B[0:4, 0:4]).",
    kind="schedule",
    answer_name="schedule",
    program=MM,
    start="def schedule(sch):" + TILE + "    ...\n",
    solution="def schedule(sch):" + TILE
             + "    sch.decompose_reduction(block_C, k0)\n"
             + "    sch.tensorize(i1, \"exercise_mma4\")\n",
    spec=lambda a, b: a @ b,
    inputs=MM_INPUTS,
    outputs=MM_OUTPUTS,
    sizes=[{"n": 16}, {"n": 8}],
    structure=[same_function()],
    hints=["The intrinsic has no init: decompose_reduction(block_C, k0) first.",
           "`sch.tensorize(i1, \"exercise_mma4\")` blockizes at i_1 and matches the tile."],
))
