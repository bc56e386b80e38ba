"""Shared programs of the notebook-tool tests, parsed once per test."""

import pytest

from mlckit.script import from_source

from .programs import MLP_MODULE


@pytest.fixture
def mlp():
    """The course's end-to-end MLP module (notebook 03's MyModule)."""
    return from_source(MLP_MODULE)
