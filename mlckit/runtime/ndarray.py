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
from mlckit.ffi.views import html_view

from .device import Device, cpu
from .device import device as _device

__all__ = ["ALLOC_ALIGNMENT", "NDArray", "aligned_copy", "aligned_empty", "array", "empty",
           "from_dlpack"]

#: bytes: where TVM's allocator starts every tensor (``kAllocAlignment``).  NumPy starts large
#: arrays 16 bytes into a page, so a 32-byte vector load straddles two cache lines one time in
#: two; the tiled, vectorized matmul runs ~1.2-1.5x faster on 64-byte aligned arrays.
ALLOC_ALIGNMENT = 64


def aligned_empty(shape, dtype="float32") -> np.ndarray:
    """An uninitialised C-contiguous NumPy array starting on an ``ALLOC_ALIGNMENT`` boundary
    (a view into a slightly larger byte array, its ``base``).

    Example::

        a = aligned_empty((512, 512), "float32")
        a.ctypes.data % 64        # 0
    """
    shape = (shape,) if isinstance(shape, int) else tuple(int(s) for s in shape)
    dtype = np.dtype(dtype)
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    raw = np.empty(nbytes + ALLOC_ALIGNMENT, dtype=np.uint8)
    offset = -raw.ctypes.data % ALLOC_ALIGNMENT
    return raw[offset:offset + nbytes].view(dtype).reshape(shape)


def _on_gpu(device: Device) -> bool:
    """Whether an array for ``device`` lives in GPU memory (a CUDA device, and a real GPU)."""
    if device.device_type != 2:
        return False
    from . import cuda_driver

    return cuda_driver.has_gpu()


