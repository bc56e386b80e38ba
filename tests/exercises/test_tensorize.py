"""Blockize and tensorize: wrong answers and the feedback naming them."""

from mlckit import exercises
from mlckit.exercises.chapters.tensorize import TILE
from mlckit.exercises.source import run_source

SPLITS = TILE.replace("    sch.reorder(i0, j0, k0, i1, j1, k1)\n", "")


def schedule(body: str):
    return run_source("def schedule(sch):" + SPLITS + body, "wrong tensorize answer")["schedule"]


def test_k_0_left_inside_the_tile_is_named():
    fb = exercises.get("tensorize.tile").check(
        schedule("    sch.reorder(i0, j0, i1, j1, k0, k1)\n"))
    assert ("block `C` sits in the loops (i_0: 4, j_0: 4, i_1: 4, j_1: 4, k_0: 4, k_1: 4), "
            "expected (i_0: 4, j_0: 4, k_0: 4, i_1: 4, j_1: 4, k_1: 4)") in str(fb)


def test_blockize_one_loop_too_low_is_named():
    fb = exercises.get("tensorize.blockize").check(
        schedule("    sch.reorder(i0, j0, k0, i1, j1, k1)\n    sch.blockize(j1)\n"))
    assert fb.sections[1].lines == ["block `C_o` sits in the loops (i_0: 4, j_0: 4, k_0: 4, "
                                    "i_1: 4), expected (i_0: 4, j_0: 4, k_0: 4)"]


def test_tensorize_without_decompose_reduction_names_the_mismatch():
    fb = exercises.get("tensorize.tensorize").check(
        schedule("    sch.reorder(i0, j0, k0, i1, j1, k1)\n    sch.tensorize(i1, 'exercise_mma4')\n"))
    assert fb.status == "error"
    assert "tensorize: block `C_o` does not match the description of tensor intrinsic " \
           "'exercise_mma4'" in str(fb)


def test_tensorize_at_the_wrong_loop_names_the_extent():
    fb = exercises.get("tensorize.tensorize").check(
        schedule("    sch.reorder(i0, j0, k0, i1, j1, k1)\n"
                 "    sch.decompose_reduction(block_C, k0)\n"
                 "    sch.tensorize(j1, 'exercise_mma4')\n"))
    assert "the extent 1 differs from the description's 4" in str(fb)
