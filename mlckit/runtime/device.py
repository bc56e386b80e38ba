"""Devices, named as in TVM: ``mlckit.cpu()``, ``mlckit.cuda(0)``, ``mlckit.device("cuda")``.

A Device is a (type, id) pair.  ``mlckit.nd.array(x, mlckit.cuda(0))`` puts the data in GPU
memory when there is a GPU, else keeps it in host memory (the CUDA backend then runs on the
CPU or on Numba's simulator).

Example::

    dev = mlckit.cpu()
    str(dev)          # 'cpu(0)'
"""

from __future__ import annotations

from dataclasses import dataclass

from mlckit.error import TVMValueError

# DLPack's device type codes, which TVM uses too.
DEVICE_TYPES = {"cpu": 1, "llvm": 1, "cuda": 2, "gpu": 2, "cuda_host": 3}
_NAMES = {1: "cpu", 2: "cuda", 3: "cuda_host"}


@dataclass(frozen=True)
class Device:
    """A device: ``device_type`` (DLPack code: 1 cpu, 2 cuda) and ``device_id``.

    >>> import mlckit as tvm
    >>> dev = tvm.cpu()
    >>> dev, dev.device_type, dev.device_id, dev.exist
    (cpu(0), 1, 0, True)
    """

    device_type: int = 1
    device_id: int = 0

    kDLCPU = 1
    kDLCUDA = 2

    @property
    def name(self) -> str:
        return _NAMES.get(self.device_type, f"device{self.device_type}")

    @property
    def exist(self) -> bool:
        """Whether the device is there (CUDA: a GPU Numba can see)."""
        if self.device_type == 1:
            return True
        from . import cuda_driver

        if not cuda_driver.has_gpu():  # asked without importing numba.cuda where possible
            return False
        from numba import cuda

        return self.device_id < len(cuda.gpus)

    def sync(self) -> None:
        """Wait for the device (a no-op on the CPU)."""
        if self.device_type == 2 and self.exist:  # a real GPU: wait for its launches
            from numba import cuda

            cuda.synchronize()

    def __str__(self) -> str:
        return f"{self.name}({self.device_id})"

    def __repr__(self) -> str:
        return str(self)

    def _dlpack_device(self) -> tuple[int, int]:
        return (self.device_type, self.device_id)


def device(dev_type, dev_id: int = 0) -> Device:
    """A Device from a name (``"cpu"``, ``"cuda"``, ``"llvm"``), a DLPack code or a Device.

    >>> import mlckit as tvm
    >>> tvm.device("llvm"), tvm.device("cuda", 1), tvm.device(1)
    (cpu(0), cuda(1), cpu(0))
    """
    if isinstance(dev_type, Device):
        return dev_type
    if isinstance(dev_type, str):
        key = dev_type.split()[0].split(":")[0].lower()
        if key not in DEVICE_TYPES:
            raise TVMValueError(f"unknown device {dev_type!r} (known: cpu, cuda, llvm)")
        return Device(DEVICE_TYPES[key], dev_id)
    return Device(int(dev_type), dev_id)


def cpu(dev_id: int = 0) -> Device:
    """The CPU (``mlckit.cpu()``).

    >>> import mlckit as tvm
    >>> tvm.cpu()
    cpu(0)
    """
    return Device(1, dev_id)


def cuda(dev_id: int = 0) -> Device:
    """CUDA GPU ``dev_id`` (``mlckit.cuda()``); ``.exist`` says whether there is one.

    >>> import mlckit as tvm
    >>> tvm.cuda(0)
    cuda(0)
    """
    return Device(2, dev_id)


gpu = cuda
