"""``Runner``: builds and measures candidates, and the records it passes around.

A ``RunnerInput`` is what a worker needs — the scheduled module, the target string, the
argument shapes; a ``RunnerResult`` holds the seconds per run of each repeat (its median is
the candidate's time) or the error that stopped it.  ``run(inputs)`` returns futures so
measurements overlap.  In mlckit one step builds *and* measures (a Numba compile lives in
the process that made it), so there is no separate builder.

Example::

    runner = ms.runner.LocalRunner(max_workers=2)
    futures = runner.run([ms.runner.RunnerInput(sch.mod, "llvm --num-cores=1", args_info)])
    futures[0].result().run_secs
"""

from __future__ import annotations

from concurrent.futures import TimeoutError as FutureTimeoutError
from dataclasses import dataclass

from mlckit.error import TVMError

from ..error import RunnerError


@dataclass
class RunnerInput:
    """A candidate to build and measure."""

    mod: object
    target: str
    args_info: list


@dataclass
class RunnerResult:
    """Seconds per run for each repeat, or ``error_msg``; ``build_secs`` is the compile time."""

    run_secs: list | None = None
    error_msg: str | None = None
    build_secs: float = 0.0


class RunnerFuture:
    """A measurement under way: ``done()``, ``result()``."""

    def __init__(self, future, timeout_sec: float | None = None, on_timeout=None):
        self._future = future
        self._timeout = timeout_sec
        self._on_timeout = on_timeout

    def done(self) -> bool:
        return self._future.done()

    def result(self) -> RunnerResult:
        try:
            return self._future.result(timeout=self._timeout)
        except (TimeoutError, FutureTimeoutError):  # distinct classes before Python 3.11
            if self._on_timeout is not None:
                self._on_timeout()
            return RunnerResult(None, f"timed out after {self._timeout} s")
        except Exception as err:  # the worker died or the pool broke
            return RunnerResult(None, f"{type(err).__name__}: {err}")


class Runner:
    """The interface of a runner (TVM's ``meta_schedule.runner.Runner``).

    >>> from mlckit import meta_schedule as ms
    >>> issubclass(ms.runner.LocalRunner, ms.runner.Runner)
    True
    """

    def run(self, inputs: list[RunnerInput]) -> list[RunnerFuture]:
        raise NotImplementedError

    def check_target(self, target) -> None:
        """Raise ``RunnerError`` unless this runner can measure on ``target``."""
        from mlckit.driver.build import BACKENDS, TARGETS, _target_kind

        try:
            kind = _target_kind(target)
        except TVMError as err:
            raise RunnerError(f"{type(self).__name__} cannot measure on target "
                              f"{str(target)!r}: {err}") from None
        if TARGETS[kind] not in BACKENDS or TARGETS[kind] != "numba_cpu":
            raise RunnerError(f"{type(self).__name__} cannot measure on target {str(target)!r}: "
                              f"it measures CPU kernels compiled by Numba (targets 'llvm', "
                              f"'c'), and {kind!r} is built by {TARGETS[kind]!r}")

    def close(self) -> None:
        """Release workers (a runner may be used again afterwards)."""

    @staticmethod
    def create(kind="local", *args, **kwargs) -> Runner:
        """``"local"`` (a process pool), ``"dask"``, or a Runner."""
        from .dask_runner import DaskRunner
        from .local_runner import LocalRunner

        if isinstance(kind, Runner):
            return kind
        kinds = {"local": LocalRunner, "dask": DaskRunner}
        if kind not in kinds:
            raise RunnerError(f"unknown runner {kind!r} (one of 'local', 'dask')")
        return kinds[kind](*args, **kwargs)
