"""Runners: ``LocalRunner`` (a spawned process pool) and ``DaskRunner`` (a Dask cluster)."""

from .dask_runner import DaskRunner
from .local_runner import LocalRunner
from .runner import Runner, RunnerFuture, RunnerInput, RunnerResult

__all__ = ["DaskRunner", "LocalRunner", "Runner", "RunnerFuture", "RunnerInput",
           "RunnerResult"]
