"""Is there a CUDA GPU, and is ``numba.cuda`` the simulator?  Asked without importing
``numba.cuda`` where the answer is plainly no, so that the simulator can still be chosen.

``numba.cuda`` decides once, when it is first imported, whether it is the real thing or the
simulator (``NUMBA_ENABLE_CUDASIM=1``).  Looking for a GPU through ``numba.cuda.is_available()``
would import it, so :func:`has_gpu` first tries to load the CUDA driver library with
``ctypes``: a machine without ``libcuda`` has no GPU, and ``numba.cuda`` stays unimported.

Example::

    from mlckit.runtime import cuda_driver
    cuda_driver.has_gpu()              # False on a laptop without an NVIDIA driver
    cuda = cuda_driver.numba_cuda(simulator=True)   # numba.cuda, as the simulator
"""

from __future__ import annotations

import ctypes
import os
import sys
from functools import lru_cache

from mlckit.error import TVMError

__all__ = ["SimulatorUnavailable", "has_gpu", "numba_cuda", "simulator_active"]


class SimulatorUnavailable(TVMError):
    """The simulator was asked for after ``numba.cuda`` was imported for a real GPU."""


def simulator_active() -> bool:
    """Whether ``numba.cuda`` is (or, when imported, will be) Numba's CUDA simulator."""
    module = sys.modules.get("numba.cuda")
    if module is not None:
        return bool(getattr(module, "simulator_enabled", False)) or _config_says_sim()
    return os.environ.get("NUMBA_ENABLE_CUDASIM", "0") not in ("", "0")


def _config_says_sim() -> bool:
    from numba.core import config

    return bool(config.ENABLE_CUDASIM)


@lru_cache(maxsize=1)
def _driver_loads() -> bool:
    for name in ("libcuda.so.1", "libcuda.so", "nvcuda.dll", "libcuda.dylib"):
        try:
            ctypes.CDLL(name)
            return True
        except OSError:
            continue
    return False


def has_gpu() -> bool:
    """Whether a real CUDA GPU is usable through ``numba.cuda`` (never the simulator)."""
    if simulator_active() or not _driver_loads():
        return False
    try:
        from numba import cuda

        return bool(cuda.is_available())
    except Exception:  # noqa: BLE001 - a broken driver or toolkit means no GPU
        return False


def numba_cuda(simulator: bool = False):
    """``numba.cuda``; with ``simulator=True`` Numba's CUDA simulator, switched on here when
    ``numba.cuda`` has not been imported yet (``NUMBA_ENABLE_CUDASIM=1``)."""
    if simulator and not simulator_active():
        if "numba.cuda" in sys.modules:
            raise SimulatorUnavailable(
                "the numba.cuda simulator was asked for, but numba.cuda is already imported for "
                "a real GPU in this process; set NUMBA_ENABLE_CUDASIM=1 before anything imports "
                "numba.cuda (e.g. in the environment of the notebook or test process)")
        os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
        from numba.core import config

        config.reload_config()
    from numba import cuda

    return cuda
