"""mlckit.datasets.fashion_mnist: loading, MLCKIT_DATA, the message when missing."""

import gzip
import importlib

import numpy as np
import pytest

from mlckit.datasets import fashion_mnist
from mlckit.models import fashion_mlp

fm = importlib.import_module("mlckit.datasets.fashion_mnist")  # the module, not the function


def _write_idx(path, array):
    header = bytes([0, 0, 0x08, array.ndim]) + b"".join(
        int(d).to_bytes(4, "big") for d in array.shape)
    with gzip.open(path, "wb") as f:
        f.write(header + array.astype(np.uint8).tobytes())


def test_loads_from_mlckit_data(tmp_path, monkeypatch):
    images = np.arange(2 * 28 * 28).reshape(2, 28, 28) % 256
    _write_idx(tmp_path / "t10k-images-idx3-ubyte.gz", images)
    _write_idx(tmp_path / "t10k-labels-idx1-ubyte.gz", np.array([3, 9]))
    monkeypatch.setenv("MLCKIT_DATA", str(tmp_path))
    monkeypatch.setattr(fm, "DEBIAN_DIR", tmp_path / "absent")
    test = fashion_mnist("test")
    assert test.images.shape == (2, 28, 28) and test.images.dtype == np.float32
    np.testing.assert_allclose(test.images * 255, images, atol=1e-4)
    assert list(test.labels) == [3, 9] and test.class_names[9] == "Ankle boot"
    assert test.flat().shape == (2, 784)


def test_missing_data_says_how_to_get_it(tmp_path, monkeypatch):
    monkeypatch.setenv("MLCKIT_DATA", str(tmp_path))
    monkeypatch.setattr(fm, "DEBIAN_DIR", tmp_path / "absent")
    with pytest.raises(FileNotFoundError, match=r"apt-get install dataset-fashion-mnist.*"
                                                r"MLCKIT_DATA"):
        fashion_mnist("train")
    with pytest.raises(ValueError, match="split"):
        fashion_mnist("validation")


def test_shipped_weights_shapes():
    p = fashion_mlp()
    assert {k: v.shape for k, v in p.items()} == {"w0": (128, 784), "b0": (128,),
                                                  "w1": (10, 128), "b1": (10,)}
    assert all(v.dtype == np.float32 for v in p.values())
