"""How long the notebook tools make a learner wait (figures and ratios, not pass/fail).

1. ``%%relax`` of the course's MLP module (notebook 03's ``MyModule``: three PrimFuncs and
   a Relax ``main``), run by a real IPython shell: quiet (``-q``: parse and bind) and
   displayed (plus the text and HTML forms IPython computes).  Target: ≤ 100 ms.  Shown next
   to ``mlckit.script.from_source`` on the same text (the parser alone) and ``ast.parse``
   (Python's own parsing), as ratios.
2. The other views on the same module: ``PassStepper`` (the build pipeline, recorded),
   ``graph(main)`` (DOT source, and SVG by ``dot``), ``side_by_side`` of ``linear0``
   (text + HTML).

Usage::

    python benchmarks/notebook_tools.py [--repeat 7]
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import io
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

TARGET_MS = 100.0


def best_of(f, repeat: int) -> float:
    """The best of ``repeat`` timed calls (after one warm-up), in seconds."""
    f()
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        f()
        best = min(best, time.perf_counter() - t0)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()

    from IPython.core.interactiveshell import InteractiveShell

    from mlckit.notebook import PassStepper, graph, side_by_side
    from mlckit.script import from_source
    from tests.notebook.programs import MLP_MODULE

    shell = InteractiveShell.instance()
    shell.run_cell("%load_ext mlckit")
    quiet_cell = "%%relax -q\n" + MLP_MODULE.lstrip("\n")
    shown_cell = "%%relax\n" + MLP_MODULE.lstrip("\n")

    def run_cell(cell: str):
        def run():
            with contextlib.redirect_stdout(io.StringIO()):
                result = shell.run_cell(cell, store_history=True)
            if not result.success:
                raise SystemExit(f"the cell failed: {result.error_in_exec!r}")
        return run

    def show_html():  # what a notebook front end asks for besides the text form
        shell.user_ns["MyModule"]._repr_html_()

    t_ast = best_of(lambda: ast.parse(MLP_MODULE), args.repeat)
    t_parse = best_of(lambda: from_source(MLP_MODULE), args.repeat)
    t_quiet = best_of(run_cell(quiet_cell), args.repeat)
    t_shown = best_of(run_cell(shown_cell), args.repeat)
    t_html = best_of(show_html, args.repeat)

    print(f"%%relax of the course MLP module ({MLP_MODULE.count(chr(10))} lines), best of "
          f"{args.repeat}:")
    print(f"  ast.parse (Python alone)           {t_ast * 1e3:8.2f} ms")
    print(f"  from_source (the TVMScript parser) {t_parse * 1e3:8.2f} ms   "
          f"{t_parse / t_ast:6.1f}x ast.parse")
    print(f"  %%relax -q (parse + bind)          {t_quiet * 1e3:8.2f} ms   "
          f"{t_quiet / t_parse:6.2f}x from_source")
    print(f"  %%relax (+ text display)           {t_shown * 1e3:8.2f} ms   "
          f"{t_shown / t_parse:6.2f}x from_source")
    print(f"  + HTML form (_repr_html_)          {t_html * 1e3:8.2f} ms")
    total = t_shown + t_html
    verdict = "within" if total * 1e3 <= TARGET_MS else "OVER"
    print(f"  cell to display, in all            {total * 1e3:8.2f} ms   "
          f"{total * 1e3 / TARGET_MS:6.2f}x the {TARGET_MS:.0f} ms target ({verdict})")

    mod = from_source(MLP_MODULE)
    t_stepper = best_of(lambda: PassStepper(mod), args.repeat)
    t_dot = best_of(lambda: graph(mod["main"]).source, args.repeat)
    t_sbs = best_of(lambda: (str(side_by_side(mod["linear0"])),
                             side_by_side(mod["linear0"]).html()), args.repeat)
    print("\nthe other views on the same module:")
    print(f"  PassStepper(mod) (build pipeline)  {t_stepper * 1e3:8.2f} ms")
    print(f"  graph(main).source (DOT)           {t_dot * 1e3:8.2f} ms")
    if shutil.which("dot"):
        t_svg = best_of(lambda: graph(mod["main"]).pipe(format="svg"), args.repeat)
        print(f"  graph(main) drawn to SVG by dot    {t_svg * 1e3:8.2f} ms")
    else:
        print("  graph(main) drawn to SVG by dot    (no `dot` on this machine)")
    print(f"  side_by_side(linear0) text + HTML  {t_sbs * 1e3:8.2f} ms")


if __name__ == "__main__":
    main()
