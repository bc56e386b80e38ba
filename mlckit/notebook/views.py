"""The notebook layer's views of core objects, installed through ``mlckit.ffi.views``.

The compiler core asks that registry for an object's HTML form (``_repr_html_``) or graph
(``.graph()``) and never imports this layer; ``import mlckit`` adds a loader that imports
this module at the first such question.  The HTML is made by ``reprs`` and the graphs by
``graph``; each view imports its maker when called, so a notebook layer that cannot be
imported leaves the text forms showing.

Example::

    import mlckit.notebook.views          # done for you at the first _repr_html_()
    mlckit.nd.array([1, 2])._repr_html_()
"""

from __future__ import annotations

from mlckit.ffi.views import register_view
from mlckit.ir.module import IRModule
from mlckit.relax.expr import Function
from mlckit.runtime.ndarray import NDArray
from mlckit.runtime.vm.executable import VMExecutable
from mlckit.runtime.vm.virtual_machine import ProfileReport
from mlckit.tir.function import PrimFunc
from mlckit.tir.schedule.schedule import Schedule
from mlckit.tir.schedule.trace import Trace


def _html(maker: str):
    def view(obj):
        import mlckit.notebook.reprs as reprs  # on each call: a missing module leaves text

        return getattr(reprs, maker)(obj)

    view.__name__ = maker
    return view


for cls, maker in ((NDArray, "ndarray_html"), (VMExecutable, "executable_html"),
                   (ProfileReport, "profile_html"), (Schedule, "schedule_html"),
                   (Trace, "trace_html")):
    register_view("html", cls, _html(maker))


def _graph(obj, name: str | None = None):
    from mlckit.notebook.graph import graph

    return graph(obj, name)


for cls in (IRModule, PrimFunc, Function):
    register_view("graph", cls, _graph)
