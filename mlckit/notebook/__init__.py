"""Notebook tools: ``%%relax`` / ``%%tir``, ``ScheduleExplorer``, ``PassStepper``, graph and
side-by-side views, and the HTML forms of core objects (``reprs``).

Everything Jupyter-specific lives here (IPython, ipywidgets and graphviz are imported by
this package only); the compiler core reaches it lazily.  Each tool is a plain-Python model
that works in a terminal (its text form) and a thin notebook view; ipywidgets and IPython
are imported only by the views and the magics, when they are used.

Example::

    %load_ext mlckit                          # registers %%relax and %%tir
    from mlckit.notebook import PassStepper, ScheduleExplorer, graph, side_by_side
    ScheduleExplorer(mm_relu)                 # try schedule primitives step by step
    PassStepper(MyModule)                     # step through relax.build's passes
    graph(MyModule["main"])                   # the dataflow graph
    side_by_side(mm_relu)                     # TVMScript beside its lnumpy twin
    gpu_view(sch.mod["main"], a, b)           # what every GPU thread reads and writes
"""

from __future__ import annotations

from .diff import diff_html, unified_diff
from .explorer import Refusal, ScheduleExplorer, Step
from .gpu_view import GpuView, gpu_view
from .graph import graph
from .pass_stepper import PassStep, PassStepper, RecordPasses
from .side_by_side import SideBySide, side_by_side

__all__ = ["PassStep", "PassStepper", "RecordPasses", "Refusal", "ScheduleExplorer",
           "SideBySide", "Step", "diff_html", "graph", "load_ipython_extension",
           "side_by_side", "unified_diff", "GpuView", "gpu_view"]


def load_ipython_extension(ipython) -> None:
    """``%load_ext mlckit.notebook``: register the ``%%relax`` and ``%%tir`` cell magics.

    In a notebook cell::

        %load_ext mlckit.notebook
    """
    from .magics import load_ipython_extension as load

    load(ipython)
