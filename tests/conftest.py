"""Session-wide test settings."""

from __future__ import annotations

import os

import pytest
from hypothesis import settings

# CI (.ci/run sets CI) draws the same examples on every run, so a random find fails the change
# that makes it rather than a later, unrelated one; a developer's run draws new examples and
# keeps those that fail in .hypothesis/
settings.register_profile("ci", derandomize=True, database=None)
if os.environ.get("CI"):
    settings.load_profile("ci")


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
