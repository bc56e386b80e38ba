"""Notebook tools: ``ScheduleExplorer``.

Everything Jupyter-specific lives here (IPython, ipywidgets and graphviz are imported by
this package only); the compiler core reaches it lazily.  Each tool is a plain-Python model
that works in a terminal (its text form) and a thin notebook view.

Example::

    from mlckit.notebook import ScheduleExplorer
    ScheduleExplorer(mm_relu)                 # try schedule primitives step by step
"""

from __future__ import annotations

from .explorer import Refusal, ScheduleExplorer, Step

__all__ = ["Refusal", "ScheduleExplorer", "Step"]
