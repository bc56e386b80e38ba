"""Write the student exercise notebooks (notebooks/exercises/exN_<chapter>.ipynb) from the
exercise registry, and run them so that their outputs are stored (nbval compares them).

Each exercise gets its statement (markdown), a cell that fetches it, for exercises that
transform a program a cell showing that program, an answer cell holding the starting point
(metadata ``{"mlckit": {"exercise": name, "role": "answer"}}``: the instructor script puts
the reference solution there) and a cell that checks it.

    PYTHONPATH=. python tools/make_exercise_notebooks.py [out_dir]
"""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient

from mlckit import exercises

REPO = Path(__file__).resolve().parents[1]

IMPORTS = """\
import numpy as np
import mlckit as tvm
from mlckit import exercises, relax, te, tir, topi
from mlckit import meta_schedule as ms
from mlckit.ir import IRModule
from mlckit.script import ir as I, relax as R, tir as T"""

INTRO = """\
# Exercises {number}: {title}

Each exercise below has a statement, a starting point in its answer cell, and a check.
Replace the `...` in the answer cell with your answer and run the cell after it: the
exercise's `check` (`ex_add.check(add)`) runs your answer on random inputs of several shapes against NumPy, compares
its structure with what the exercise asks for, and tells you what is not right yet.
Its `hint()` (`ex_add.hint()`) unlocks one hint at a time.  A check never raises: an error in your answer is
shown as feedback.  TVMScript starting points leave the `@T.prim_func` decorator off (a `...`
cannot be parsed); `check` adds it, and keeping it there works too."""

SHOWS_PROGRAM = {"schedule", "gpu", "trace", "stochastic", "tune", "rewrite"}


def notebook(number: int, chapter: str):
    cells = [nbformat.v4.new_markdown_cell(INTRO.format(number=number,
                                                        title=exercises.CHAPTERS[chapter])),
             nbformat.v4.new_code_cell(IMPORTS)]
    for ex in exercises.chapter(chapter):
        text = f"## {ex.title} (`{ex.name}`)\n\n{ex.statement}"
        if ex.speed:
            text += (f"\n\nSpeed goal: at least {ex.speed.goal:g}× the speed of the "
                     f"{'reference schedule' if ex.speed.against == 'reference' else 'naive kernel'}.")
        if ex.kind == "trace":
            text += ("\n\nIn a notebook cell: `from mlckit.notebook import ScheduleExplorer`, "
                     "then `explorer = ScheduleExplorer(ex_explorer_trace.start_program())`.")
        cells.append(nbformat.v4.new_markdown_cell(text))
        var = "ex_" + ex.name.split(".", 1)[1]  # one name per exercise: cells rerun in any order
        fetch = f'{var} = exercises.get("{ex.name}")'
        if ex.kind in SHOWS_PROGRAM:
            fetch += f"\n{var}.start_program().show()"
        cells.append(nbformat.v4.new_code_cell(fetch))
        answer = nbformat.v4.new_code_cell("# your answer\n" + ex.start.strip("\n"))
        answer.metadata["mlckit"] = {"exercise": ex.name, "role": "answer"}
        cells.append(answer)
        cells.append(nbformat.v4.new_code_cell(f"{var}.check({ex.answer_name})"))
    nb = nbformat.v4.new_notebook(cells=cells)
    nb.metadata["kernelspec"] = {"display_name": "Python 3", "language": "python",
                                 "name": "python3"}
    return nb


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for number, chapter in enumerate(exercises.chapters(), start=1):
        nb = notebook(number, chapter)
        NotebookClient(nb, timeout=600, kernel_name="python3",
                       resources={"metadata": {"path": str(out)}}).execute()
        path = out / f"ex{number}_{chapter}.ipynb"
        nbformat.write(nb, path)
        print(path)


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else REPO / "notebooks" / "exercises")
