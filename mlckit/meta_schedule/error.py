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
    """Tuning could not go on (the message says which step).

    >>> from mlckit import meta_schedule as ms
    >>> import mlckit as tvm
    >>> issubclass(ms.TuningError, tvm.TVMError)
    True
    """


class SpaceGeneratorError(TuningError):
    """A space generator (a ``ScheduleFn``'s function, a schedule rule) raised or returned
    something that is not a schedule.

    >>> from mlckit import meta_schedule as ms
    >>> issubclass(ms.SpaceGeneratorError, ms.TuningError)
    True
    """


class RunnerError(TuningError, TVMValueError):
    """The runner cannot measure on the given target or with the given settings.

    >>> from mlckit import meta_schedule as ms
    >>> issubclass(ms.RunnerError, ValueError)
    True
    """


class DatabaseError(TuningError, TVMValueError):
    """A tuning database file is missing, unreadable or corrupt (the message names the
    file and the line).

    >>> from mlckit import meta_schedule as ms
    >>> try:
    ...     ms.database.JSONDatabase(path_workload="/nonexistent/w.json", path_tuning_record="/nonexistent/r.json", allow_missing=False)
    ... except ms.DatabaseError as err:
    ...     kind = type(err).__name__
    >>> kind
    'DatabaseError'
    """
