"""How long the notebook tools make a learner wait (figures and ratios, not pass/fail).

1. ``%%relax`` of the course's MLP module (notebook 03's ``MyModule``: three PrimFuncs and
   a Relax ``main``), run by a real IPython shell: quiet (``-q``: parse and bind) and
   displayed (plus the text and HTML forms IPython computes).  Target: ≤ 100 ms.  Shown next
   to ``mlckit.script.from_source`` on the same text (the parser alone) and ``ast.parse``
   (Python's own parsing), as ratios.
2. The other views on the same module: ``PassStepper`` (the build pipeline, recorded),
   ``graph(main)`` (DOT source, and SVG by ``dot``), ``side_by_side`` of ``linear0``
   (text + HTML).
3. One ``ScheduleExplorer`` step on the course's ``mm_relu`` (:func:`explorer_step`): the
   primitive applied to a copy of the schedule, TVMScript and lnumpy printed, the diff to
   the step before; then what the widget adds (highlighted code, the primitives legal for
   the picked block and loop tried on copies, the diff as HTML, the run-time plot).
   Target: ≤ 300 ms.  The timed kernel run (Numba build + timing) is shown apart.

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

    explorer_step(args.repeat)


EXPLORER_TARGET_MS = 300.0
# the course's steps on mm_relu, each applied on top of the ones before
COURSE_STEPS = [
    ("split", dict(block="Y", loop="j", factors=[None, 4])),
    ("reorder", dict(block="Y", loops=["j_0", "k", "j_1"])),
    ("reverse_compute_at", dict(block="C", loop="j_0")),
]


def explorer_step(repeat: int) -> None:
    """Print how long one explorer step takes on mm_relu, model and widget, best of
    ``repeat``, against the 300 ms target (the timed kernel run apart)."""
    from mlckit.notebook import ScheduleExplorer
    from mlckit.notebook.explorer_widget import history_svg
    from mlckit.notebook.kernel_timer import KernelTimer
    from tests.kernels import mm_relu

    def steps_of(ex) -> list[float]:
        """Seconds of each course step (best of ``repeat``), undone between rounds."""
        best = [float("inf")] * len(COURSE_STEPS)
        for _ in range(repeat + 1):  # the first round warms up
            for k, (name, kwargs) in enumerate(COURSE_STEPS):
                t0 = time.perf_counter()
                step = ex.apply(name, **kwargs)
                best[k] = min(best[k], time.perf_counter() - t0)
                if not step.ok:
                    raise SystemExit(f"the step was refused: {step}")
            for _ in COURSE_STEPS:
                ex.undo()
        return best

    model = steps_of(ScheduleExplorer(mm_relu, measure=False))
    viewed = ScheduleExplorer(mm_relu, measure=False)
    viewed.view()
    widget = steps_of(viewed)
    for s, seconds in zip(viewed.steps, (2.6e-3, 3.1e-3, 0.8e-3, 0.7e-3)):
        s.seconds = seconds  # a plot of four measured steps, as after the course's steps
    t_plot = best_of(lambda: history_svg(viewed.steps), repeat)
    timer = KernelTimer()
    t_kernel = best_of(lambda: timer.measure(viewed.steps[-1].sch.mod["main"]), max(1, repeat // 3))

    print(f"\nScheduleExplorer step on mm_relu (128x128x128), best of {repeat}:")
    print(f"  {'step':<22}{'model':>10}{'+ widget':>11}{'+ plot':>10}   vs {EXPLORER_TARGET_MS:.0f} ms")
    for (name, _), m, w in zip(COURSE_STEPS, model, widget):
        total = w + t_plot
        verdict = "within" if total * 1e3 <= EXPLORER_TARGET_MS else "OVER"
        print(f"  {name:<22}{m * 1e3:8.2f} ms{w * 1e3:8.2f} ms{total * 1e3:8.2f} ms   "
              f"{total * 1e3 / EXPLORER_TARGET_MS:5.2f}x ({verdict})")
    print("  model: the primitive on a copy, TVMScript, lnumpy and the diff; + widget: "
          "highlighting,\n  the legal primitives tried on copies, the diff as HTML; + plot: "
          f"the run-time chart ({t_plot * 1e3:.2f} ms)")
    print(f"  not counted: the timed kernel run (Numba build + timing) {t_kernel * 1e3:8.2f} ms")


if __name__ == "__main__":
    main()
