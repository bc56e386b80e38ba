"""ScheduleExplorer, the model: steps, refusals, undo/redo, legality, trace, run times.

The model is driven as the widget drives it, without a browser: ``apply`` with block names
and printed loop names, ``undo`` / ``redo``, ``legal_primitives``.
"""

import numpy as np
import pytest

from mlckit import tir
from mlckit.ir import IRModule, assert_structural_equal
from mlckit.lnumpy import to_source
from mlckit.notebook import Refusal, ScheduleExplorer, Step
from mlckit.notebook.explorer_primitives import PRIMITIVES
from mlckit.script import tir as T
from mlckit.tir.schedule import Trace
from tests.kernels import mm_relu


@T.prim_func
def mm_relu_course_schedule(A: T.Buffer((128, 128), "float32"),
                            B: T.Buffer((128, 128), "float32"),
                            C: T.Buffer((128, 128), "float32")):
    """mm_relu after split j by 4, reorder j_0, k, j_1 and reverse_compute_at C under j_0."""
    T.func_attr({"global_symbol": "mm_relu", "tir.noalias": True})
    Y = T.alloc_buffer((128, 128), "float32")
    for i, j_0 in T.grid(128, 32):
        for k, j_1 in T.grid(128, 4):
            with T.block("Y"):
                vi = T.axis.spatial(128, i)
                vj = T.axis.spatial(128, j_0 * 4 + j_1)
                vk = T.axis.reduce(128, k)
                with T.init():
                    Y[vi, vj] = T.float32(0)
                Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]
        for ax0 in range(4):
            with T.block("C"):
                vi = T.axis.spatial(128, i)
                vj = T.axis.spatial(128, j_0 * 4 + ax0)
                C[vi, vj] = T.max(Y[vi, vj], T.float32(0))


def explorer(func=mm_relu) -> ScheduleExplorer:
    return ScheduleExplorer(func, measure=False)


def course_steps(ex: ScheduleExplorer) -> None:
    ex.apply("split", block="Y", loop="j", factors=[None, 4])
    ex.apply("reorder", block="Y", loops=["j_0", "k", "j_1"])
    ex.apply("reverse_compute_at", block="C", loop="j_0")


def by_hand(*steps):
    """The schedule of mm_relu after the first ``len(steps)`` course steps, written directly."""
    sch = tir.Schedule(mm_relu)
    i, j, k = sch.get_loops(sch.get_block("Y"))
    if "split" in steps:
        j0, j1 = sch.split(j, factors=[None, 4])
    if "reorder" in steps:
        sch.reorder(j0, k, j1)
    if "reverse_compute_at" in steps:
        sch.reverse_compute_at(sch.get_block("C"), j0)
    return sch.mod


# -- step 0 --------------------------------------------------------------------------------
def test_step_0_is_the_function_as_given_with_its_script_and_lnumpy_twin():
    ex = explorer()
    assert_structural_equal(ex.sch.mod, IRModule({"main": mm_relu}))
    assert ex.current.index == 0 and ex.current.primitive is None
    assert ex.current.script == ex.sch.mod.script()
    assert ex.current.lnumpy == str(to_source(mm_relu, "main"))
    assert ex.current.diff == ""
    assert ex.title == "main"


def test_every_view_calls_the_function_by_the_one_name_the_schedule_gives_it():
    """TVM names a lone PrimFunc ``main`` in the module of its schedule: the TVMScript and
    the trace say ``main``, and so do the title, the text form and the lnumpy twin."""
    ex = explorer()
    ex.apply("split", block="Y", loop="j", factors=[None, 4])
    cur = ex.current
    assert "def main(" in cur.script and "def mm_relu" not in cur.script
    assert cur.lnumpy.startswith("def main(A, B, C):")
    assert 'func_name="main"' in cur.trace
    assert ex.text().startswith("ScheduleExplorer: main, step 1 of 1")
    assert "def mm_relu" not in ex.text()  # (its global_symbol attribute still says mm_relu)


def test_blocks_and_loops_are_listed_by_name_in_program_order():
    ex = explorer()
    assert ex.blocks() == ["Y", "C"]
    assert ex.loops("Y") == ["i", "j", "k"]
    assert ex.loops("C") == ["i", "j"]
    assert ex.other_loops("Y") == [("C", "i"), ("C", "j")]


