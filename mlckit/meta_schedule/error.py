"""The errors ``meta_schedule`` raises: each names the piece that failed and why.

Every one derives from ``mlckit.TVMError`` (and from the built-in it resembles), so
``except tvm.TVMError`` catches them all.

Example::

    try:
        ms.tune_tir(mod, "cuda", work_dir="tune", max_trials_global=8)
    except ms.RunnerError as err:
        print(err)      # the local runner cannot measure target 'cuda': ...
"""

from __future__ import annotations

from mlckit.error import TVMError, TVMValueError


class TuningError(TVMError):
    """Tuning could not go on (the message says which step)."""


class SpaceGeneratorError(TuningError):
    """A space generator (a ``ScheduleFn``'s function, a schedule rule) raised or returned
    something that is not a schedule."""


class RunnerError(TuningError, TVMValueError):
    """The runner cannot measure on the given target or with the given settings."""


class DatabaseError(TuningError, TVMValueError):
    """A tuning database file is missing, unreadable or corrupt (the message names the
    file and the line)."""
