"""The exercise notebooks: shipped without solutions (every check says "not answered yet"),
and the instructor copy, built by ``python -m mlckit.exercises.instructor``, runs from top
to bottom with every check passing ("solutions" mode)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mlckit import exercises
from mlckit.exercises.instructor import answer_cells, instructor_notebook

REPO = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((REPO / "notebooks" / "exercises").glob("*.ipynb"))


def outputs_text(cell) -> str:
    return "".join("".join(o.get("data", {}).get("text/plain", "")) + "".join(o.get("text", ""))
                   for o in cell.get("outputs", []))


def test_there_is_one_notebook_per_chapter_holding_every_exercise():
    assert [p.stem.split("_", 1)[1] for p in NOTEBOOKS] == exercises.chapters()
    names = [name for p in NOTEBOOKS for _, name in answer_cells(json.loads(p.read_text()))]
    assert names == [ex.name for ex in exercises.all_exercises()]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_student_notebooks_hold_no_solution_and_say_not_answered_yet(path):
    nb = json.loads(path.read_text())
    for i, name in answer_cells(nb):
        source = "".join(nb["cells"][i]["source"])
        assert source.strip().endswith(exercises.get(name).start.strip())
        check = nb["cells"][i + 1]
        assert outputs_text(check).startswith(f"… {name}: not answered yet")


def test_the_instructor_copy_puts_the_reference_solutions_in_the_answer_cells():
    nb = instructor_notebook(json.loads(NOTEBOOKS[0].read_text()))
    for i, name in answer_cells(nb):
        assert "".join(nb["cells"][i]["source"]) == exercises.get(name).solution.strip("\n")
    assert all(c.get("outputs", []) == [] for c in nb["cells"] if c["cell_type"] == "code")


def test_the_instructor_notebooks_run_in_solutions_mode_and_every_check_passes(tmp_path):
    """Every cell of the instructor copy runs (``--execute``, which nbval-lax does too); in
    solutions mode a check whose answer is not correct raises (``ExerciseNotSolved``), so a
    wrong reference solution fails the run, and every stored check says correct."""
    out = tmp_path / "instructor"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        filter(None, [str(REPO), os.environ.get("PYTHONPATH")])), **{exercises.STRICT_ENV: "1"})
    done = subprocess.run([sys.executable, "-m", "mlckit.exercises.instructor",
                           str(REPO / "notebooks" / "exercises"), str(out), "--execute"],
                          capture_output=True, text=True, cwd=REPO, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    checked = 0
    for path in sorted(out.glob("*.ipynb")):
        nb = json.loads(path.read_text())
        for i, name in answer_cells(nb):
            assert outputs_text(nb["cells"][i + 1]).startswith(f"✓ {name}: correct"), \
                outputs_text(nb["cells"][i + 1])
            checked += 1
    assert checked == len(exercises.all_exercises())


def test_solutions_mode_fails_on_an_answer_that_is_not_correct(monkeypatch):
    monkeypatch.setenv(exercises.STRICT_ENV, "1")
    ex = exercises.get("tensorir.add")
    with pytest.raises(exercises.ExerciseNotSolved, match="not answered yet"):
        ex.check(None)
    assert ex.check(ex.solution_object()).status == "correct"
