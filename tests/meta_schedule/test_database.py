"""The JSON database: TVM's two files, atomic writes, reload and replay, corrupt files."""

import json
import os

import pytest

from mlckit import meta_schedule as ms
from mlckit.ir import assert_structural_equal
from mlckit.target import Target
from mlckit.tir import Schedule

from .workloads import Matmul, stochastic_schedule_mm


def _record(db, factors, secs):
    sch = Schedule(Matmul)
    block = sch.get_block("C")
    i, j, k = sch.get_loops(block)
    j0, j1 = sch.split(j, sch.sample_perfect_tile(j, n=2, decision=factors))
    sch.reorder(i, j0, k, j1)
    wl = db.commit_workload(Matmul)
    args = ms.arg_info.ArgInfo.from_prim_func(Matmul["main"])
    db.commit_tuning_record(ms.TuningRecord(sch.trace, wl, secs, Target("llvm"), args))
    return sch


def test_files_are_tvms_two_json_lines_files(tmp_path):
    db = ms.JSONDatabase(work_dir=str(tmp_path))
    _record(db, [8, 4], [2e-3, 3e-3, 2e-3])
    assert sorted(os.listdir(tmp_path)) == ["database_tuning_record.json",
                                            "database_workload.json"]
    (workload,) = (tmp_path / "database_workload.json").read_text().splitlines()
    shash, module = json.loads(workload)
    assert shash.isdigit() and isinstance(module, str)
    (line,) = (tmp_path / "database_tuning_record.json").read_text().splitlines()
    index, (trace, run_secs, target, args_info) = json.loads(line)
    assert index == 0 and run_secs == [2e-3, 3e-3, 2e-3] and target == "llvm"
    assert args_info == [["TENSOR", "float32", [32, 32]]] * 3


def test_reloaded_database_replays_the_best_trace(tmp_path):
    db = ms.JSONDatabase(work_dir=str(tmp_path))
    _record(db, [8, 4], [5e-3])
    best = _record(db, [2, 16], [1e-3])
    _record(db, [4, 8], [1e10])  # a failed measurement never wins
    again = ms.JSONDatabase(work_dir=str(tmp_path))
    assert len(again) == 3
    sch = ms.tir_integration.compile_tir(again, Matmul, "llvm --num-cores=1")
    assert_structural_equal(sch.mod, best.mod)
    assert str(sch.trace) == str(best.trace)


def test_compile_tir_without_records_says_so(tmp_path):
    db = ms.JSONDatabase(work_dir=str(tmp_path))
    with pytest.raises(ms.TuningError, match="no successful measurement"):
        ms.tir_integration.compile_tir(db, Matmul, "llvm")


def test_an_interrupted_write_leaves_the_old_file(tmp_path, monkeypatch):
    db = ms.JSONDatabase(work_dir=str(tmp_path))
    _record(db, [8, 4], [5e-3])
    before = (tmp_path / "database_tuning_record.json").read_text()

    def fail(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(KeyboardInterrupt):
        _record(db, [2, 16], [1e-3])
    assert (tmp_path / "database_tuning_record.json").read_text() == before
    assert sorted(os.listdir(tmp_path)) == ["database_tuning_record.json",
                                            "database_workload.json"]


@pytest.mark.parametrize("file, text, why", [
    ("database_tuning_record.json", '[0, [[], null, "llvm"', "line 1: not valid JSON"),
    ("database_tuning_record.json", '[3, [[[], []], [1.0], "llvm", null]]',
     "line 1: workload index 3"),
    ("database_tuning_record.json", '{"a": 1}', "line 1: a record is"),
    ("database_workload.json", '["1", "not base64!"]', "line 1: the module does not decode"),
])
def test_corrupt_file_is_named_with_its_line(tmp_path, file, text, why):
    db = ms.JSONDatabase(work_dir=str(tmp_path))
    _record(db, [8, 4], [5e-3])
    path = tmp_path / file
    path.write_text(text + "\n")
    with pytest.raises(ms.DatabaseError, match=file + ".*" + why):
        ms.JSONDatabase(work_dir=str(tmp_path))


def test_memory_database_and_scope():
    db = ms.MemoryDatabase()
    assert ms.Database.current() is None
    with db:
        assert ms.Database.current() is db
    sch = ms.space_generator.ScheduleFn(stochastic_schedule_mm).generate_design_space(
        Matmul, seed=0)[0]
    db.commit_tuning_record(ms.TuningRecord(sch.trace, db.commit_workload(Matmul), [1e-3]))
    assert_structural_equal(db.query_ir_module(Matmul), sch.mod)
