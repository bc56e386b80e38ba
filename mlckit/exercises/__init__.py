"""Exercises that check themselves: a statement, a starting point, and ``check(answer)``.

Each exercise belongs to a chapter of the ML compilation course (``chapters()``); its
``check`` runs the answer on random inputs of several shapes against a NumPy spec, compares
its structure with the reference solution's where the exercise asks for one, times it
where the exercise has a speed goal, and answers with a :class:`Feedback` (HTML in a
notebook, text in a terminal).  Errors from the answer are feedback too.

Example::

    from mlckit import exercises
    ex = exercises.get("tensorir.add")
    ex                                   # statement and starting point
    ex.hint()                            # hints unlock one at a time
    ex.check(add)                        # ✓ tensorir.add: correct …
"""

from __future__ import annotations

from . import chapters as _chapters  # noqa: F401 - registers every exercise
from .exercise import STRICT_ENV, Exercise, ExerciseNotSolved, Hint, Speed
from .feedback import Feedback, Section
from .registry import CHAPTERS, all_exercises, chapter, chapters, get, register

__all__ = ["CHAPTERS", "STRICT_ENV", "Exercise", "ExerciseNotSolved", "Feedback", "Hint", "Section", "Speed", "all_exercises",
           "chapter", "chapters", "get", "register"]
