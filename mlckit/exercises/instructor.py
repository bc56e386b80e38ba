"""The instructor's copy of the exercise notebooks: every answer cell holds the reference
solution.

The student notebooks (``notebooks/exercises/*.ipynb``) mark each answer cell with
``metadata["mlckit"] = {"exercise": <name>, "role": "answer"}``; this script replaces the
starting point in those cells by the exercise's reference solution and clears the outputs
of the notebook (run it to see every check pass).

Usage::

    python -m mlckit.exercises.instructor notebooks/exercises out_dir [--execute]

``--execute`` runs each instructor notebook (nbclient) and stores its outputs.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from mlckit.error import TVMValueError

from .registry import get

__all__ = ["answer_cells", "instructor_notebook", "main"]


def answer_cells(nb: dict) -> list[tuple[int, str]]:
    """(cell index, exercise name) of every answer cell of a notebook (its JSON)."""
    out = []
    for i, cell in enumerate(nb["cells"]):
        meta = cell.get("metadata", {}).get("mlckit", {})
        if meta.get("role") == "answer":
            out.append((i, meta["exercise"]))
    return out


def instructor_notebook(nb: dict) -> dict:
    """A copy of ``nb`` whose answer cells hold the reference solutions, outputs cleared."""
    nb = json.loads(json.dumps(nb))
    cells = answer_cells(nb)
    if not cells:
        raise TVMValueError("the notebook has no answer cells (metadata "
                            "{\"mlckit\": {\"role\": \"answer\", \"exercise\": ...}})")
    for i, name in cells:
        solution = get(name).solution.strip("\n")
        nb["cells"][i]["source"] = solution.splitlines(keepends=True)
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            cell["outputs"] = []
            cell["execution_count"] = None
    nb.setdefault("metadata", {})["mlckit_mode"] = "solutions"
    return nb


def _execute(path: Path) -> None:
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    NotebookClient(nb, timeout=600, kernel_name="python3",
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    nbformat.write(nb, path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m mlckit.exercises.instructor",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("source", type=Path, help="folder of student notebooks")
    parser.add_argument("out", type=Path, help="folder for the instructor copies")
    parser.add_argument("--execute", action="store_true", help="run them and keep outputs")
    args = parser.parse_args(argv)
    notebooks = sorted(args.source.glob("*.ipynb"))
    if not notebooks:
        print(f"no notebooks in {args.source}", file=sys.stderr)
        return 1
    args.out.mkdir(parents=True, exist_ok=True)
    for path in notebooks:
        nb = instructor_notebook(json.loads(path.read_text()))
        target = args.out / path.name
        target.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n")
        if args.execute:
            _execute(target)
        print(f"{target}: {len(answer_cells(nb))} solutions")
    return 0


if __name__ == "__main__":
    sys.exit(main())
