"""Fashion-MNIST (Zalando, MIT licence): 28x28 grey images of clothes in 10 classes.

The files are the original IDX files (gzipped or not), looked up in this order:

1. the directory named by the environment variable ``MLCKIT_DATA`` (the files directly in
   it, or in its ``fashion-mnist/`` sub-directory);
2. ``/usr/share/datasets/fashion-mnist``, where Debian's ``dataset-fashion-mnist`` package
   installs them (``sudo apt-get install dataset-fashion-mnist``).

Example::

    test = fashion_mnist("test")          # 10,000 images
    test.images.shape                     # (10000, 28, 28), float32 in [0, 1]
    test.labels[:5]                       # int64 class indices
    test.class_names[test.labels[0]]      # 'Ankle boot'
"""

from __future__ import annotations

import gzip
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from mlckit.error import TVMError, TVMValueError

CLASS_NAMES = ("T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt",
               "Sneaker", "Bag", "Ankle boot")
DEBIAN_DIR = Path("/usr/share/datasets/fashion-mnist")
_FILES = {"train": ("train-images-idx3-ubyte", "train-labels-idx1-ubyte"),
          "test": ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte")}


class DatasetNotFoundError(TVMError, FileNotFoundError):
    """The data files are not on this machine (the message says how to get them).

    >>> from mlckit.datasets import DatasetNotFoundError
    >>> issubclass(DatasetNotFoundError, FileNotFoundError)
    True
    """


@dataclass
class FashionMNIST:
    """One split: ``images`` (N, 28, 28) float32 in [0, 1], ``labels`` (N,) int64.

    The test split, as the course's end-to-end chapter uses it::

        from mlckit.datasets import fashion_mnist
        test = fashion_mnist("test")
        test.images.shape, test.labels[:3]      # (10000, 28, 28), array([9, 2, 1])
    """

    images: np.ndarray
    labels: np.ndarray
    split: str
    class_names: tuple = CLASS_NAMES

    def __len__(self) -> int:
        return len(self.labels)

    def flat(self) -> np.ndarray:
        """The images as (N, 784) rows, the MLP's input."""
        return self.images.reshape(len(self.images), -1)


def _candidates() -> list[Path]:
    dirs = []
    env = os.environ.get("MLCKIT_DATA")
    if env:
        dirs += [Path(env), Path(env) / "fashion-mnist"]
    dirs.append(DEBIAN_DIR)
    return dirs


def _find(stem: str) -> Path | None:
    for d in _candidates():
        for name in (stem + ".gz", stem):
            if (d / name).is_file():
                return d / name
    return None


def _read_idx(path: Path) -> np.ndarray:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rb") as f:
        data = f.read()
    magic = int.from_bytes(data[0:4], "big")
    ndim = magic & 0xFF
    if magic >> 8 != 0x08:  # unsigned bytes
        raise TVMValueError(f"{path}: not an IDX file of unsigned bytes (magic {magic:#x})")
    dims = [int.from_bytes(data[4 + 4 * i: 8 + 4 * i], "big") for i in range(ndim)]
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim).reshape(dims)


def fashion_mnist(split: str = "test") -> FashionMNIST:
    """Load the ``"train"`` (60,000) or ``"test"`` (10,000) split.

    Raises ``DatasetNotFoundError`` with instructions when the files are missing.

    Example::

        test = fashion_mnist("test")
        x = test.flat()[:64]          # a batch for vm["main"]
    """
    if split not in _FILES:
        raise TVMValueError(f"split must be 'train' or 'test', got {split!r}")
    img_stem, lbl_stem = _FILES[split]
    img_path, lbl_path = _find(img_stem), _find(lbl_stem)
    if img_path is None or lbl_path is None:
        looked = ", ".join(str(d) for d in _candidates())
        raise DatasetNotFoundError(
            f"Fashion-MNIST ({split}) was not found (looked in: {looked}). Install Debian's "
            "package (`sudo apt-get install dataset-fashion-mnist`), or download the four "
            "*-ubyte.gz files from https://github.com/zalandoresearch/fashion-mnist into a "
            "directory and set MLCKIT_DATA to it.")
    images = _read_idx(img_path).astype(np.float32) / np.float32(255.0)
    labels = _read_idx(lbl_path).astype(np.int64)
    return FashionMNIST(images, labels, split)