# -- applying ------------------------------------------------------------------------------
def test_apply_split_makes_a_step_whose_new_loops_have_their_printed_names():
    ex = explorer()
    step = ex.apply("split", block="C", loop="j", factors=[None, 8])
    assert isinstance(step, Step) and step.ok
    assert step.index == 1 and ex.current is step
    assert step.new_names == ["j_0", "j_1"]
    assert step.call == 'split(block="C", loop="j", factors=[None, 8])'
    assert repr(step) == 'step 1: split(block="C", loop="j", factors=[None, 8]) → j_0, j_1'
    assert "for i, j_0, j_1 in T.grid(128, 16, 8):" in step.script
    assert "for j_1 in range(8):" in step.lnumpy
    assert ex.loops("C") == ["i", "j_0", "j_1"]


def test_the_course_steps_give_the_course_schedule():
    ex = explorer()
    course_steps(ex)
    assert [s.index for s in ex.history] == [0, 1, 2, 3]
    assert_structural_equal(ex.sch.mod["main"], mm_relu_course_schedule)
    assert_structural_equal(ex.sch.mod, by_hand("split", "reorder", "reverse_compute_at"))


def test_each_step_has_the_unified_diff_to_the_step_before():
    ex = explorer()
    step = ex.apply("split", block="Y", loop="j", factors=[None, 4])
    lines = step.diff.splitlines()
    assert lines[:2] == ["--- step 0", "+++ step 1"]
    assert "-        for i, j, k in T.grid(128, 128, 128):" in lines
    assert "+        for i, j_0, j_1, k in T.grid(128, 32, 4, 128):" in lines
    assert "+                vj = T.axis.spatial(128, j_0 * 4 + j_1)" in lines
    assert not any(line.startswith(("-", "+")) and "block(\"C\")" in line for line in lines)


def test_a_loop_of_another_nest_is_named_by_its_name_or_with_its_block():
    by_name = explorer()
    by_name.apply("compute_at", block="Y", loop="j")
    with_block = explorer()
    with_block.apply("compute_at", block="Y", loop=("C", "j"))
    sch = tir.Schedule(mm_relu)
    sch.compute_at(sch.get_block("Y"), sch.get_loops(sch.get_block("C"))[1])
    assert_structural_equal(by_name.sch.mod, sch.mod)
    assert_structural_equal(with_block.sch.mod, sch.mod)


def test_loops_are_named_as_printed_when_the_printer_renames_a_clash():
    sch = tir.Schedule(mm_relu)
    sch.add_unit_loop(sch.get_block("Y"))
    sch.add_unit_loop(sch.get_block("Y"))  # two loops called `u`: the inner prints as `u_1`
    ex = explorer(sch.mod)
    assert ex.loops("Y") == ["i", "j", "k", "u", "u_1"]
    step = ex.apply("split", block="Y", loop="u_1", factors=[1, 1])
    assert step.new_names == ["u_0", "u_1"]  # the split loop was a `u`: its parts are u_0, u_1
    assert "for i, j, k, u, u_0, u_1 in T.grid(128, 128, 128, 1, 1, 1):" in step.script


def test_a_block_returned_by_a_primitive_is_named():
    ex = explorer()
    step = ex.apply("decompose_reduction", block="Y", loop="k")
    assert step.new_names == ["Y_init"]
    assert ex.blocks() == ["Y_init", "Y_update", "C"]


# -- refusals ------------------------------------------------------------------------------
def test_an_illegal_step_is_refused_with_the_message_shown_and_the_schedule_unchanged():
    ex = explorer()
    ex.apply("split", block="Y", loop="j", factors=[None, 4])
    before, script, trace = ex.sch.mod, ex.current.script, str(ex.sch.trace)
    refusal = ex.apply("split", block="Y", loop="k", factors=[3, 4])
    message = ("ScheduleError: split: the product of the factors (3 * 4 = 12) is smaller than "
               "the extent 128 of loop `k`")
    assert isinstance(refusal, Refusal) and not refusal.ok
    assert refusal.error == message
    assert ex.error == message
    assert f"error: {message}" in ex.text()
    assert ex.sch.mod is before and ex.current.script == script
    assert str(ex.sch.trace) == trace
    assert_structural_equal(ex.sch.mod, by_hand("split"))
    assert len(ex.history) == 2


def test_the_next_step_clears_the_error():
    ex = explorer()
    ex.apply("vectorize", block="Y", loop="k")
    assert ex.error.startswith("ScheduleError: vectorize: loop `k` cannot be vectorized")
    ex.apply("split", block="Y", loop="j", factors=[None, 4])
    assert ex.error is None


