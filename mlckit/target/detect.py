"""``Target.from_device``: the target that compiles for a device present on this machine, as
TVM's ``tvm.target.Target.from_device``.

A detector per device type turns a present device into its target: the CPU gives
``{"kind": "llvm"}`` (with the host's CPU name, as TVM gives ``mcpu``); a CUDA GPU a ``cuda``
target with its architecture and limits read from the device.  A device that is not there
(``tvm.cuda(0)`` without a GPU) is refused, as TVM refuses it: the CUDA backend's no-GPU
modes are chosen with ``Target("cuda")``, not detected.

Example::

    Target.from_device(tvm.cpu())          # llvm -mcpu=...
    Target.from_device("cuda")             # on a machine with a GPU: cuda -arch=sm_86 ...
"""

from __future__ import annotations

from collections.abc import Callable

from mlckit.error import TVMValueError
from mlckit.ffi import get_global_func

# DLPack device type codes -> names (mlckit's Device uses them)
_TYPE_NAMES = {1: "cpu", 2: "cuda", 4: "opencl", 7: "vulkan", 8: "metal", 10: "rocm"}


def _detect_cpu(dev) -> dict:
    import llvmlite.binding as llvm  # Numba's LLVM: the CPU name Numba compiles for

    return {"kind": "llvm", "mcpu": llvm.get_host_cpu_name()}


def _detect_cuda(dev) -> dict:
    from numba import cuda  # only reached for a present GPU, which imported it already

    gpu = cuda.gpus[dev.device_id]  # forwards the device's attributes
    major, minor = gpu.compute_capability
    return {"kind": "cuda", "arch": f"sm_{major}{minor}",
            "max_threads_per_block": int(gpu.MAX_THREADS_PER_BLOCK),
            "max_shared_memory_per_block": int(gpu.MAX_SHARED_MEMORY_PER_BLOCK),
            "thread_warp_size": int(gpu.WARP_SIZE)}


SUPPORTED_DEVICE: dict[str, Callable] = {"cpu": _detect_cpu, "cuda": _detect_cuda}


def register_device_target_detector(device_type: str, detector: Callable) -> None:
    """Make ``detector(device) -> target dict`` the detector of ``device_type`` ("rocm" …).

    Teach ``Target.from_device`` a device of one's own::

        register_device_target_detector("rocm", lambda dev: {"kind": "rocm", "mcpu": "gfx90a"})
    """
    SUPPORTED_DEVICE[device_type] = detector


def detect_target_from_device(dev) -> dict:
    """The target dict for the device ``dev`` (a Device, or a name such as ``"cuda:0"``)."""
    if isinstance(dev, str):
        # Devices are made by the runtime, above this layer: it registers how.
        dev = get_global_func("runtime.device")(dev)
    device_type = _TYPE_NAMES.get(getattr(dev, "device_type", None))
    if device_type not in SUPPORTED_DEVICE:
        raise TVMValueError(f"Target.from_device({dev!r}): detecting a target is supported for "
                            f"the devices {', '.join(sorted(SUPPORTED_DEVICE))}, not {dev!r}")
    if not dev.exist:
        raise TVMValueError(
            f"Target.from_device({dev}): the device {dev} is not present on this machine (no "
            "GPU or no CUDA driver was found). To compile for CUDA without a GPU, name the "
            "target: Target(\"cuda\") or a tag such as Target(\"nvidia/geforce-rtx-3090\")")
    return SUPPORTED_DEVICE[device_type](dev)
