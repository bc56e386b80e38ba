"""Golden files: the readable lnumpy and Numba source of mm_relu must not change silently.

To accept an intended change: MLCKIT_UPDATE_GOLDEN=1 pytest tests/backend/test_golden.py
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mlckit.backend import lnumpy, numba_cpu

from . import kernels as K

GOLDEN = Path(__file__).parent / "golden"
HEADER = "# ruff: noqa - golden file of tests/backend/test_golden.py (generated source)\n"


@pytest.mark.parametrize(
    "filename, make",
    [
        ("mm_relu.lnumpy.py", lambda: str(lnumpy.to_source(K.mm_relu))),
        ("mm_relu.numba.py", lambda: numba_cpu.to_source(K.mm_relu)),
    ],
)
def test_mm_relu_source_matches_golden_file(filename, make):
    path = GOLDEN / filename
    text = HEADER + make()
    if os.environ.get("MLCKIT_UPDATE_GOLDEN"):
        path.write_text(text)
    assert text == path.read_text(), f"generated source differs from {path}"
