"""Every exercise's reference solution passes its own check, and an unanswered starting
point is "not answered yet"."""

import pytest

from mlckit import exercises
from mlckit.exercises.source import run_source

ALL = exercises.all_exercises()


def test_there_are_at_least_30_exercises_in_every_chapter_of_the_course():
    assert len(ALL) >= 30
    assert all(len(exercises.chapter(c)) >= 3 for c in exercises.chapters())


@pytest.mark.parametrize("ex", ALL, ids=lambda ex: ex.name)
def test_the_reference_solution_passes(ex):
    fb = ex.check(ex.solution_object())
    assert fb.status == "correct", str(fb)
    assert "✓ correctness: equal to the NumPy spec" in str(fb)


@pytest.mark.parametrize("ex", ALL, ids=lambda ex: ex.name)
def test_the_starting_point_is_not_answered_yet(ex):
    ns = run_source(ex.setup + "\n" + ex.start, f"start of {ex.name}")
    fb = ex.check(ns[ex.answer_name])
    assert fb.status == "not answered"
    assert str(fb).startswith(f"… {ex.name}: not answered yet")
    assert "not answered yet" in fb._repr_html_()


def test_none_is_not_answered_yet():
    assert exercises.get("tensorir.add").check(None).status == "not answered"


def test_hints_unlock_one_at_a_time():
    ex = exercises.get("tensorir.add")
    ex.reset_hints()
    assert str(ex.hint()) == f"Hint 1 of 3: {ex.hints[0]}"
    assert str(ex.hint()) == f"Hint 2 of 3: {ex.hints[1]}"
    assert str(ex.hint()) == f"Hint 3 of 3: {ex.hints[2]}"
    assert str(ex.hint()) == "no more hints: all 3 are shown"
    ex.reset_hints()


def test_an_unknown_exercise_is_named():
    from mlckit.error import TVMKeyError

    with pytest.raises(TVMKeyError, match="no exercise called 'tensorir.ad'"):
        exercises.get("tensorir.ad")
