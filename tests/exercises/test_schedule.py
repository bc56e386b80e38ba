"""Schedule transformations: wrong answers a learner writes, and the feedback naming them;
the explorer's trace replayed and timed."""

from mlckit import exercises
from mlckit.notebook import ScheduleExplorer


def test_a_wrong_reorder_names_the_loops_and_the_expected_order():
    def schedule(sch):
        b = sch.get_block("Y")
        i, j, k = sch.get_loops(b)
        j0, j1 = sch.split(j, factors=[None, 4])
        sch.reorder(k, j0, j1)

    fb = exercises.get("schedule.split_reorder").check(schedule)
    assert fb.status == "wrong"
    assert ("block `Y` sits in the loops (i: 16, k: 16, j_0: 4, j_1: 4), expected "
            "(i: 16, j_0: 4, k: 16, j_1: 4)") in str(fb)


def test_compute_at_instead_of_reverse_compute_at_is_the_schedule_error():
    def schedule(sch):
        b = sch.get_block("Y")
        i, j, k = sch.get_loops(b)
        j0, j1 = sch.split(j, factors=[None, 4])
        sch.reorder(j0, k, j1)
        sch.compute_at(sch.get_block("C"), j0)

    fb = exercises.get("schedule.compute_at").check(schedule)
    assert fb.status == "error"
    assert "compute_at: no consumer of block `C` is under loop `j_0`" in str(fb)


def test_decompose_at_the_wrong_loop_names_the_loops_the_blocks_share():
    def schedule(sch):
        b = sch.get_block("C")
        i, j, k = sch.get_loops(b)
        j0, j1 = sch.split(j, factors=[None, 4])
        sch.reorder(j0, k, j1)
        sch.decompose_reduction(b, j0)

    fb = exercises.get("schedule.decompose_reduction").check(schedule)
    assert "blocks `C_init` and `C_update` share the loops (i: 16), expected " \
           "(i: 16, j_0: 4)" in str(fb)


def test_a_forgotten_vectorize_is_named():
    def schedule(sch):
        b = sch.get_block("C")
        i, j = sch.get_loops(b)
        j0, j1 = sch.split(j, factors=[None, 8])
        sch.parallel(i)

    fb = exercises.get("schedule.parallel_vectorize").check(schedule)
    assert fb.sections[1].lines[0] == "no loop is vectorized"


def test_the_explorers_own_trace_is_replayed_and_timed():
    ex = exercises.get("schedule.explorer_trace")
    explorer = ScheduleExplorer(ex.start_program(), measure=False)
    explorer.apply("reorder", block="C", loops=["k", "j"])
    explorer.apply("decompose_reduction", block="C", loop="k")
    fb = ex.check(str(explorer.current.trace))
    assert [s.title for s in fb.sections] == ["correctness", "speed"]
    assert fb.sections[0].ok
    assert "× the speed of the naive kernel" in fb.sections[1].lines[0]


def test_a_trace_that_changes_nothing_misses_the_speed_goal():
    ex = exercises.get("schedule.explorer_trace")
    fb = ex.check('b0 = sch.get_block(name="C", func_name="main")\n'
                  'l1, l2, l3 = sch.get_loops(block=b0)\n')
    assert fb.status == "wrong"
    assert fb.sections[1].title == "speed" and not fb.sections[1].ok
    assert "the goal is 2×" in fb.sections[1].lines[0]


def test_a_trace_with_a_typo_is_feedback():
    fb = exercises.get("schedule.explorer_trace").check(
        'b0 = sch.get_block(name="Y", func_name="main")\n')
    assert fb.status == "error"
    assert "Y" in str(fb) and "block" in str(fb)
