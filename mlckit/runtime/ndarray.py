"""NDArray: a thin NumPy-backed tensor with a device, as ``tvm.nd.NDArray``.

Example::

    import mlckit as tvm
    a = tvm.nd.array(np.ones((2, 3), "float32"), tvm.cpu())
    a.shape, a.dtype          # ((2, 3), 'float32')
    a.numpy()                 # a copy, as in TVM
"""

from __future__ import annotations

import numpy as np

from mlckit.error import TVMValueError

from .device import Device, cpu
from .device import device as _device

__all__ = ["NDArray", "array", "empty", "from_dlpack"]


class NDArray:
    """A tensor in host memory with a :class:`Device` tag.

    Kernels built by mlckit write into NDArrays in place (destination passing).
    """

    __slots__ = ("_array", "device")

    def __init__(self, arr: np.ndarray, device: Device | None = None):
        self._array = arr
        self.device = device or cpu()

    # -- TVM's API -------------------------------------------------------------------
    @property
    def shape(self) -> tuple:
        return tuple(self._array.shape)

    @property
    def dtype(self) -> str:
        return str(self._array.dtype)

    @property
    def ndim(self) -> int:
        return self._array.ndim

    def numpy(self) -> np.ndarray:
        """A NumPy copy of the data."""
        return self._array.copy()

    asnumpy = numpy

    def copyfrom(self, source) -> NDArray:
        """Overwrite the data with ``source`` (array-like of the same shape)."""
        src = source._array if isinstance(source, NDArray) else np.asarray(source)
        if tuple(src.shape) != self.shape:
            raise TVMValueError(f"copyfrom: shape {tuple(src.shape)} does not match {self.shape}")
        self._array[...] = src
        return self

    def copyto(self, target) -> NDArray:
        """Copy into another NDArray, or to a new NDArray on the Device ``target``."""
        if isinstance(target, NDArray):
            target.copyfrom(self)
            return target
        return NDArray(self._array.copy(), _device(target))

    def same_as(self, other) -> bool:
        return self is other

    # -- interop -----------------------------------------------------------------------
    def _mlckit_numpy_view(self) -> np.ndarray:
        """The array itself (no copy): what kernels read and write."""
        return self._array

    def __array__(self, dtype=None, copy=None):
        return self._array if dtype is None else self._array.astype(dtype)

    def __dlpack__(self, stream=None, **kwargs):
        return self._array.__dlpack__(**kwargs) if kwargs else self._array.__dlpack__()

    def __dlpack_device__(self):
        return self._array.__dlpack_device__()

    def __repr__(self) -> str:
        return f"<mlckit.nd.NDArray shape={self.shape}, {self.device}>\n{self._array!r}"

    def __str__(self) -> str:
        return str(self._array)

    def _repr_html_(self) -> str | None:
        """Shape, dtype, device and values as HTML in a notebook (``mlckit.notebook.reprs``, imported only now); None,
        so that the text form shows, when the notebook layer cannot be imported."""
        try:
            from mlckit.notebook.reprs import ndarray_html
        except ImportError:
            return None
        return ndarray_html(self)


def array(arr, device: Device | str | None = None, dtype=None) -> NDArray:
    """A new NDArray holding a copy of ``arr`` (``mlckit.nd.array(np_arr, mlckit.cpu())``)."""
    if isinstance(arr, NDArray):
        arr = arr._array
    data = np.array(arr, dtype=dtype, copy=True, order="C")
    return NDArray(data, _device(device) if device is not None else cpu())


def empty(shape, dtype="float32", device: Device | str | None = None) -> NDArray:
    """An uninitialised NDArray (``mlckit.nd.empty((n,), "float32")``)."""
    shape = (shape,) if isinstance(shape, int) else tuple(int(s) for s in shape)
    return NDArray(np.empty(shape, dtype=dtype), _device(device) if device is not None else cpu())


def from_dlpack(obj) -> NDArray:
    """An NDArray sharing memory with a DLPack-capable CPU object."""
    return NDArray(np.from_dlpack(obj))
