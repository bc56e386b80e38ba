"""The ``simulator`` fixture for the dlight rules' tests: the CUDA backend's child process
that runs a kernel on Numba's CUDA simulator (see tests/backend/numba_cuda/conftest.py)."""

from __future__ import annotations

import pytest

from tests.backend.numba_cuda.conftest import Simulator


@pytest.fixture(scope="session")
def simulator():
    sim = Simulator()
    yield sim
    sim.close()