class NDArray:
    """A tensor with a :class:`Device` tag: in host memory, or, for ``mlckit.cuda(0)`` on a
    machine with a CUDA GPU, in device memory (a ``numba.cuda`` device array).  Without a
    GPU a CUDA NDArray stays in host memory (the CPU and simulator modes run on it).

    Kernels built by mlckit write into NDArrays in place (destination passing).

    >>> import numpy as np
    >>> import mlckit as tvm
    >>> a = tvm.nd.array(np.arange(3, dtype="float32"))
    >>> a.shape, a.dtype, a.device
    ((3,), 'float32', cpu(0))
    >>> a.numpy()
    array([0., 1., 2.], dtype=float32)
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
        """A NumPy copy of the data (copied from the GPU for a device array)."""
        if not isinstance(self._array, np.ndarray):
            return self._array.copy_to_host()
        return self._array.copy()

    asnumpy = numpy

    def copyfrom(self, source) -> NDArray:
        """Overwrite the data with ``source`` (array-like of the same shape)."""
        src = source._array if isinstance(source, NDArray) else np.asarray(source)
        if tuple(src.shape) != self.shape:
            raise TVMValueError(f"copyfrom: shape {tuple(src.shape)} does not match {self.shape}")
        if not isinstance(self._array, np.ndarray):  # into GPU memory (from host or GPU)
            self._array.copy_to_device(np.ascontiguousarray(src, dtype=self.dtype)
                                       if isinstance(src, np.ndarray) else src)
        elif not isinstance(src, np.ndarray):  # from GPU memory
            self._array[...] = src.copy_to_host()
        else:
            self._array[...] = src
        return self

    def copyto(self, target) -> NDArray:
        """Copy into another NDArray, or to a new NDArray on the Device ``target``."""
        if isinstance(target, NDArray):
            target.copyfrom(self)
            return target
        return array(self, _device(target))

    def same_as(self, other) -> bool:
        return self is other

    # -- interop -----------------------------------------------------------------------
    def _mlckit_numpy_view(self) -> np.ndarray:
        """The array itself (no copy): what kernels read and write."""
        if not isinstance(self._array, np.ndarray):
            from mlckit.error import TVMTypeError

            raise TVMTypeError(
                f"this array lives in the memory of {self.device}: a CPU kernel cannot use it; "
                "copy it with .numpy() or .copyto(mlckit.cpu())")
        return self._array

    def _mlckit_device_array(self):
        """The ``numba.cuda`` device array behind a GPU NDArray, else None."""
        return None if isinstance(self._array, np.ndarray) else self._array

    def __array__(self, dtype=None, copy=None):
        host = self._array if isinstance(self._array, np.ndarray) else self.numpy()
        return host if dtype is None else host.astype(dtype)

    def __dlpack__(self, stream=None, **kwargs):
        return self._array.__dlpack__(**kwargs) if kwargs else self._array.__dlpack__()

    def __dlpack_device__(self):
        return self._array.__dlpack_device__()

    def __repr__(self) -> str:
        return f"<mlckit.nd.NDArray shape={self.shape}, {self.device}>\n{np.asarray(self)!r}"

    def __str__(self) -> str:
        return str(np.asarray(self))

    def _repr_html_(self) -> str | None:
        """Shape, dtype, device and values as HTML in a notebook (installed by the notebook layer); None,
        so that the text form shows, when it is not there."""
        return html_view(self)


#: the element types a tensor holds (TVM's: no Python objects, strings or complex numbers)
TENSOR_DTYPES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                 "uint64", "float16", "float32", "float64")


def _check_dtype(where: str, dtype) -> np.dtype:
    """``dtype`` as a NumPy dtype, or a TVMValueError naming it (a typo such as "flaot32")."""
    try:
        np_dtype = np.dtype(dtype)
    except (TypeError, ValueError):
        np_dtype = None
    if np_dtype is None or np_dtype.name not in TENSOR_DTYPES:
        shown = dtype if isinstance(dtype, str) else getattr(np_dtype, "name", dtype)
        raise TVMValueError(f"{where}: unknown dtype {shown!r}; a tensor holds one of "
                            f"{', '.join(TENSOR_DTYPES)}")
    return np_dtype


def _as_numbers(arr, dtype) -> np.ndarray:
    """``arr`` as a NumPy array of numbers, or a TVMValueError saying why it is not one."""
    if dtype is not None:
        dtype = _check_dtype("mlckit.nd.array", dtype)
    try:
        source = np.asarray(arr, dtype=dtype)
    except ValueError as err:
        if "inhomogeneous" in str(err) or "sequence" in str(err):
            raise TVMValueError(
                "mlckit.nd.array: the data is ragged (nested lists of different lengths); a "
                "tensor is rectangular: give every row the same length") from None
        raise TVMValueError(f"mlckit.nd.array: the data cannot be converted to "
                            f"{dtype or 'numbers'} ({err})") from None
    except TypeError:
        raise TVMValueError(f"mlckit.nd.array: cannot make a tensor of a "
                            f"{type(arr).__name__}") from None
    if source.dtype.name not in TENSOR_DTYPES:
        raise TVMValueError(
            f"mlckit.nd.array: the data has element type {source.dtype.name!r} "
            f"({'Python objects' if source.dtype.kind == 'O' else 'not numbers'}); a tensor "
            f"holds one of {', '.join(TENSOR_DTYPES)}")
    return source


def aligned_copy(arr: np.ndarray) -> np.ndarray:
    """A C-contiguous copy of ``arr`` starting on an ``ALLOC_ALIGNMENT`` boundary.

    Example::

        aligned_copy(np.ones(1000, "float32")).ctypes.data % 64     # 0
    """
    data = aligned_empty(arr.shape, arr.dtype)
    data[...] = arr
    return data


def array(arr, device: Device | str | None = None, dtype=None) -> NDArray:
    """A new NDArray holding a copy of ``arr`` (``mlckit.nd.array(np_arr, mlckit.cpu())``), its
    data 64-byte aligned as TVM's.  ``tvm.runtime.tensor`` is TVM 0.27's name.

    >>> import numpy as np
    >>> import mlckit as tvm
    >>> x = np.ones((2, 2), dtype="float32")
    >>> a = tvm.runtime.tensor(x)
    >>> a.numpy() is x, np.array_equal(a.numpy(), x)
    (False, True)
    """
    if isinstance(arr, NDArray):
        arr = np.asarray(arr)
    source = _as_numbers(arr, dtype)
    dev = _device(device) if device is not None else cpu()
    data = aligned_copy(source)
    if _on_gpu(dev):
        from . import cuda_driver

        return NDArray(cuda_driver.numba_cuda().to_device(data), dev)
    return NDArray(data, dev)


def empty(shape, dtype="float32", device: Device | str | None = None) -> NDArray:
    """An uninitialised NDArray, 64-byte aligned (``mlckit.nd.empty``; TVM 0.27's
    ``tvm.runtime.empty``).

    >>> import mlckit as tvm
    >>> out = tvm.runtime.empty((2, 3), "float32", tvm.cpu())
    >>> out.shape, out.dtype
    ((2, 3), 'float32')
    """
    shape = _check_shape(shape)
    dtype = _check_dtype("mlckit.nd.empty", dtype).name
    dev = _device(device) if device is not None else cpu()
    if _on_gpu(dev):
        from . import cuda_driver

        return NDArray(cuda_driver.numba_cuda().device_array(shape, dtype=dtype), dev)
    return NDArray(aligned_empty(shape, dtype), dev)


def _check_shape(shape) -> tuple:
    """``shape`` as a tuple of sizes >= 0, or a TVMValueError naming the bad size."""
    dims = (shape,) if isinstance(shape, (int, np.integer)) else shape
    try:
        dims = tuple(dims)
    except TypeError:
        raise TVMValueError(f"mlckit.nd.empty: shape must be a tuple of ints, got "
                            f"{type(shape).__name__}") from None
    sizes = []
    for axis, d in enumerate(dims):
        # ints, NumPy ints and integer constants (an IntImm of a shape) are sizes
        if isinstance(d, (bool, float, np.floating)) or not hasattr(d, "__int__"):
            raise TVMValueError(f"mlckit.nd.empty: dimension {axis} of shape {shape!r} is a "
                                f"{type(d).__name__}, not an int")
        if int(d) < 0:
            raise TVMValueError(f"mlckit.nd.empty: dimension {axis} of shape {shape!r} is "
                                f"{int(d)}; sizes cannot be negative")
        sizes.append(int(d))
    return tuple(sizes)


def from_dlpack(obj) -> NDArray:
    """An NDArray sharing memory with a DLPack-capable CPU object."""
    return NDArray(np.from_dlpack(obj))
