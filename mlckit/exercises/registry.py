"""Every exercise, by name, grouped by the course chapter it belongs to.

A chapter module (``mlckit/exercises/chapters/<chapter>.py``) calls :func:`register` for
each of its exercises when it is imported; ``mlckit.exercises`` imports them all.

Example::

    from mlckit import exercises
    exercises.chapters()                    # ['tensorir', 'schedule', …]
    [ex.name for ex in exercises.chapter("gpu")]
    ex = exercises.get("tensorir.add")
"""

from __future__ import annotations

from mlckit.error import TVMKeyError, TVMValueError

__all__ = ["CHAPTERS", "chapter", "chapters", "get", "register"]

# the course's order; a chapter's title is what its notebook is called
CHAPTERS = {
    "tensorir": "TensorIR by hand",
    "schedule": "Schedule transformations",
    "relax": "End-to-end models with Relax and call_tir",
    "rewrite": "Graph rewriting with PyExprMutator",
    "gpu": "GPU thread binding and shared memory",
    "tuning": "Stochastic schedules and tuning",
    "tensorize": "Blockize and tensorize",
}

_EXERCISES: dict = {}


def register(exercise):
    """Add ``exercise`` under its name (``<chapter>.<short name>``); returns it."""
    chapter_name = exercise.name.split(".", 1)[0]
    if chapter_name not in CHAPTERS:
        raise TVMValueError(f"exercise {exercise.name!r}: unknown chapter {chapter_name!r} "
                            f"(the chapters are {', '.join(CHAPTERS)})")
    if exercise.name in _EXERCISES:
        raise TVMValueError(f"exercise {exercise.name!r} is registered twice")
    _EXERCISES[exercise.name] = exercise
    return exercise


def get(name: str):
    """The exercise called ``name`` (``"tensorir.add"``)."""
    try:
        return _EXERCISES[name]
    except KeyError:
        near = [n for n in _EXERCISES if n.split(".")[-1] == name.split(".")[-1]]
        hint = f"; did you mean {near[0]!r}?" if near else ""
        raise TVMKeyError(f"no exercise called {name!r}{hint}") from None


def chapter(name: str) -> list:
    """The exercises of chapter ``name``, in the order they were registered."""
    if name not in CHAPTERS:
        raise TVMKeyError(f"no chapter {name!r}: the chapters are {', '.join(CHAPTERS)}")
    return [ex for ex in _EXERCISES.values() if ex.name.split(".", 1)[0] == name]


def chapters() -> list[str]:
    """The chapter names, in the course's order."""
    return list(CHAPTERS)


def all_exercises() -> list:
    """Every exercise, chapter by chapter in the course's order."""
    return [ex for name in CHAPTERS for ex in chapter(name)]
