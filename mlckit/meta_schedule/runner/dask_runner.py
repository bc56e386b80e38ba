"""``DaskRunner``: send measurements to a Dask cluster (``dask.distributed``), so a class
can tune on shared machines.

Each candidate is one task, ``worker.measure`` on the ``RunnerInput`` (the module travels
pickled).  Give a ``distributed.Client`` or a scheduler address; workers need mlckit
installed.  Dask is imported only when a DaskRunner is made.

Example::

    from dask.distributed import Client, LocalCluster
    client = Client(LocalCluster(n_workers=2, threads_per_worker=1))
    ms.tune_tir(mod, "llvm --num-cores=1", work_dir="t", max_trials_global=32,
                runner=ms.runner.DaskRunner(client))
"""

from __future__ import annotations

from ..error import RunnerError
from .runner import Runner, RunnerFuture, RunnerInput
from .worker import measure


class DaskRunner(Runner):
    """Measure candidates as tasks of a ``dask.distributed`` cluster."""

    def __init__(self, client=None, address: str | None = None, number: int = 1,
                 repeat: int = 3, min_repeat_ms: float = 20.0, timeout_sec: float = 120.0):
        try:
            from dask.distributed import Client
        except ImportError:
            raise RunnerError("DaskRunner needs dask.distributed: pip install "
                              "'dask[distributed]'") from None
        if client is None:
            if address is None:
                raise RunnerError("DaskRunner needs a dask.distributed Client or a scheduler "
                                  "address (address='tcp://host:8786')")
            client = Client(address)
        self.client = client
        self.number = number
        self.repeat = repeat
        self.min_repeat_ms = min_repeat_ms
        self.timeout_sec = timeout_sec

    def run(self, inputs: list[RunnerInput]) -> list[RunnerFuture]:
        futures = [self.client.submit(measure, inp, self.number, self.repeat,
                                      self.min_repeat_ms, pure=False) for inp in inputs]
        return [RunnerFuture(_DaskFuture(f), self.timeout_sec) for f in futures]


class _DaskFuture:
    """A Dask future seen through the ``concurrent.futures`` calls RunnerFuture makes."""

    def __init__(self, future):
        self._future = future

    def done(self) -> bool:
        return self._future.done()

    def result(self, timeout=None):
        from dask.distributed import TimeoutError as DaskTimeout

        try:
            return self._future.result(timeout=timeout)
        except DaskTimeout:
            raise TimeoutError from None