@pytest.mark.parametrize("call, message", [
    (dict(primitive="tile", block="Y"), "the explorer has no primitive 'tile' (it has: split, "),
    (dict(primitive="split", block="Y", loop="x", factors=[2, 64]),
     "split: there is no loop `x` above block `Y` (its loops: i, j, k)"),
    (dict(primitive="split", block="Z", loop="i", factors=[2, 64]),
     "there is no block 'Z' (the blocks: Y, C)"),
    (dict(primitive="parallel", loop="i"),
     "parallel: loops called `i` are above blocks Y, C; give the block too"),
    (dict(primitive="split", block="Y", loop="i", factor=[2, 64]),
     "split: unknown parameter(s) factor (its parameters: factors)"),
    (dict(primitive="compute_inline"), "compute_inline: give block=..."),
    (dict(primitive="reorder", block="Y"), "reorder: give the loops, e.g. loops=['i', 'j']"),
])
def test_a_bad_argument_is_refused_with_a_message_naming_it(call, message):
    ex = explorer()
    refusal = ex.apply(**call)
    assert not refusal.ok
    assert refusal.error.startswith(message)
    assert ex.current.index == 0


# -- undo / redo ---------------------------------------------------------------------------
def test_undo_and_redo_restore_structurally_equal_schedules():
    ex = explorer()
    course_steps(ex)
    assert ex.undo().index == 2
    assert_structural_equal(ex.sch.mod, by_hand("split", "reorder"))
    assert ex.undo().index == 1
    assert_structural_equal(ex.sch.mod, by_hand("split"))
    assert ex.can_redo
    assert ex.redo().index == 2
    assert_structural_equal(ex.sch.mod, by_hand("split", "reorder"))
    assert ex.redo().index == 3
    assert_structural_equal(ex.sch.mod, by_hand("split", "reorder", "reverse_compute_at"))
    assert not ex.can_redo


def test_a_step_applied_after_undo_drops_the_steps_undone():
    ex = explorer()
    course_steps(ex)
    ex.undo()
    ex.undo()
    step = ex.apply("parallel", block="Y", loop="i")
    assert step.index == 2
    assert [s.primitive for s in ex.history] == [None, "split", "parallel"]
    assert not ex.can_redo


def test_undo_at_the_start_and_redo_at_the_end_say_so():
    ex = explorer()
    assert ex.undo().index == 0 and ex.error == "nothing to undo"
    assert ex.redo().index == 0 and ex.error == "nothing to redo"


# -- legality ------------------------------------------------------------------------------
def test_only_the_primitives_legal_here_are_offered():
    ex = explorer()
    assert ex.legal_primitives("Y", "k") == [  # k reduces: not parallel, not vectorized
        "split", "unroll", "decompose_reduction", "rfactor", "cache_read", "cache_write",
        "blockize"]
    assert ex.legal_primitives("C", "i") == [
        "split", "fuse", "reorder", "parallel", "vectorize", "unroll", "cache_read",
        "cache_write", "blockize"]
    # Y reads only parameters: reverse_compute_at may place it under C's loop too, as in TVM
    assert ex.legal_primitives("Y", ("C", "j")) == [
        "compute_at", "reverse_compute_at", "cache_read", "cache_write"]
    assert ex.legal_primitives("C", None) == ["cache_read", "cache_write"]


def test_legality_says_why_a_primitive_is_not_offered():
    ex = explorer()
    why = ex.legality("Y", "k")
    assert why["split"] is None
    assert why["fuse"] == "loop `k` is the innermost above block `Y`: pick an outer one"
    assert why["compute_inline"].startswith(
        "ScheduleError: compute_inline: block `Y` is a reduction")
    assert why["compute_at"] == "compute_at needs a loop of another nest than block `Y`'s"
    assert ex.legality(None, None)["split"] == "pick a loop"
    assert ex.legality(None, None)["compute_inline"] == "pick a block"


def test_trying_the_primitives_leaves_the_schedule_and_its_trace_alone():
    ex = explorer()
    ex.apply("split", block="Y", loop="j", factors=[None, 4])
    mod, trace = ex.sch.mod, str(ex.sch.trace)
    for block in ex.blocks():
        for loop in ex.loops(block) + ex.other_loops(block) + [None]:
            ex.legality(block, loop)
    assert ex.sch.mod is mod and str(ex.sch.trace) == trace
    assert_structural_equal(ex.sch.mod, by_hand("split"))


def test_every_legal_primitive_applies_with_its_default_parameters():
    ex = explorer()
    course_steps(ex)
    for block in ex.blocks():
        for loop in ex.loops(block) + ex.other_loops(block):
            sel = ex.selection(block, loop)
            for name in ex.legal_primitives(block, loop):
                step = ex.apply(name, block=block, loop=loop, **PRIMITIVES[name].defaults(sel))
                assert step.ok, step
                ex.undo()


