"""Small real data sets for the course notebooks.

Example::

    from mlckit.datasets import fashion_mnist
    test = fashion_mnist("test")
    test.images.shape, test.labels[:3], test.class_names[test.labels[0]]
"""

from .fashion_mnist import CLASS_NAMES, DatasetNotFoundError, FashionMNIST, fashion_mnist

__all__ = ["CLASS_NAMES", "DatasetNotFoundError", "FashionMNIST", "fashion_mnist"]
