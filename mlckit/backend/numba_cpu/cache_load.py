"""Loading a kernel's machine code from Numba's disk cache without Numba's registries.

Before it loads a cached version, Numba refreshes its target context: it imports and
installs every lowering registry and every typing registry (the implementations and typing
templates of all of Python and NumPy it supports, cffi's C parser among them).  Loading
machine code needs neither: nothing is typed or lowered when a version is loaded, and a
call with the kernel's exact argument types types nothing either.  A kernel compiled with
Numba's runtime (NRT: one with parallel loops allocates through it) needs the runtime,
which the refresh would also have initialized, and every kernel needs the C helpers every
target context installs when it is created.  So a kernel or an entry loaded from the cache
initializes the runtime where it was compiled with it (most kernels and every entry are
not: ``numba_cpu.workspace``) and leaves the registries to the next compile, which
refreshes them itself (Numba's ``CompilerBase`` does, before every compile).  A fresh
process building the course's ``mm_relu`` from a warm cache, on a 2-core host: 0.78 ->
0.52 s, where ``import numba`` alone takes 0.36 s.

Example::

    from mlckit.backend.numba_cpu.cache_load import load_without_registries
    load_without_registries(dispatcher)     # its cache loads skip the registries
    dispatcher.compile(sig)                 # a hit: loaded; a miss: compiled as ever
"""

from __future__ import annotations

import contextlib

from numba.core.compiler_lock import global_compiler_lock
from numba.core.runtime import rtsys

__all__ = ["load_without_registries", "registries_deferred"]


def _refresh_later() -> None:
    """A context's refresh while a version is loaded: nothing (see the module)."""


@contextlib.contextmanager
def registries_deferred(target_context, runtime: bool = True):
    """While it is entered, ``target_context.refresh()`` and its typing context's do
    nothing; Numba's runtime is initialized first where the code loaded uses it
    (``runtime``).  Held under Numba's global compiler lock, so no compile in another
    thread sees the registries skipped.

    Example::

        with registries_deferred(dispatcher.targetctx):
            cres = dispatcher._cache.load_overload(sig, dispatcher.targetctx)
    """
    contexts = (target_context, target_context.typing_context)
    with global_compiler_lock:
        if runtime:
            rtsys.initialize(target_context)  # idempotent: what the refresh would have started
        saved = [vars(ctx).get("refresh") for ctx in contexts]
        for ctx in contexts:
            ctx.refresh = _refresh_later
        try:
            yield
        finally:
            for ctx, old in zip(contexts, saved):
                if old is None:
                    del ctx.refresh  # the class's method again
                else:
                    ctx.refresh = old


def load_without_registries(dispatcher) -> None:
    """Make ``dispatcher``'s loads from Numba's disk cache skip the refresh of Numba's
    registries (its compiles are unchanged).  Idempotent.

    Example::

        load_without_registries(kernel_dispatcher)
    """
    cache = getattr(dispatcher, "_cache", None)
    load = getattr(cache, "load_overload", None)
    if load is None or getattr(load, "_mlckit_deferred", False):
        return

    # a function compiled with ``_nrt=False`` (a kernel of workspaces, an entry) has no
    # call into the runtime: loading it initializes nothing
    runtime = dispatcher.targetoptions.get("_nrt", True)

    def load_overload(sig, target_context):
        with registries_deferred(target_context, runtime):
            return load(sig, target_context)

    load_overload._mlckit_deferred = True
    cache.load_overload = load_overload
