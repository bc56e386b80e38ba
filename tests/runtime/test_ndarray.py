"""mlckit.nd.NDArray and devices."""

from __future__ import annotations

import numpy as np
import pytest

import mlckit
from mlckit.runtime import Device, NDArray


def test_array_copies_and_reports_shape_dtype_device():
    src = np.arange(6, dtype="float32").reshape(2, 3)
    a = mlckit.nd.array(src, mlckit.cpu())
    src[0, 0] = 100
    assert isinstance(a, NDArray)
    assert a.shape == (2, 3) and a.dtype == "float32" and a.device == mlckit.cpu(0)
    np.testing.assert_array_equal(a.numpy(), np.arange(6, dtype="float32").reshape(2, 3))
    out = a.numpy()
    out[0, 0] = -1
    assert a.numpy()[0, 0] == 0  # numpy() is a copy, as in TVM


def test_copyfrom_copyto_and_dlpack():
    a = mlckit.nd.empty((3,), "int32")
    a.copyfrom(np.array([1, 2, 3], "int32"))
    b = a.copyto(mlckit.cpu())
    np.testing.assert_array_equal(np.from_dlpack(b), [1, 2, 3])
    assert a.__dlpack_device__() == (1, 0)
    with pytest.raises(ValueError, match="shape"):
        a.copyfrom(np.zeros(4))
    np.testing.assert_array_equal(np.asarray(a), [1, 2, 3])


def test_devices():
    assert str(mlckit.cpu()) == "cpu(0)" and str(mlckit.cuda(1)) == "cuda(1)"
    assert mlckit.device("cuda", 0) == mlckit.cuda(0) == Device(2, 0)
    assert mlckit.device("llvm") == mlckit.cpu()
    assert mlckit.cpu().exist
    with pytest.raises(ValueError, match="unknown device"):
        mlckit.device("tpu")


def test_import_mlckit_does_not_import_numba():
    import subprocess
    import sys

    code = "import sys, mlckit; mlckit.nd; mlckit.build; print('numba' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_arrays_start_on_64_byte_boundaries_as_tvms_do():
    # NumPy starts large arrays 16 bytes into a page; TVM's allocator aligns to 64
    for shape, dtype in (((512, 512), "float32"), ((3, 5), "int8"), ((), "float64")):
        a = mlckit.nd.array(np.ones(shape, dtype))
        e = mlckit.nd.empty(shape, dtype)
        for x in (a, e):
            view = x._mlckit_numpy_view()
            assert view.ctypes.data % mlckit.runtime.ndarray.ALLOC_ALIGNMENT == 0
            assert view.flags.c_contiguous and view.shape == shape and view.dtype == dtype
    np.testing.assert_array_equal(mlckit.nd.array([[1, 2], [3, 4]]).numpy(), [[1, 2], [3, 4]])
