"""The global function registry: ``register_func`` / ``get_global_func`` (as TVM).

A name maps to one Python callable.  Registering a name twice is an error unless
``override=True``; looking up a missing name is an error unless ``allow_missing=True``.

Example::

    import mlckit as tvm

    @tvm.register_func("env.linear", override=True)
    def linear(x, w, b, out):
        np.add(x @ w.T, b, out=out)

    tvm.get_global_func("env.linear")        # the function
"""

from __future__ import annotations

import difflib
from collections.abc import Callable

from mlckit.error import TVMKeyError, TVMTypeError

_REGISTRY: dict[str, Callable] = {}
# functions that import the packages registering more globals, run once at the first lookup
# that misses (``import mlckit`` leaves relax & co. for their first use: it stays fast)
_LOADERS: list[Callable[[], None]] = []


def add_registry_loader(load: Callable[[], None]) -> None:
    """Run ``load`` (it imports modules that register global functions) before a lookup of a
    name not registered yet, or a listing of all names."""
    _LOADERS.append(load)


def load_registered_packages() -> None:
    """Import the packages :func:`add_registry_loader` named (once): after it every global
    function and operator of mlckit is registered."""
    while _LOADERS:
        _LOADERS.pop(0)()


class GlobalFuncError(TVMKeyError):
    """A registry error: a duplicate registration or a missing name.

    >>> import mlckit as tvm
    >>> try:
    ...     tvm.get_global_func("no.such.function")
    ... except tvm.TVMError as err:
    ...     print(type(err).__name__)
    GlobalFuncError
    """


def register_func(func_name, f: Callable | None = None, override: bool = False):
    """Register ``f`` under ``func_name``; usable as a decorator.

    Example::

        @register_func("my.add_one")
        def add_one(x):
            return x + 1

        register_func("my.twice", lambda x: 2 * x)

    ``@register_func`` without a name registers the function under its ``__name__``.
    """
    if callable(func_name) and f is None and not isinstance(func_name, str):
        return register_func(func_name.__name__, func_name, override)
    if not isinstance(func_name, str) or not func_name:
        raise TVMTypeError(f"register_func expects a non-empty name string, got {func_name!r}")

    def register(func: Callable) -> Callable:
        if not callable(func):
            raise TVMTypeError(f"register_func({func_name!r}) expects a callable, got {func!r}")
        if func_name in _REGISTRY and not override:
            old = _REGISTRY[func_name]
            where = getattr(old, "__module__", None) or "?"
            raise GlobalFuncError(
                f"global function {func_name!r} is already registered (by "
                f"{getattr(old, '__qualname__', repr(old))} in {where}); pass override=True to "
                "replace it")
        _REGISTRY[func_name] = func
        return func

    if f is not None:
        return register(f)
    return register


def get_global_func(name: str, allow_missing: bool = False) -> Callable | None:
    """The function registered as ``name``; None if missing and ``allow_missing``.

    Example::

        f = get_global_func("env.linear")
        get_global_func("no.such", allow_missing=True)   # None
    """
    func = _REGISTRY.get(name)
    if func is None and _LOADERS:
        load_registered_packages()
        func = _REGISTRY.get(name)
    if func is None and not allow_missing:
        raise GlobalFuncError(missing_message(name))
    return func


def missing_message(name: str, where: str = "") -> str:
    """The text of a 'no such global function' error, with close names suggested."""
    close = difflib.get_close_matches(name, list(_REGISTRY), n=3, cutoff=0.6)
    hint = f" Did you mean {', '.join(repr(c) for c in close)}?" if close else ""
    at = f" ({where})" if where else ""
    return (f"global function {name!r} is not registered{at}. Register it with "
            f"@mlckit.register_func({name!r}) before using it.{hint}")


def list_global_func_names() -> list[str]:
    """The names of all registered functions, sorted.

    >>> import mlckit.ffi as tvm_ffi
    >>> _ = tvm_ffi.register_global_func("demo.hello", lambda: "hello", override=True)
    >>> "demo.hello" in tvm_ffi.list_global_func_names()
    True
    """
    load_registered_packages()
    return sorted(_REGISTRY)


def remove_global_func(name: str) -> None:
    """Unregister ``name`` (an error if it is not registered).

    >>> import mlckit as tvm
    >>> import mlckit.ffi as tvm_ffi
    >>> _ = tvm.register_func("demo.twice", lambda x: 2 * x, override=True)
    >>> tvm_ffi.remove_global_func("demo.twice")
    >>> "demo.twice" in tvm_ffi.list_global_func_names()
    False
    """
    if name not in _REGISTRY:
        load_registered_packages()
    if name not in _REGISTRY:
        raise GlobalFuncError(missing_message(name))
    del _REGISTRY[name]
