"""Session-wide test settings."""

from __future__ import annotations

import pytest


def pytest_collection_modifyitems(config, items):
    """``-m gpu`` tests need a real GPU: without one they are skipped, saying why."""
    gpu_items = [item for item in items if item.get_closest_marker("gpu")]
    if not gpu_items:
        return
    from mlckit.runtime import cuda_driver

    if not cuda_driver.has_gpu():
        skip = pytest.mark.skip(reason="needs a CUDA GPU (numba.cuda finds none here)")
        for item in gpu_items:
            item.add_marker(skip)
