"""Views that an upper layer installs on core objects: HTML forms and graphs.

The compiler core owns this table and knows nothing of notebooks; ``mlckit.notebook.views``
fills it (``register_view``), and the core asks it (``html_view``, ``view``).  A view is
found by the object's class, its base classes included.  The first question loads the
installers added with ``add_view_loader`` (``import mlckit`` adds the notebook layer's), so
importing mlckit stays free of notebook machinery until a view is wanted.

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
_LOADERS: list[Callable[[], None]] = []


class ViewError(TVMError):
    """No view of the asked kind is installed for an object."""


def register_view(kind: str, cls: type, fn: Callable | None = None):
    """Install ``fn(obj, *args)`` as the ``kind`` view ("html", "graph") of ``cls``;
    usable as a decorator.  A later registration replaces an earlier one."""

    def register(func: Callable) -> Callable:
        _VIEWS[(kind, cls)] = func
        return func

    return register(fn) if fn is not None else register


def add_view_loader(loader: Callable[[], None]) -> None:
    """``loader()`` installs views; it runs once, at the first look-up."""
    _LOADERS.append(loader)


def find_view(kind: str, obj) -> Callable | None:
    """The ``kind`` view installed for ``obj``'s class (or a base class); None if none."""
    while _LOADERS:
        _LOADERS.pop(0)()
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
