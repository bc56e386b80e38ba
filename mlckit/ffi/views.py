"""Views that an upper layer installs on core objects: TVMScript text, HTML forms, graphs.

The compiler core owns this table and knows neither the printer nor notebooks: the printer
(``mlckit.script.printer``) installs the "script", "show" and "script_html" views of IR
nodes, ``mlckit.notebook.views`` the "html" and "graph" views of the rest (``register_view``),
and the core asks (``html_view``, ``view``).  A view is found by the object's class, its
base classes included.  The first question of a kind runs the loaders added for that kind
with ``add_view_loader`` (``import mlckit`` adds the printer's and the notebook layer's), so
importing mlckit loads neither until a view is wanted, and printing IR never loads the
notebook layer.

Example::

    from mlckit.ffi.views import html_view, register_view

    @register_view("html", NDArray)
    def ndarray_html(arr):
        return f"<b>{arr.shape}</b>"

    html_view(mlckit.nd.array([1, 2]))   # '<b>(2,)</b>'
"""

from __future__ import annotations

from collections.abc import Callable

from mlckit.error import TVMError

_VIEWS: dict[tuple[str, type], Callable] = {}
_LOADERS: dict[str, list[Callable[[], None]]] = {}


class ViewError(TVMError):
    """No view of the asked kind is installed for an object."""


def register_view(kind: str, cls: type, fn: Callable | None = None):
    """Install ``fn(obj, *args)`` as the ``kind`` view ("html", "graph") of ``cls``;
    usable as a decorator.  A later registration replaces an earlier one."""

    def register(func: Callable) -> Callable:
        _VIEWS[(kind, cls)] = func
        return func

    return register(fn) if fn is not None else register


def add_view_loader(loader: Callable[[], None], kinds=("html", "graph")) -> None:
    """``loader()`` installs views of ``kinds``; it runs once, at the first look-up of one."""
    for kind in kinds:
        _LOADERS.setdefault(kind, []).append(loader)


def find_view(kind: str, obj) -> Callable | None:
    """The ``kind`` view installed for ``obj``'s class (or a base class); None if none."""
    pending = _LOADERS.get(kind)
    while pending:
        pending.pop(0)()
    for cls in type(obj).__mro__:
        found = _VIEWS.get((kind, cls))
        if found is not None:
            return found
    return None


def html_view(obj) -> str | None:
    """``obj``'s HTML form for ``_repr_html_``; None, so that the text form shows, when no
    form is installed or the layer that renders it cannot be imported."""
    try:
        found = find_view("html", obj)
        return None if found is None else found(obj)
    except ImportError:
        return None


def view(kind: str, obj, *args, **kwargs):
    """Call the ``kind`` view of ``obj`` (``IRModule.graph`` calls ``view("graph", mod)``).

    Example::

        view("graph", mod, "main")      # a graphviz.Digraph, with mlckit.notebook installed
    """
    found = find_view(kind, obj)
    if found is None:
        raise ViewError(f"no {kind!r} view is installed for {type(obj).__name__} objects "
                        "(the notebook layer, mlckit.notebook, installs them)")
    return found(obj, *args, **kwargs)
