"""Python's cyclic garbage collector, paused while a kernel is built.

Building a kernel allocates hundreds of thousands of short-lived objects (TIR nodes, Numba's
IR, llvmlite's instructions), many of them in reference cycles.  With the collector running,
CPython scans the young ones about twenty times per kernel and, every few kernels, every
object of the process (~150,000 in a process that has imported mlckit and Numba: ~60 ms a
full collection).  Paused for the build, the collector runs once afterwards on what the
build left: the course's ``mm_relu`` schedules build ~10 % faster (2-core host, 24
schedules alternating between processes: 205 against 221 ms, 225 against 322, 237 against
246 ms a kernel, every collection counted).

Example::

    from mlckit.backend.collector import collector_paused
    with collector_paused():
        f = numba_cpu.build(mm_relu)
"""

from __future__ import annotations

import contextlib
import gc
import threading

__all__ = ["collector_paused"]

_LOCK = threading.Lock()
_builds = 0  # builds under way (threads may build side by side)
_was_enabled = False  # whether the collector was on when the first of them began


@contextlib.contextmanager
def collector_paused():
    """Pause the cyclic garbage collector until the last of the builds under way ends; a
    collector the caller had switched off stays off."""
    global _builds, _was_enabled
    with _LOCK:
        if _builds == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _builds += 1
    try:
        yield
    finally:
        with _LOCK:
            _builds -= 1
            if _builds == 0 and _was_enabled:
                gc.enable()
