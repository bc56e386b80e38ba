"""The runtime: devices, NDArrays, and built modules' calling conventions.

Example::

    from mlckit.runtime import cpu, ndarray
    a = ndarray.array(np.zeros(4, "float32"), cpu())
"""

from . import ndarray
from .device import Device, cpu, cuda, device, gpu
from .ndarray import NDArray

__all__ = ["Device", "NDArray", "cpu", "cuda", "device", "gpu", "ndarray"]
