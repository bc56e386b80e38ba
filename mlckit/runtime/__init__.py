"""The runtime: devices, NDArrays, and built modules' calling conventions.

Example::

    from mlckit.runtime import cpu, tensor
    a = tensor(np.zeros(4, "float32"), cpu())     # also mlckit.nd.array
"""

from . import ndarray
from .device import Device, cpu, cuda, device, gpu
from .module import BenchmarkResult, Executable, Module
from .ndarray import NDArray, empty  # empty: TVM 0.27's tvm.runtime.empty(shape, dtype, dev)
from .ndarray import array as tensor  # TVM's newer name: tvm.runtime.tensor(np_array, dev)

Tensor = NDArray  # TVM's newer name of NDArray

__all__ = ["BenchmarkResult", "Device", "Executable", "Module", "NDArray", "Tensor", "cpu",
           "cuda", "device", "empty", "gpu", "ndarray", "tensor"]
