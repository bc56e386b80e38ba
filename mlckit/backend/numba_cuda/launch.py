"""The hot path of a call on the GPU: kernels launched from a plan made once per shapes.

In the common case the host part of a CUDA function only launches its kernels, one after the
other, on the function's own arguments.  Each launch's grid and block come from the bound
loop extents: constants for static shapes, a function of the symbolic sizes otherwise.  So
the whole host part is worked out once per argument shapes and dtypes — the full argument
check (``mlckit.backend.signature``) on the first call of those shapes, the launch
configurations (``main_kernel[grid, block]``, which Numba would otherwise rebuild and
re-validate on every call) made once — and a later call with arrays of the same shapes and
dtypes is checked by reading their ``shape`` and ``dtype`` and launched at once: the same
verdict and the same launches, without the per-call work.

A host part with loops or buffers of its own runs the generated host function instead.

Example::

    plans = LaunchPlans(namespace, kernels)        # namespace: the executed module
    arrays = native_arrays(args, "gpu")            # device arrays, or None
    launches = plans.get(arrays)                   # None until the shapes were accepted
"""

from __future__ import annotations

import numpy as np

from mlckit.runtime.ndarray import NDArray
from mlckit.tir import stmt as S

from ..signature import eval_int

__all__ = ["LaunchPlans", "launches_only", "native_arrays"]

# at most this many shape combinations keep a plan (a function called with ever new shapes
# must not grow without bound)
MAX_PLANS = 64


def launches_only(func, kernels: list, host_buffers: list) -> bool:
    """Whether the lowered ``func``'s host part does nothing but launch ``kernels`` in order."""
    if host_buffers:
        return False
    body = func.body
    if isinstance(body, S.BlockRealize) and not body.block.iter_vars:
        if body.block.alloc_buffers or body.block.init is not None:
            return False
        body = body.block.body
    stmts = body.seq if isinstance(body, S.SeqStmt) else [body]
    return [id(s) for s in stmts] == [id(k.stmt) for k in kernels]


_DEVICE_TYPES: dict = {}


def _is_device_type(cls) -> bool:
    """A type whose objects live in GPU memory (a Numba device array, a CuPy array …)."""
    known = _DEVICE_TYPES.get(cls)
    if known is None:
        known = _DEVICE_TYPES[cls] = (not issubclass(cls, np.ndarray)
                                      and hasattr(cls, "__cuda_array_interface__"))
    return known


def native_arrays(args, mode: str):
    """The arrays the kernels run on, taken from ``args`` without copying, or None when an
    argument is not one (a scalar, or an array in the other memory): for ``"gpu"`` device
    arrays (``mlckit.nd`` arrays on the GPU unwrapped), for ``"sim"`` NumPy arrays."""
    out = []
    for a in args:
        if type(a) is NDArray:
            a = a._array
        if mode == "gpu":
            if not _is_device_type(type(a)):
                return None
        elif type(a) is not np.ndarray or not a.flags.c_contiguous:
            return None  # a view is copied (or refused, if written) by the full check
        out.append(a)
    return out


def _key(arrays):
    # what the argument check depends on: shapes, dtypes and (host arrays) writability; for
    # device arrays also what Numba's choice of compiled kernel depends on (layout, class)
    return tuple([(a.shape, a.dtype, a.flags.writeable) if type(a) is np.ndarray
                  else (a.shape, a.dtype, a.strides, type(a)) for a in arrays])


class _Launch:
    """One kernel's launch in a plan.  The first goes through Numba's launch configuration
    (``kernel[grid, block](...)``: Numba types the arguments, compiles, picks the compiled
    kernel); the later ones go straight to that compiled kernel, since arrays of the plan's
    shapes, dtypes and layouts always get the same one: no per-call dispatch on types."""

    __slots__ = ("config", "direct")

    def __init__(self, config):
        self.config = config
        self.direct = None

    def __call__(self, *arrays):
        direct = self.direct
        if direct is not None:
            direct(arrays)
            return
        self.config(*arrays)
        self.direct = _compiled_launch(self.config, arrays)


def _compiled_launch(config, arrays):
    """``launch(arrays)`` of the kernel Numba compiled for ``arrays``' types, or None where
    the dispatcher has no such thing (the simulator)."""
    try:
        dispatcher = config.dispatcher
        argtypes = tuple(dispatcher.typeof_pyval(a) for a in arrays)
        kernel = dispatcher.overloads[argtypes]
        launch = kernel.launch
        grid, block, stream, shared = (config.griddim, config.blockdim, config.stream,
                                       config.sharedmem)
    except (AttributeError, KeyError, TypeError, ValueError):
        return None
    return lambda arrays: launch(arrays, grid, block, stream, shared)


class LaunchPlans:
    """The launches of a CUDA function per accepted argument shapes and dtypes."""

    def __init__(self, namespace: dict, kernels: list):
        self.kernels = [(namespace[k.name], k.grid, k.block) for k in kernels]
        self.plans: dict = {}

    def get(self, arrays):
        """The configured launches for ``arrays`` if arrays of their shapes and dtypes were
        accepted before, else None."""
        return self.plans.get(_key(arrays))

    def accept(self, arrays, env: dict) -> list:
        """Record that ``arrays`` passed the full check (``env``: the symbolic sizes it
        bound); return their launches."""
        launches = [_Launch(kernel[_dims(grid, env), _dims(block, env)])
                    for kernel, grid, block in self.kernels]
        if len(self.plans) >= MAX_PLANS:
            self.plans.clear()
        self.plans[_key(arrays)] = launches
        return launches


def _dims(exprs, env):
    dims = tuple(eval_int(e, env) for e in exprs)
    return dims[0] if len(dims) == 1 else dims