# -- the trace -----------------------------------------------------------------------------
def test_the_trace_reads_as_a_person_writes_it():
    ex = explorer()
    course_steps(ex)
    assert str(ex.sch.trace).splitlines()[2:] == [
        '  b0 = sch.get_block(name="Y", func_name="main")',
        "  l1, l2, l3 = sch.get_loops(block=b0)",
        "  l4, l5 = sch.split(loop=l2, factors=[None, 4], preserve_unit_iters=True, "
        "disable_predication=False)",
        "  sch.reorder(l4, l3, l5)",
        '  b6 = sch.get_block(name="C", func_name="main")',
        "  sch.reverse_compute_at(block=b6, loop=l4, preserve_unit_loops=False, index=-1)",
    ]


def test_the_trace_replays_to_the_same_module():
    ex = explorer()
    course_steps(ex)
    replayed = tir.Schedule(mm_relu)
    Trace.from_json(ex.sch.trace.as_json()).apply_to_schedule(replayed)
    assert_structural_equal(replayed.mod, ex.sch.mod)


def test_the_trace_is_python_that_can_be_copied_and_run():
    ex = explorer()
    course_steps(ex)
    namespace = {"tir": tir}
    exec(ex.current.trace, namespace)
    sch = tir.Schedule(mm_relu)
    namespace["apply_trace"](sch)
    assert_structural_equal(sch.mod, ex.sch.mod)


# -- run times -----------------------------------------------------------------------------
def test_each_step_is_timed_and_its_results_checked_against_step_0():
    ex = ScheduleExplorer(mm_relu, seed=1)
    ex.apply("split", block="Y", loop="j", factors=[None, 4])
    assert all(t is not None and t > 0 for t in ex.times)
    assert [s.agrees for s in ex.history] == [True, True]
    a, b, c = ex.current.measurement.outputs
    np.testing.assert_allclose(c, np.maximum(a @ b, 0), rtol=1e-5, atol=1e-5)
    assert ex.current.time_text.endswith(" ms")


def test_without_measuring_there_are_no_times():
    ex = explorer()
    ex.apply("split", block="Y", loop="j", factors=[None, 4])
    assert ex.times == [None, None]
    assert ex.current.time_text == "not measured"


# -- observers and text --------------------------------------------------------------------
def test_observers_hear_of_steps_refusals_and_measurements():
    ex = ScheduleExplorer(mm_relu)
    events = []
    ex.observe(events.append)
    ex.apply("split", block="Y", loop="j", factors=[None, 4])
    ex.apply("split", block="Y", loop="k", factors=[3, 4])
    ex.undo()
    assert events == ["step", "measured", "step", "step"]


def test_the_text_form_has_the_history_the_error_and_every_view():
    ex = explorer()
    ex.apply("split", block="Y", loop="j", factors=[None, 4])
    ex.apply("vectorize", block="Y", loop="k")
    text = ex.text()
    assert text.splitlines()[:3] == [
        "ScheduleExplorer: main, step 1 of 1",
        "   0  start                                                     not measured",
        '   1  split(block="Y", loop="j", factors=[None, 4]) → j_0, j_1  not measured',
    ]
    assert text.splitlines()[3].startswith("error: ScheduleError: vectorize:")
    for title in ("TVMScript", "lnumpy", "diff to step 0", "trace"):
        assert f"\n{title}\n{'-' * len(title)}\n" in text
    assert str(ex) == text
    assert repr(ex) == "<ScheduleExplorer main: step 1 of 1>"


def test_a_module_with_several_functions_needs_func_name():
    mod = IRModule({"a": mm_relu, "b": mm_relu.with_attr("global_symbol", "b")})
    with pytest.raises(Exception, match="pass func_name=...") as err:
        ScheduleExplorer(mod, measure=False)
    from mlckit import TVMError
    assert isinstance(err.value, TVMError)
    ex = ScheduleExplorer(mod, func_name="b", measure=False)
    assert ex.title == "b"


def test_two_caches_of_one_buffer_share_a_block_name_and_the_explorer_says_so():
    # as TVM names them: a cache_read of the cache block's own read is also block `Y_local`
    ex = ScheduleExplorer(mm_relu, measure=False)
    assert ex.apply("cache_read", block="C", read_buffer_index=0, storage_scope="local").ok
    assert ex.apply("cache_read", block="Y_local", read_buffer_index=0,
                    storage_scope="local").ok
    assert ex.blocks().count("Y_local") == 2
    assert ex.legal_primitives("Y_local", "ax0") == []
    refused = ex.apply("split", block="Y_local", loop="ax0", factors=[None, 4])
    assert not refused.ok
    assert "2 blocks are named 'Y_local'" in refused.error
