"""tune_tir end to end on small kernels: results against NumPy, reload and replay, the same
seed giving the same search, and the errors a learner meets."""

import numpy as np
import pytest

from mlckit import meta_schedule as ms
from mlckit.ir import assert_structural_equal, structural_hash

from .workloads import Matmul, run_matmul, stochastic_schedule_mm

TARGET = "llvm --num-cores=1"


def _traces(db):
    return [str(r.trace) for r in db.get_all_tuning_records()]


def test_schedule_fn_tuning_measures_each_program_once_and_replays(tmp_path):
    db = ms.tune_tir(Matmul, TARGET, work_dir=str(tmp_path), max_trials_global=64,
                     num_trials_per_iter=64, space=stochastic_schedule_mm, seed=0,
                     progress=False)
    # 32 = inner * outer with inner <= 16: five programs, each measured once
    records = db.get_all_tuning_records()
    assert len(records) == 5
    assert all(len(r.run_secs) == 3 and r.run_secs[0] < 1e10 for r in records)
    sch = ms.tir_integration.compile_tir(db, Matmul, TARGET)
    got, want = run_matmul(sch.mod)
    np.testing.assert_allclose(got, want, rtol=1e-5)
    reloaded = ms.tir_integration.compile_tir(ms.JSONDatabase(work_dir=str(tmp_path)), Matmul,
                                              TARGET)
    assert_structural_equal(reloaded.mod, sch.mod)
    assert str(reloaded.trace) == str(sch.trace)


def test_same_seed_gives_the_same_search(tmp_path):
    runs = [ms.tune_tir(Matmul, TARGET, work_dir=str(tmp_path / str(i)), max_trials_global=6,
                        num_trials_per_iter=6, seed=7, progress=False) for i in range(2)]
    assert _traces(runs[0]) == _traces(runs[1])
    other = ms.tune_tir(Matmul, TARGET, database="memory", max_trials_global=6,
                        num_trials_per_iter=6, seed=8, progress=False)
    assert _traces(other) != _traces(runs[0])


def test_evolution_under_a_trained_cost_model_finds_correct_programs():
    model = ms.cost_model.RidgeModel(num_warmup_samples=4, seed=0)
    strategy = ms.search_strategy.EvolutionarySearch(population_size=16,
                                                     init_min_unmeasured=8,
                                                     genetic_num_iters=2)
    db = ms.tune_tir(Matmul, TARGET, database="memory", max_trials_global=8,
                     num_trials_per_iter=4, cost_model=model, strategy=strategy, seed=1,
                     progress=False)
    assert model.ready and len(db) == 8
    programs = {structural_hash(r.as_measure_candidate().mod)
                for r in db.get_all_tuning_records()}
    assert len(programs) == 8  # no program measured twice
    got, want = run_matmul(ms.tir_integration.compile_tir(db, Matmul, TARGET).mod)
    np.testing.assert_allclose(got, want, rtol=1e-5)


def test_replay_trace_strategy(tmp_path):
    db = ms.tune_tir(Matmul, TARGET, work_dir=str(tmp_path), max_trials_global=3,
                     num_trials_per_iter=3, strategy="replay-trace", seed=0, progress=False)
    assert len(db) == 3


def test_a_target_the_runner_cannot_measure_is_refused(tmp_path):
    with pytest.raises(ms.RunnerError, match="cannot measure on target 'cuda'"):
        ms.tune_tir(Matmul, "cuda", work_dir=str(tmp_path), max_trials_global=2,
                    progress=False)
    assert not any(tmp_path.iterdir())  # nothing was written


def test_a_failing_space_function_leaves_no_database(tmp_path):
    def broken(sch):
        raise RuntimeError("boom")

    with pytest.raises(ms.SpaceGeneratorError, match="'broken' raised RuntimeError: boom"):
        ms.tune_tir(Matmul, TARGET, work_dir=str(tmp_path), max_trials_global=2,
                    space=broken, progress=False)
    assert not any(tmp_path.iterdir())


def test_import_mlckit_does_not_import_meta_schedule():
    import subprocess
    import sys

    code = "import sys, mlckit; print('mlckit.meta_schedule' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.stdout.strip() == "False"


def test_the_progress_bar_goes_to_stdout_and_ends_full_when_the_space_runs_out(tmp_path,
                                                                               capsys):
    """Five programs exist (see above) but 16 trials were asked for: the bar still ends at
    100%, on stdout (a notebook shows stderr as an error)."""
    ms.tune_tir(Matmul, TARGET, work_dir=str(tmp_path), max_trials_global=16,
                num_trials_per_iter=16, space=stochastic_schedule_mm, seed=0)
    out, err = capsys.readouterr()
    assert err == ""
    last = out.replace("\r", "\n").strip().splitlines()[-1]
    assert last.startswith("tune_tir main (all 5 candidates): 100%|██████████| 5/5 [")
