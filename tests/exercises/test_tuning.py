"""Stochastic schedules and tuning: wrong answers and the feedback naming them."""

from mlckit import exercises


def test_a_fixed_split_is_not_a_stochastic_schedule():
    def schedule(sch):
        b = sch.get_block("C")
        i, j, k = sch.get_loops(b)
        j0, j1 = sch.split(j, factors=[None, 4])
        sch.reorder(j0, k, j1)

    fb = exercises.get("tuning.sample_tile").check(schedule)
    assert fb.sections[0].ok
    assert fb.sections[1].lines == ["the schedule never calls sample_perfect_tile"]


def test_sampling_three_factors_for_two_loops_shows_the_line():
    def schedule(sch):
        b = sch.get_block("C")
        i, j, k = sch.get_loops(b)
        j0, j1 = sch.split(j, factors=sch.sample_perfect_tile(j, n=3))

    fb = exercises.get("tuning.sample_tile").check(schedule)
    assert fb.status == "error"
    assert "ValueError: too many values to unpack (expected 2)" in str(fb)
    assert "j0, j1 = sch.split(j, factors=sch.sample_perfect_tile(j, n=3))" in str(fb)


def test_vectorizing_the_outer_loop_is_named():
    def schedule(sch):
        b = sch.get_block("C")
        i, j = sch.get_loops(b)
        j0, j1 = sch.split(j, factors=sch.sample_perfect_tile(j, n=2, max_innermost_factor=8))
        sch.vectorize(j0)

    fb = exercises.get("tuning.sample_vectorize").check(schedule)
    assert "the innermost loop of block `C` is `j_1: 8`, not vectorized" in str(fb)


def test_a_tune_that_returns_nothing_is_told_what_to_return():
    def tune(mod):
        return None

    fb = exercises.get("tuning.tune_tir").check(tune)
    assert "tune(mod) returned nothing: return the tir.Schedule tuning found" in str(fb)
