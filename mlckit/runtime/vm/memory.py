"""Where the VM keeps its tensors: host memory, or the GPU's for a CUDA device with a GPU.

A VM on ``mlckit.cpu()`` — and on ``mlckit.cuda(0)`` where there is no GPU, since its kernels
then run on the CPU or the simulator — keeps tensors as NumPy arrays (:class:`HostMemory`).
A VM on ``mlckit.cuda(0)`` with a GPU keeps them in device memory (:class:`DeviceMemory`), as
TVM does: ``alloc_storage`` allocates on the device and tensors are views into it; an input
is copied host → device once when the function is called (a device NDArray is taken as it
is); the constants are copied once, when the VM is made; the results stay on the device as
NDArrays (``.numpy()`` copies back).  Kernels then run on the device arrays without a copy;
a NumPy library function (``R.call_dps_packed("mlckit.lib.matmul", ...)``, lowered for a CPU
target) runs on host copies, its output copied back (:meth:`DeviceMemory.on_host`).

``copies_in`` / ``copies_out`` count the transfers the VM itself makes (the tests read them).

Example::

    vm = relax.VirtualMachine(relax.build(mod, target="cuda"), mlckit.cuda(0))
    out = vm["main"](x, w)          # x, w: NumPy arrays, copied to the GPU once
    out.numpy()                     # the result, copied back now
"""

from __future__ import annotations

import numpy as np

from ..ndarray import aligned_empty

__all__ = ["DeviceMemory", "HostMemory", "is_tensor", "vm_memory"]


def is_tensor(value) -> bool:
    """Whether ``value`` is a tensor inside a VM: a NumPy array or a device array."""
    return isinstance(value, np.ndarray) or (
        hasattr(type(value), "__cuda_array_interface__") or
        hasattr(value, "__cuda_array_interface__")) and hasattr(value, "shape")


class HostMemory:
    """Tensors as NumPy arrays in host memory."""

    on_device = False

    def __init__(self, device):
        self.device = device
        self.copies_in = self.copies_out = 0

    def empty_bytes(self, nbytes: int):
        return aligned_empty(nbytes, np.uint8)

    def constant(self, value):
        return value


class DeviceMemory:
    """Tensors as device arrays of ``cuda`` (``numba.cuda``, or a stand-in with its
    ``to_device`` / ``device_array`` in tests)."""

    on_device = True

    def __init__(self, device, cuda):
        self.device = device
        self.cuda = cuda
        self.copies_in = self.copies_out = 0
        self._constants: dict = {}  # id(host constant) -> (host constant, device copy)

    def empty_bytes(self, nbytes: int):
        return self.cuda.device_array(nbytes, dtype=np.uint8)

    def to_device(self, host: np.ndarray):
        self.copies_in += 1
        return self.cuda.to_device(np.ascontiguousarray(host))

    def to_host(self, array) -> np.ndarray:
        self.copies_out += 1
        return array.copy_to_host()

    def on_host(self, func):
        """``func(*inputs, out)``, a library function reading and writing NumPy arrays, called
        on host copies of the device arrays among its inputs and a host array for ``out``
        (the last argument), copied to the device afterwards.  Without this it would write
        into a temporary host copy: NumPy reads a device array only by copying it."""

        def on_device(a):
            return is_tensor(a) and not isinstance(a, np.ndarray)

        def call_on_host(*inputs_and_out):
            *inputs, out = inputs_and_out
            host = [self.to_host(a) if on_device(a) else a for a in inputs]
            # the output is only written (destination-passing style): no copy to read it
            host_out = np.empty(out.shape, out.dtype) if on_device(out) else out
            result = func(*host, host_out)
            if host_out is not out:
                self.copies_in += 1
                out.copy_to_device(host_out)
            return result

        call_on_host.__name__ = getattr(func, "__name__", "call_on_host")
        return call_on_host

    def constant(self, value):
        """A constant's device copy, made once per VM."""
        if not isinstance(value, np.ndarray):
            return value
        found = self._constants.get(id(value))
        if found is None:
            found = self._constants[id(value)] = (value, self.to_device(value))
        return found[1]


def vm_memory(device, cuda=None):
    """The memory a VM on ``device`` keeps its tensors in (``cuda``: the device-array module
    to use, by default ``numba.cuda`` when a GPU is there)."""
    if getattr(device, "device_type", 1) == 2:
        if cuda is None:
            from mlckit.runtime import cuda_driver

            if cuda_driver.has_gpu():
                cuda = cuda_driver.numba_cuda()
        if cuda is not None:
            return DeviceMemory(device, cuda)
    return HostMemory(device)
