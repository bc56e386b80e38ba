"""The Dask runner measures candidates on a dask.distributed cluster (a local one here)."""

import numpy as np
import pytest
from dask import distributed

from mlckit import meta_schedule as ms

from .workloads import Matmul, run_matmul, stochastic_schedule_mm


def test_tuning_on_a_local_dask_cluster():
    with distributed.LocalCluster(processes=False, n_workers=1, threads_per_worker=1,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        db = ms.tune_tir(Matmul, "llvm --num-cores=1", database="memory",
                         max_trials_global=3, num_trials_per_iter=3,
                         space=stochastic_schedule_mm, runner=ms.runner.DaskRunner(client),
                         seed=0, progress=False)
    records = db.get_all_tuning_records()
    assert len(records) == 3 and all(r.run_secs[0] < 1e10 for r in records)
    got, want = run_matmul(ms.tir_integration.compile_tir(db, Matmul, "llvm").mod)
    np.testing.assert_allclose(got, want, rtol=1e-5)


def test_dask_runner_needs_a_client_or_address():
    with pytest.raises(ms.RunnerError, match="needs a dask.distributed Client"):
        ms.runner.DaskRunner()
